import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { alternativesRules, expectedCall, functionCall } from "./alternatives.js";
import { checkCall, matchCalls } from "./match.js";
import type { FunctionSignature } from "./types.js";

type Value = string | number | boolean;
const rules = alternativesRules<Value>({ equals: (a, b) => a === b, isOmissionMarker: (v) => v === "" });

const weather: FunctionSignature<string> = {
  name: "weather.get",
  params: new Map([
    ["city", "string"],
    ["unit", "string"],
    ["days", "integer"],
  ]),
  required: ["city"],
};
const reference = expectedCall<Value[]>("weather.get", { city: ["Paris", "paris"], unit: ["celsius", ""], days: [3] });

function codeOf(verdict: ReturnType<typeof checkCall>): string {
  return verdict.valid ? "valid" : verdict.code;
}

describe("checkCall", () => {
  it("accepts a call whose every argument is an acceptable alternative", () => {
    const call = functionCall<Value>("weather.get", { city: "paris", unit: "celsius", days: 3 });
    expect(checkCall(weather, call, reference, rules)).toEqual({ valid: true });
  });

  it("lets a parameter be left out only when its alternatives include the omission marker", () => {
    expect(codeOf(checkCall(weather, functionCall<Value>("weather.get", { city: "Paris", days: 3 }), reference, rules))).toBe("valid");
    expect(codeOf(checkCall(weather, functionCall<Value>("weather.get", { city: "Paris", unit: "celsius" }), reference, rules))).toBe("missing_optional");
  });

  it("rejects, in order: wrong name, missing required, unknown argument, wrong value", () => {
    const cases: [Record<string, Value>, string, string][] = [
      [{ city: "Paris", days: 3 }, "weather_get", "wrong_func_name"],
      [{ days: 3 }, "weather.get", "missing_required"],
      [{ city: "Paris", days: 3, country: "FR" }, "weather.get", "unexpected_param"],
      [{ city: "Lyon", days: 3 }, "weather.get", "value_error"],
    ];
    for (const [args, name, code] of cases) {
      expect(codeOf(checkCall(weather, functionCall(name, args), reference, rules))).toBe(code);
    }
  });

  it("rejects an argument the signature declares but the reference does not mention", () => {
    const narrow = expectedCall<Value[]>("weather.get", { city: ["Paris"] });
    const call = functionCall<Value>("weather.get", { city: "Paris", days: 3 });
    expect(codeOf(checkCall(weather, call, narrow, rules))).toBe("unexpected_param");
  });

  it("can never accept a reference that leaves out a required parameter", () => {
    const noCity = expectedCall<Value[]>("weather.get", { days: [3] });
    expect(codeOf(checkCall(weather, functionCall<Value>("weather.get", { days: 3 }), noCity, rules))).toBe("missing_required");
    expect(codeOf(checkCall(weather, functionCall<Value>("weather.get", { city: "Paris", days: 3 }), noCity, rules))).toBe("unexpected_param");
  });

  it("compares names through nameInOutput", () => {
    const underscored = { ...rules, nameInOutput: (name: string) => name.replaceAll(".", "_") };
    const call = functionCall<Value>("weather_get", { city: "Paris", days: 3 });
    expect(codeOf(checkCall(weather, call, reference, underscored))).toBe("valid");
  });
});

const add: FunctionSignature<string> = {
  name: "add",
  params: new Map([
    ["a", "integer"],
    ["b", "integer"],
  ]),
  required: ["a", "b"],
};
const sum = (a: number, b: number) => expectedCall<Value[]>("add", { a: [a], b: [b] });

describe("matchCalls", () => {
  it("single: exactly one call", () => {
    const input = { functions: [add], expected: [sum(1, 2)], rules };
    expect(codeOf(matchCalls("single", { ...input, calls: [functionCall<Value>("add", { a: 1, b: 2 })] }))).toBe("valid");
    expect(codeOf(matchCalls("single", { ...input, calls: [] }))).toBe("wrong_count");
    const twice = [functionCall<Value>("add", { a: 1, b: 2 }), functionCall<Value>("add", { a: 1, b: 2 })];
    expect(codeOf(matchCalls("single", { ...input, calls: twice }))).toBe("wrong_count");
  });

  it("multiple: picks the declared function the reference names", () => {
    const functions = [weather, add];
    const calls = [functionCall<Value>("add", { a: 1, b: 2 })];
    expect(codeOf(matchCalls("multiple", { functions, calls, expected: [sum(1, 2)], rules }))).toBe("valid");
    const wrong = [functionCall<Value>("weather.get", { city: "Paris", days: 3 })];
    expect(codeOf(matchCalls("multiple", { functions, calls: wrong, expected: [sum(1, 2)], rules }))).toBe("wrong_func_name");
    expect(codeOf(matchCalls("multiple", { functions: [weather], calls, expected: [sum(1, 2)], rules }))).toBe("unknown_function");
  });

  it("parallel: accepts any order, rejects a missing or extra call", () => {
    const expected = [sum(1, 2), sum(3, 4)];
    const calls = [functionCall<Value>("add", { a: 3, b: 4 }), functionCall<Value>("add", { a: 1, b: 2 })];
    expect(codeOf(matchCalls("parallel", { functions: [add], calls, expected, rules }))).toBe("valid");
    expect(codeOf(matchCalls("parallel", { functions: [add], calls: calls.slice(1), expected, rules }))).toBe("wrong_count");
    const other = [calls[0]!, functionCall<Value>("add", { a: 3, b: 4 })];
    const verdict = matchCalls("parallel", { functions: [add], calls: other, expected, rules });
    expect(codeOf(verdict)).toBe("cannot_find_match");
    expect(verdict.valid ? [] : verdict.details?.map((d) => d.code)).toEqual(["value_error", "value_error"]);
  });

  it("parallel: pairs greedily in reference order, as upstream does", () => {
    // The first expected call accepts either value and claims the first call; a different
    // pairing would satisfy both, but greedy matching leaves the second without a partner.
    const expected = [expectedCall<Value[]>("add", { a: [1, 2], b: [0] }), expectedCall<Value[]>("add", { a: [1], b: [0] })];
    const calls = [functionCall<Value>("add", { a: 1, b: 0 }), functionCall<Value>("add", { a: 2, b: 0 })];
    expect(codeOf(matchCalls("parallel", { functions: [add], calls, expected, rules }))).toBe("cannot_find_match");
    expect(codeOf(matchCalls("parallel", { functions: [add], calls: [...calls].reverse(), expected, rules }))).toBe("valid");
  });

  it("parallel: any permutation of exact calls is accepted", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 6 }), fc.infiniteStream(fc.nat()), (values, randomness) => {
        const expected = values.map((v) => sum(v, v));
        const calls = values.map((v) => functionCall<Value>("add", { a: v, b: v }));
        const shuffled = [...calls];
        const it = randomness[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = it.next().value % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        return matchCalls("parallel", { functions: [add], calls: shuffled, expected, rules }).valid;
      }),
    );
  });
});
