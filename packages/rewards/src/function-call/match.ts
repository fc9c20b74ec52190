import { ACCEPT, reject } from "./types.js";
import type { ArgumentRules, ExpectedCall, FunctionCall, FunctionSignature, Rejection, Verdict } from "./types.js";

/**
 * Check one call against one expected call of a declared function, in this order: the name;
 * every required parameter present; every argument known to both the signature and the
 * reference, and accepted by `rules.checkArgument`; every reference parameter present unless
 * the reference lets it be omitted. The first failure is returned.
 */
export function checkCall<V, A, S>(signature: FunctionSignature<S>, call: FunctionCall<V>, expected: ExpectedCall<A>, rules: ArgumentRules<V, A, S>): Verdict {
  const name = rules.nameInOutput ? rules.nameInOutput(signature.name) : signature.name;
  if (call.name !== name) {
    return reject("wrong_func_name", `Function name ${quote(name)} not found in model output.`);
  }
  for (const param of signature.required) {
    if (!call.args.has(param)) return reject("missing_required", `Missing required parameter: ${quote(param)}.`);
  }
  for (const [param, value] of call.args) {
    if (!signature.params.has(param) || !expected.params.has(param)) {
      return reject("unexpected_param", `Unexpected parameter: ${quote(param)}.`);
    }
    const verdict = rules.checkArgument(param, value, expected.params.get(param)!, signature.params.get(param)!);
    if (!verdict.valid) return verdict;
  }
  for (const [param, acceptable] of expected.params) {
    if (!call.args.has(param) && !rules.mayOmit(acceptable)) {
      return reject("missing_optional", `Optional parameter ${quote(param)} not provided and not marked as optional.`);
    }
  }
  return ACCEPT;
}

/**
 * How a list of calls is matched against the reference:
 * - `single`: exactly one call, checked against the first declared function and the first expected call;
 * - `multiple`: as many calls as expected calls (one, in practice), the first checked against the
 *   first expected call, whose function is picked among several declared ones by name;
 * - `parallel`: as many calls as expected calls, in any order. Expected calls are taken in
 *   reference order and each claims the first still-unclaimed call that matches it. This greedy
 *   pairing is the upstream BFCL rule; it can reject an output that some other pairing accepts.
 */
export type MatchMode = "single" | "multiple" | "parallel";

export interface MatchInput<V, A, S> {
  readonly functions: readonly FunctionSignature<S>[];
  readonly calls: readonly FunctionCall<V>[];
  readonly expected: readonly ExpectedCall<A>[];
  readonly rules: ArgumentRules<V, A, S>;
}

export function matchCalls<V, A, S>(mode: MatchMode, input: MatchInput<V, A, S>): Verdict {
  switch (mode) {
    case "single":
      return matchSingle(input);
    case "multiple":
      return matchMultiple(input);
    case "parallel":
      return matchParallel(input);
  }
}

function wrongCount(calls: number, expected: number): Rejection {
  return reject("wrong_count", `Wrong number of functions: expected ${expected}, got ${calls}.`);
}

function matchSingle<V, A, S>({ functions, calls, expected, rules }: MatchInput<V, A, S>): Verdict {
  if (calls.length !== 1) return wrongCount(calls.length, 1);
  const signature = functions[0];
  const reference = expected[0];
  if (signature === undefined) return reject("unknown_function", "No function is declared.");
  if (reference === undefined) return reject("unknown_function", "The reference has no expected call.");
  return checkCall(signature, calls[0]!, reference, rules);
}

function matchMultiple<V, A, S>({ functions, calls, expected, rules }: MatchInput<V, A, S>): Verdict {
  if (calls.length !== expected.length) return wrongCount(calls.length, expected.length);
  const reference = expected[0];
  if (reference === undefined) return ACCEPT;
  const signature = functions.find((f) => f.name === reference.name);
  if (signature === undefined) return unknownFunction(reference.name);
  return checkCall(signature, calls[0]!, reference, rules);
}

function matchParallel<V, A, S>({ functions, calls, expected, rules }: MatchInput<V, A, S>): Verdict {
  if (calls.length !== expected.length) return wrongCount(calls.length, expected.length);
  const claimed = new Set<number>();
  for (const [expectedIndex, reference] of expected.entries()) {
    const signature = functions.find((f) => f.name === reference.name);
    if (signature === undefined) return unknownFunction(reference.name);
    const failures: Rejection[] = [];
    let found = false;
    for (const [index, call] of calls.entries()) {
      if (claimed.has(index)) continue;
      const verdict = checkCall(signature, call, reference, rules);
      if (verdict.valid) {
        claimed.add(index);
        found = true;
        break;
      }
      failures.push(verdict);
    }
    if (!found) {
      const open = calls.map((_, i) => i).filter((i) => !claimed.has(i));
      return reject(
        "cannot_find_match",
        `Could not find a matching function among index [${open.join(", ")}] of model output for index ${expectedIndex} of possible answers.`,
        failures,
      );
    }
  }
  return ACCEPT;
}

function unknownFunction(name: string): Rejection {
  return reject("unknown_function", `The reference calls ${quote(name)}, which is not among the declared functions.`);
}

function quote(text: string): string {
  return `'${text}'`;
}
