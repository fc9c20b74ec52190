import { DepthLimitError, pyRepr } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { convertJava } from "../checker/java.js";
import { convertJavaScript } from "../checker/javascript.js";
import { DecodeError, decodeJavaLikeCalls, decodePythonCalls } from "../decode.js";
import { parsePyJson } from "./json.js";
import { NESTING_LIMIT, parseExpression, TREE_DEPTH_LIMIT } from "./syntax.js";

// Model output nested 10^5 deep is data: a typed error naming the limit, never a stack overflow.
const DEEP = 100_000;

function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("nesting limits of the readers of model output", () => {
  it("the Python expression parser refuses brackets, calls and unary chains past 200 levels", () => {
    expect(NESTING_LIMIT).toBe(200);
    for (const text of [
      "[".repeat(DEEP) + "]".repeat(DEEP),
      "f(a=" + "g(".repeat(DEEP) + ")".repeat(DEEP + 1),
      "-".repeat(DEEP) + "1",
      "2" + "**2".repeat(DEEP),
      "not ".repeat(DEEP) + "x",
    ]) {
      const error = caught(() => parseExpression(text));
      expect(error).toBeInstanceOf(DepthLimitError);
      expect((error as DepthLimitError).limit).toBe(200);
      expect((error as Error).message).toBe("RecursionError: the expression nests deeper than 200 levels");
    }
    // 199 brackets inside the top level's expression are fine.
    expect(parseExpression("[".repeat(199) + "]".repeat(199))).toMatchObject({ kind: "list" });
  });

  it("refuses trees deeper than 1,000 that chains build without nesting", () => {
    expect(TREE_DEPTH_LIMIT).toBe(1000);
    for (const text of ["1" + "+1".repeat(DEEP), "a" + ".b".repeat(DEEP), "a" + "[0]".repeat(DEEP), "f" + "()".repeat(DEEP)]) {
      const error = caught(() => parseExpression(text));
      expect(error).toBeInstanceOf(DepthLimitError);
      expect((error as DepthLimitError).limit).toBe(1000);
    }
    expect(parseExpression("1" + "+1".repeat(998))).toMatchObject({ kind: "binop" });
  });

  it("a decoded model output too deep is a DecodeError naming the limit", () => {
    const error = caught(() => decodePythonCalls(`[f(a=${"[".repeat(DEEP)}${"]".repeat(DEEP)})]`));
    expect(error).toBeInstanceOf(DecodeError);
    expect((error as Error).message).toBe("the expression nests deeper than 200 levels");
  });

  it("JSON arguments too deep are a DepthLimitError", () => {
    const error = caught(() => parsePyJson("[".repeat(DEEP) + "]".repeat(DEEP)));
    expect(error).toBeInstanceOf(DepthLimitError);
    expect((error as DepthLimitError).limit).toBe(1000);
  });

  it("the Java and JavaScript readers walk deep text without recursion", () => {
    const parens = `f(a=${"(".repeat(DEEP)}${")".repeat(DEEP)})`;
    expect(decodeJavaLikeCalls(parens, "java")[0]!.args.get("a")).toBe("(".repeat(DEEP) + ")".repeat(DEEP));
    // Upstream's flat array pattern stops at the first `]`: the rows are read as text.
    const nested = "[".repeat(DEEP) + "]".repeat(DEEP);
    expect(pyRepr(convertJavaScript(nested, "array"))).toBe(`[['${"[".repeat(DEEP - 2)}']]`);
    // No `}` at all: upstream's first pattern fails and its second reads an empty map.
    expect(pyRepr(convertJava("new HashMap<>() {{" + "{".repeat(DEEP), "HashMap"))).toBe("{}");
  });
});
