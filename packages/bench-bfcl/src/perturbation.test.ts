import { type PyObject } from "@envace/python-text";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkAst } from "./checker/ast.js";
import { loadCategory } from "./data.js";
import type { MultiTurnEntry, SingleTurnEntry } from "./data.js";
import type { DecodedCall } from "./decode.js";
import { checkMultiTurn, oracleMultiTurnCalls } from "./multi-turn/checker.js";
import { createSession, EnvironmentSet } from "./multi-turn/runtime.js";
import { oracleCalls } from "./oracle.js";
import { parseExpression } from "./py/syntax.js";
import { unparse } from "./py/unparse.js";
import { missingDataNote, sharedDataDir } from "./shared-data.js";

const data = sharedDataDir();
if (!data) console.warn(missingDataNote("BFCL perturbation suite"));

async function entriesOf(category: string): Promise<SingleTurnEntry[]> {
  return (await loadCategory(join(data!, "bfcl"), category)) as SingleTurnEntry[];
}

function verdictOf(entry: SingleTurnEntry, output: DecodedCall[]): boolean {
  return checkAst({ category: entry.category, functions: entry.functions, output, answer: entry.answer! }).valid;
}

function withArgs(call: DecodedCall, edit: (args: Map<string, PyObject>) => void): DecodedCall {
  const args = new Map(call.args);
  edit(args);
  return { name: call.name, args };
}

function declaredType(entry: SingleTurnEntry, call: DecodedCall, param: string): string | undefined {
  return entry.functions.find((f) => f.name === call.name)?.parameters.properties[param]?.type;
}

/**
 * Perturbations of the oracle output, each applied to every entry it fits. The oracle itself
 * must pass on the entries used (simple_python, multiple, parallel are 100% oracle-clean), so a
 * rejection is caused by the perturbation.
 */
describe.skipIf(!data)("perturbed outputs are rejected", () => {
  const categories = ["simple_python", "multiple", "parallel"];

  it.each(categories)("%s: the unperturbed oracle passes every entry", async (category) => {
    const failures = (await entriesOf(category)).filter((entry) => !verdictOf(entry, oracleCalls(entry))).map((e) => e.id);
    expect(failures).toEqual([]);
  });

  const cases: [string, (entry: SingleTurnEntry, calls: DecodedCall[]) => DecodedCall[] | undefined][] = [
    [
      "wrong type (an integer parameter given as a string)",
      (entry, calls) => {
        const first = calls[0]!;
        const param = [...first.args.keys()].find((p) => declaredType(entry, first, p) === "integer" && typeof first.args.get(p) === "bigint");
        return param === undefined ? undefined : [withArgs(first, (args) => args.set(param, "not-a-number")), ...calls.slice(1)];
      },
    ],
    [
      "missing required parameter",
      (entry, calls) => {
        const first = calls[0]!;
        const required = entry.functions.find((f) => f.name === first.name)?.parameters.required ?? [];
        const param = required.find((p) => first.args.has(p));
        return param === undefined ? undefined : [withArgs(first, (args) => args.delete(param)), ...calls.slice(1)];
      },
    ],
    ["unexpected parameter", (_entry, calls) => [withArgs(calls[0]!, (args) => args.set("unexpected_param_xyz", 1n)), ...calls.slice(1)]],
    [
      "wrong value (a string parameter no alternative matches)",
      (entry, calls) => {
        const first = calls[0]!;
        const param = [...first.args.keys()].find((p) => declaredType(entry, first, p) === "string" && typeof first.args.get(p) === "string");
        return param === undefined ? undefined : [withArgs(first, (args) => args.set(param, "zz unrelated value zz")), ...calls.slice(1)];
      },
    ],
    ["renamed function", (_entry, calls) => [{ name: `${calls[0]!.name}_other`, args: calls[0]!.args }, ...calls.slice(1)]],
  ];

  for (const category of categories) {
    it.each(cases)(`${category}: %s`, async (_name, perturb) => {
      let tested = 0;
      const accepted: string[] = [];
      for (const entry of await entriesOf(category)) {
        const perturbed = perturb(entry, oracleCalls(entry));
        if (perturbed === undefined) continue;
        tested++;
        if (verdictOf(entry, perturbed)) accepted.push(entry.id);
      }
      expect(tested).toBeGreaterThan(0);
      expect(accepted).toEqual([]);
    });
  }

  it("parallel: a dropped call or an extra call is the wrong count", async () => {
    for (const entry of await entriesOf("parallel")) {
      const calls = oracleCalls(entry);
      expect(verdictOf(entry, calls.slice(0, -1))).toBe(false);
      expect(verdictOf(entry, [...calls, calls[0]!])).toBe(false);
    }
  });

  it("simple_python: an extra call is rejected", async () => {
    for (const entry of await entriesOf("simple_python")) {
      const calls = oracleCalls(entry);
      expect(verdictOf(entry, [...calls, calls[0]!])).toBe(false);
      expect(verdictOf(entry, [])).toBe(false);
    }
  });
});

/** Change the first string argument of a call: `cd(folder='x')` → `cd(folder='x_changed')`. */
function changeArgument(call: string): string | undefined {
  const tree = parseExpression(call);
  if (tree.kind !== "call") return undefined;
  const slots = [...tree.keywords.map((k) => k.value), ...tree.args];
  const target = slots.find((node) => node.kind === "constant" && typeof node.value === "string");
  if (target?.kind !== "constant") return undefined;
  target.value = `${target.value as string}_changed`;
  return unparse(tree);
}

describe.skipIf(!data)("multi-turn: a gold call with a changed argument is rejected", () => {
  it.each(["multi_turn_base", "multi_turn_miss_func"])("%s", async (category) => {
    const entries = (await loadCategory(join(data!, "bfcl"), category)) as MultiTurnEntry[];
    let tested = 0;
    const accepted: string[] = [];
    for (const entry of entries) {
      const calls = oracleMultiTurnCalls(entry).map((turn) => turn.map((step) => [...step]));
      // The first gold call whose result changes with its argument (some calls ignore an argument).
      let changed = false;
      for (const turn of calls) {
        for (const step of turn) {
          for (const [i, call] of step.entries()) {
            const edited = changeArgument(call);
            if (edited === undefined || changed) continue;
            const replay = (text: string): string => {
              const env = new EnvironmentSet({
                involvedClasses: entry.involvedClasses,
                initialConfig: entry.initialConfig,
                longContext: false,
                session: createSession(),
              });
              const before = calls.flat(2);
              for (const earlier of before.slice(0, before.indexOf(call))) env.execute(earlier);
              return env.execute(text);
            };
            if (replay(edited) === replay(call)) continue;
            step[i] = edited;
            changed = true;
          }
        }
      }
      if (!changed) continue;
      tested++;
      if (checkMultiTurn(entry, calls).valid) accepted.push(entry.id);
    }
    expect(tested).toBeGreaterThan(entries.length * 0.9);
    expect(accepted).toEqual([]);
  });
});
