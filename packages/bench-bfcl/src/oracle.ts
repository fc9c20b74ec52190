import { PyHashDict, type PyObject } from "@envace/python-text";
import type { AnswerCall } from "./checker/ast.js";
import type { FunctionDoc, SingleTurnEntry } from "./data.js";
import type { DecodedCall } from "./decode.js";

/**
 * The oracle: replay the reference answer as the model output. Each call keeps the answer
 * parameters its function's schema declares, each set to its first acceptable value (skipping
 * `""`, "may be omitted", and `None`); a parameter with no such value is left out; nested dicts
 * are resolved the same way key by key. A harness self-test: upstream's own checker does not
 * accept it on every entry (some references contradict their schema).
 */
export function oracleCalls(entry: Pick<SingleTurnEntry, "functions" | "answer">): DecodedCall[] {
  return (entry.answer ?? []).map((call) => oracleCall(call, entry.functions));
}

function oracleCall(call: AnswerCall, functions: readonly FunctionDoc[]): DecodedCall {
  const declared = functions.find((doc) => doc.name === call.name)?.parameters.properties;
  const args = new Map<string, PyObject>();
  for (const [param, acceptable] of call.params) {
    if (declared !== undefined && !Object.hasOwn(declared, param)) continue;
    const value = firstAcceptable(acceptable);
    if (value !== undefined) args.set(param, resolve(value));
  }
  return { name: call.name, args };
}

function firstAcceptable(acceptable: PyObject): PyObject | undefined {
  if (!Array.isArray(acceptable)) return acceptable;
  return acceptable.find((value) => value !== "" && value !== null);
}

function resolve(value: PyObject): PyObject {
  if (value instanceof PyHashDict) {
    const out = new PyHashDict();
    for (const [key, acceptable] of value) {
      const first = firstAcceptable(acceptable);
      if (first !== undefined) out.set(key, resolve(first));
    }
    return out;
  }
  if (Array.isArray(value)) return value.map(resolve);
  return value;
}
