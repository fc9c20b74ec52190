import { describe, expect, it } from "vitest";
import { toolExamples } from "./examples.js";
import { ErrorCode, ToolName } from "./tools.js";

describe("toolExamples", () => {
  const examples = toolExamples();

  it("shows every tool and every domain error code", () => {
    expect(new Set(examples.map((e) => e.call.name))).toEqual(new Set(ToolName.options));
    const codes = new Set(examples.flatMap((e) => ("error" in e.output ? [e.output.error.code] : [])));
    const domainCodes = ErrorCode.options.filter((c) => c !== "TOOL_NOT_AVAILABLE" && c !== "INVALID_PARAMETERS");
    expect([...codes].sort()).toEqual([...domainCodes].sort());
  });

  it("answers each call as the shop did, in order", () => {
    expect(examples[0]).toEqual({ call: { name: "user", arguments: { user: "ada" } }, output: { result: { balance: 12, orders: { o1: "kelo" } } } });
    // ada: 12, buys 1 mivo (−2), cancels o1 (+8), pays 5: 13 left. The failed calls changed nothing.
    expect(examples.at(-1)).toEqual({ call: { name: "pay", arguments: { from: "ada", to: "bela", amount: 5 } }, output: { result: { paid: 5, balance: 13 } } });
    expect(examples[7]).toEqual({
      call: { name: "buy", arguments: { user: "ada", item: "mivo", qty: 1 } },
      output: { result: { order: "o3", cost: 2, balance: 10 } },
    });
  });
});
