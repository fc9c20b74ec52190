import { describe, expect, it } from "vitest";
import { exceptionText } from "./errors.js";
import { bindArguments } from "./signature.js";
import type { PyValue } from "./value.js";

describe("bindArguments", () => {
  it("binds keyword arguments with Python's own messages", () => {
    const params = [{ name: "order_id" }, { name: "reason" }, { name: "note", default: null }];
    expect(
      exceptionText(() =>
        bindArguments(
          "RetailTools.cancel",
          params,
          new Map<string, PyValue>([
            ["order_id", "#1"],
            ["x", 1n],
          ]),
        ),
      ),
    ).toBe("TypeError: RetailTools.cancel() got an unexpected keyword argument 'x'");
    expect(exceptionText(() => bindArguments("RetailTools.cancel", params, new Map()))).toBe(
      "TypeError: RetailTools.cancel() missing 2 required positional arguments: 'order_id' and 'reason'",
    );
    expect(exceptionText(() => bindArguments("RetailTools.cancel", params, new Map([["reason", "x"]])))).toBe(
      "TypeError: RetailTools.cancel() missing 1 required positional argument: 'order_id'",
    );
    const three = [{ name: "a" }, { name: "b" }, { name: "c" }];
    expect(exceptionText(() => bindArguments("f", three, new Map()))).toBe("TypeError: f() missing 3 required positional arguments: 'a', 'b', and 'c'");
    expect(
      bindArguments(
        "f",
        params,
        new Map([
          ["reason", "x"],
          ["order_id", "#1"],
        ]),
      ),
    ).toEqual(
      new Map<string, PyValue>([
        ["order_id", "#1"],
        ["reason", "x"],
        ["note", null],
      ]),
    );
  });
});
