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
import { uuidLines } from "../../../apps/trainer/src/data/cm2.js";
import { mentions, wordsOf } from "../../../packages/bench-builtin/src/index.js";
import { renderScenario } from "../../../packages/bench-tau2/src/task.js";
import { defaultProcess } from "../../../packages/bench-vita/src/fuzz.js";
import { checkTimeFormat, strptime } from "../../../packages/bench-vita/src/python.js";
import { jsonString, jsonStringUnicode, sortCodePoints, strRepr, strip } from "../../../packages/python-text/src/index.js";
import { readTaggedObject } from "../../../packages/rehearsal/src/structured-output.js";
import { CHECKPOINT_NAME, parseCheckpointPath } from "../../../packages/tinker/src/server/checkpoints.js";
import { PATTERNS } from "../../../packages/training/src/tokenizer.js";

const SIZE = 100_000;
// Measured on a 2-core machine under a load of ~15: the slowest case takes ~0.35 s, most ~0.05 s.
// A pattern that backtracks quadratically (`/\s+$/` on spaces and one letter) takes ~2.7 s at 40 KB
// and so ~17 s at 100 KB: the bound keeps a 4× margin above the one and fails the other by 10×.
const BUDGET_MS = 1_500;

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

/** A run over the bound is timed once more: a linear one the scheduler paused passes then; a super-linear one is slow both times. */
function timedTwiceIfSlow(run: () => unknown): number {
  const first = timed(run);
  return first > BUDGET_MS ? Math.min(first, timed(run)) : first;
}

const cases: [string, string[], (text: string) => unknown][] = [
  ["BFCL JavaScript array", attacks(["[[", "],[", "[", "new Array(["], "[["), (t) => convertJavaScript(t, "array")],
  ["BFCL JavaScript dict", attacks(["{", "a:", ",", ", b", ":"], "{"), (t) => convertJavaScript(t, "dict")],
  [
    "BFCL JavaScript scalars",
    attacks(["1", "-1", "1."]),
    (t) => [convertJavaScript(t, "integer"), convertJavaScript(t, "float"), convertJavaScript(t, "Bigint")],
  ],
  ["BFCL Java HashMap", attacks(["{", " {", 'put("', '",', "new HashMap<", ">"], "new HashMap<>() {"), (t) => convertJava(t, "HashMap")],
  [
    "BFCL Java ArrayList",
    attacks(["new ArrayList<>(Arrays.asList(", "add(", "{{", "new ArrayList<>()"], "new ArrayList<>() {{"),
    (t) => convertJava(t, "ArrayList"),
  ],
  ["BFCL Java array", attacks(["new int[]{", "{", "new a"]), (t) => convertJava(t, "Array")],
  ["BFCL Java scalars", attacks(["1", "1.", "1e"]), (t) => [convertJava(t, "float"), convertJava(t, "long"), convertJava(t, "double")]],
  ["BFCL Java/JavaScript call decoding", attacks(["a.", "a . ", "(", "f(a=", "'"], "f"), (t) => decodeJavaLikeCalls(t, "java")],
  ["BFCL Python call decoding", attacks(["'", "0", "a.", "f(", "x=1,"], "["), (t) => decodePythonCalls(t)],
  ["BFCL inline <tool_call> blocks", attacks(["<tool_call>", "<tool_call>{"]), (t) => rawResult({ text: t } as Parameters<typeof rawResult>[0], "fc")],
  ["judge verdict (fenced JSON)", attacks(["```", "`", "</think>"], "```"), (t) => parseVerdict(t)],
  [
    "reward: assistant parts (<think>, <tool_call>)",
    attacks(["<tool_call>", "<think>", "</think>", "<tool_call>{"]),
    (t) => splitAssistant({ role: "assistant", content: t }),
  ],
  ["python-text json.loads", attacks(["1", "1.", "-0", "[", '"', "1e"]), (t) => jsonLoads(t)],
  ["python-text int() and float()", attacks(["1_", "1", "_1"]), (t) => [pyInt(t), pyFloat(t)]],
  ["MCP error messages", attacks(["output schema", " "]), (t) => errorResultOf({ id: "c", name: "t", arguments: {} }, new Error(t), { timeoutMs: 1 })],
  [
    "VitaBench strptime (an agent's dates and times)",
    [...attacks(["1", "2024-01-01 ", "2024-", " 1", ":", "2024-01-01 1:"]), ...attacks(["1", " ", "0"], "2024-01-01 ")],
    (t) => [strptime(t, "%Y-%m-%d %H:%M:%S"), checkTimeFormat(t, "%Y-%m-%d")],
  ],
  ["VitaBench fuzzy matching's text processing", attacks(["a ", "é,", "_"]), (t) => defaultProcess(t)],
  [
    "built-in domain: a fact's phrasings in the reply",
    attacks(["o1", "o", "1,0", "paris", "par"]),
    (t) => mentions(t, ["o1", "1,000 EUR", "Paris", "aaaaaaaaab", "((x))"]),
  ],
  ["built-in domain: words of a text", attacks(["a1", "a", "1", "."]), (t) => wordsOf(t)],
  ["CM2 records: the line of each uuid", attacks(['"uuid"', '"uuid": "', '"uuid":"\\', "\\", ":"], '"uuid": "'), (t) => uuidLines(t)],
  [
    "τ² user instructions: lines indented",
    attacks(["\r", "\r\n", "\n", "\u2028", "\r\r\n"]),
    (t) => renderScenario({ persona: t, instructions: { domain: "d", reason_for_call: t, known_info: null, unknown_info: null, task_instructions: t } }),
  ],
  [
    "tokenizer pre-tokenizer patterns (GPT-2, isolated)",
    attacks(["'s", "'", " a", " 1", " !", " \n", "a\t"]),
    (t) => [t.match(PATTERNS.gpt2), t.match(PATTERNS.isolated)],
  ],
  ["python-text repr()", attacks(["\u0001", "\ud800", "é", "'", '"', "\\"]), (t) => strRepr(t)],
  ["python-text json.dumps of a string", attacks(["\u0001", "\ud800", "é", '"', "\\"]), (t) => [jsonString(t), jsonStringUnicode(t)]],
  ["python-text sorted() and strip()", attacks(["\ud800", "\ud83d\ude00", "a"]), (t) => [sortCodePoints([t, `${t}a`, t.slice(1)]), strip(t, " \t")]],
  [
    "rehearsal: tagged JSON in reflect and summarize output",
    attacks(["```", "```json\n", "{", "}", "<memory>", "\n```"], "```\n"),
    (t) => readTaggedObject(t, "memory"),
  ],
  [
    "Tinker checkpoint paths and names from clients",
    attacks(["a", "a/", "weights/", ".", ":"], "tinker://"),
    (t) => [parseCheckpointPath(t, "path"), parseCheckpointPath(`tinker://m/weights/${t}`, "path"), CHECKPOINT_NAME.test(t)],
  ],
];

describe("patterns applied to untrusted text run in linear time", () => {
  it.each(cases)("%s", (_name, texts, run) => {
    const slowest = Math.max(...texts.map((text) => timedTwiceIfSlow(() => run(text))));
    expect(slowest).toBeLessThan(BUDGET_MS);
  });
});
