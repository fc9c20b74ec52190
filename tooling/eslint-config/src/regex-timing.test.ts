// Every pattern this repository applies to model output, judge replies, tool results or user files,
// timed through the function that applies it on adversarial 100 KB inputs (repeated prefixes,
// unclosed delimiters, long whitespace runs). A pattern that backtracks super-linearly takes
// seconds to minutes on some of them; a linear one takes milliseconds. The lint rules
// (regexp/no-super-linear-*) catch new nested quantifiers; this catches what they cannot see.
import { describe, expect, it } from "vitest";
import { convertJava } from "../../../packages/bench-bfcl/src/checker/java.js";
import { convertJavaScript } from "../../../packages/bench-bfcl/src/checker/javascript.js";
import { decodeJavaLikeCalls, decodePythonCalls } from "../../../packages/bench-bfcl/src/decode.js";
import { rawResult } from "../../../packages/bench-bfcl/src/inference.js";
import { pyFloat, pyInt, jsonLoads } from "../../../packages/python-text/src/index.js";
import { splitAssistant } from "../../../packages/rewards/src/checklist/assistant-parts.js";
import { parseVerdict } from "../../../packages/rewards/src/checklist/verdict.js";
import { errorResultOf } from "../../../packages/mcp/src/results.js";

const SIZE = 100_000;
const BUDGET_MS = 500;

/** `unit` repeated to 100 KB, then `tail`. */
function fill(unit: string, tail = "", head = ""): string {
  return head + unit.repeat(Math.ceil((SIZE - head.length - tail.length) / unit.length)) + tail;
}

/** Adversarial texts for patterns built around `pieces` (their delimiters and prefixes). */
function attacks(pieces: string[], head = ""): string[] {
  const texts = [fill(" ", "x", head), fill("\n", "x", head), fill(" \t", "!", head)];
  for (const piece of pieces) texts.push(fill(piece, "", head), fill(piece, "\n", head), fill(`${piece} `, "x", head), fill(piece, "", head + piece));
  return texts;
}

function timed(run: () => unknown): number {
  const start = performance.now();
  try {
    run();
  } catch {
    // Refusing the text is fine; taking long is not.
  }
  return performance.now() - start;
}

const cases: [string, string[], (text: string) => unknown][] = [
  ["BFCL JavaScript array", attacks(["[[", "],[", "[", "new Array(["], "[["), (t) => convertJavaScript(t, "array")],
  ["BFCL JavaScript dict", attacks(["{", "a:", ",", ", b", ":"], "{"), (t) => convertJavaScript(t, "dict")],
  ["BFCL JavaScript scalars", attacks(["1", "-1", "1."]), (t) => [convertJavaScript(t, "integer"), convertJavaScript(t, "float"), convertJavaScript(t, "Bigint")]],
  ["BFCL Java HashMap", attacks(["{", " {", 'put("', '",', "new HashMap<", ">"], "new HashMap<>() {"), (t) => convertJava(t, "HashMap")],
  ["BFCL Java ArrayList", attacks(["new ArrayList<>(Arrays.asList(", "add(", "{{", "new ArrayList<>()"], "new ArrayList<>() {{"), (t) => convertJava(t, "ArrayList")],
  ["BFCL Java array", attacks(["new int[]{", "{", "new a"]), (t) => convertJava(t, "Array")],
  ["BFCL Java scalars", attacks(["1", "1.", "1e"]), (t) => [convertJava(t, "float"), convertJava(t, "long"), convertJava(t, "double")]],
  ["BFCL Java/JavaScript call decoding", attacks(["a.", "a . ", "(", "f(a=", "'"], "f"), (t) => decodeJavaLikeCalls(t, "java")],
  ["BFCL Python call decoding", attacks(["'", "0", "a.", "f(", "x=1,"], "["), (t) => decodePythonCalls(t)],
  ["BFCL inline <tool_call> blocks", attacks(["<tool_call>", "<tool_call>{"]), (t) => rawResult({ text: t } as Parameters<typeof rawResult>[0], "fc")],
  ["judge verdict (fenced JSON)", attacks(["```", "`", "</think>"], "```"), (t) => parseVerdict(t)],
  ["reward: assistant parts (<think>, <tool_call>)", attacks(["<tool_call>", "<think>", "</think>", "<tool_call>{"]), (t) => splitAssistant({ role: "assistant", content: t })],
  ["python-text json.loads", attacks(["1", "1.", "-0", "[", '"', "1e"]), (t) => jsonLoads(t)],
  ["python-text int() and float()", attacks(["1_", "1", "_1"]), (t) => [pyInt(t), pyFloat(t)]],
  ["MCP error messages", attacks(["output schema", " "]), (t) => errorResultOf({ id: "c", name: "t", arguments: {} }, new Error(t), { timeoutMs: 1 })],
];

describe("patterns applied to untrusted text run in linear time", () => {
  it.each(cases)("%s", (_name, texts, run) => {
    const slowest = Math.max(...texts.map((text) => timed(() => run(text))));
    expect(slowest).toBeLessThan(BUDGET_MS);
  });
});
