import { pyDumps, PyHashDict, type PyObject } from "@envace/python-text";
import { SamplingParams } from "@envace/protocol";
import type { AssistantMessage, GenerateRequest, Generation, Message, Policy, SamplingParamsInput, ToolSpec, WireToolCall } from "@envace/protocol";
import { languageOf } from "./checker/ast.js";
import type { MultiTurnEntry, SingleTurnEntry } from "./data.js";
import { DecodeError, decodeCallObject, decodeJavaLikeCalls, decodePythonCalls, decodePythonExecution, functionCallExecutionList } from "./decode.js";
import type { DecodedCall } from "./decode.js";
import type { LongContextFiller } from "./multi-turn/environment.js";
import type { MultiTurnCalls } from "./multi-turn/checker.js";
import { createSession, EnvironmentSet } from "./multi-turn/runtime.js";
import { additionalFunctionsPrompt, ADDITIONAL_FUNCTIONS_PROMPT, systemPrompt, toTools, withLanguageHints } from "./prompts.js";
import { parsePyJson } from "./py/json.js";
import type { SingleTurnOutput } from "./score.js";

/**
 * How a policy is asked for calls, as BFCL's two handler families do it:
 * - `prompt`: the function docs and the Python call-list format go in a system prompt; calls are
 *   read from the text (`[f(a=1), g(b='x')]`), results come back as `tool` messages;
 * - `fc`: the functions are offered as tools (dots in names become underscores) and calls are the
 *   policy's native tool calls (or `<tool_call>{…}</tool_call>` blocks in its text).
 */
export type InferenceMode = "prompt" | "fc";

/** Upstream stops a turn's inner loop after this many steps with calls and fails the entry. */
export const MAXIMUM_STEP_LIMIT = 20;

export interface InferenceOptions {
  readonly policy: Policy;
  readonly mode: InferenceMode;
  /** Sampling for every generation. Default: temperature 0.6, top-p 0.95 (evaluation). */
  readonly sampling?: SamplingParamsInput;
  readonly signal?: AbortSignal;
}

const EVALUATION_SAMPLING: SamplingParamsInput = { temperature: 0.6, topP: 0.95 };

function request(options: InferenceOptions, messages: Message[], tools: ToolSpec[]): GenerateRequest {
  return { role: "act", messages: [...messages], tools, sampling: SamplingParams.parse(options.sampling ?? EVALUATION_SAMPLING) };
}

/** The raw output of one generation, in upstream's result form: text, or `[{name: "<JSON args>"}]`. */
export function rawResult(generation: Generation, mode: InferenceMode): PyObject {
  if (mode === "prompt") return generation.text;
  const calls = nativeCalls(generation);
  return calls.map((call) => new PyHashDict([[call.function.name, call.function.arguments]]));
}

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/** Native tool calls, or Hermes-style `<tool_call>` blocks in the text when the server did not parse them. */
function nativeCalls(generation: Generation): WireToolCall[] {
  if (generation.toolCalls && generation.toolCalls.length > 0) return generation.toolCalls;
  const calls: WireToolCall[] = [];
  for (const [index, block] of [...generation.text.matchAll(TOOL_CALL_BLOCK)].entries()) {
    let parsed: PyObject;
    try {
      parsed = parsePyJson(block[1]!.trim());
    } catch {
      continue;
    }
    if (!(parsed instanceof PyHashDict) || typeof parsed.get("name") !== "string") continue;
    const args = parsed.get("arguments") ?? new PyHashDict();
    // Python's json.dumps text is JSON that still tells 1.0 from 1.
    const argumentsText = typeof args === "string" ? args : pyDumps(args);
    calls.push({ id: `call_${index}`, type: "function", function: { name: parsed.get("name") as string, arguments: argumentsText } });
  }
  return calls;
}

/** Decode function-calling output into calls (names as the model wrote them). */
function decodeNative(generation: Generation): DecodedCall[] {
  return nativeCalls(generation).map((call) => decodeCallObject(new PyHashDict([[call.function.name, call.function.arguments]])));
}

/** Ask for one single-turn entry's calls. The raw output is returned too, for a results file. */
export async function inferSingleTurn(entry: SingleTurnEntry, options: InferenceOptions): Promise<{ output: SingleTurnOutput; raw: PyObject }> {
  const language = languageOf(entry.category);
  const docs = withLanguageHints(entry.rawFunctions, language);
  const messages: Message[] = entry.question.map((m) => chatMessage(m.role, m.content));
  let tools: ToolSpec[] = [];
  if (options.mode === "prompt") prependSystemPrompt(messages, systemPrompt(docs));
  else tools = toTools(docs);
  const generation = await options.policy.generate(request(options, messages, tools), options.signal);
  const raw = rawResult(generation, options.mode);
  try {
    if (options.mode === "fc") return { output: { calls: decodeNative(generation) }, raw };
    const calls = language === "python" ? decodePythonCalls(generation.text) : decodeJavaLikeCalls(generation.text, language);
    return { output: { calls }, raw };
  } catch (error) {
    if (error instanceof DecodeError) return { output: { decodeError: error.message, wrongFormat: false }, raw };
    throw error;
  }
}

function chatMessage(role: string, content: string): Message {
  if (role === "system") return { role: "system", content };
  if (role === "assistant") return { role: "assistant", content };
  return { role: "user", content };
}

/** Upstream puts its system prompt first, merged in front of a system message the question already has. */
function prependSystemPrompt(messages: Message[], prompt: string): void {
  const first = messages[0];
  if (first?.role === "system") messages[0] = { role: "system", content: `${prompt}\n\n${first.content}` };
  else messages.unshift({ role: "system", content: prompt });
}

export interface MultiTurnInference {
  /** Decoded steps per turn, for the checker. */
  readonly calls: MultiTurnCalls;
  /** Raw outputs per turn and step, in upstream's result form. */
  readonly raw: PyObject[][];
  /** The 20-step limit was hit and the remaining turns were skipped (the checker then fails the entry unless it was the last turn, as upstream). */
  readonly forceQuit: boolean;
}

/**
 * Run one multi-turn entry against the environments, as upstream's inference loop does: each
 * turn's user message (or, at a held-out turn, the re-offered functions), then steps until the
 * policy makes no decodable call; each step's calls are executed and their results shown to the
 * policy. More than 20 steps in a turn ends the entry.
 */
export async function inferMultiTurn(entry: MultiTurnEntry, options: InferenceOptions & { filler?: LongContextFiller }): Promise<MultiTurnInference> {
  const environments = new EnvironmentSet({
    involvedClasses: entry.involvedClasses,
    initialConfig: entry.initialConfig,
    longContext: entry.longContext,
    session: createSession(options.filler),
  });
  const docs = withLanguageHints(entry.rawFunctions, "python");
  let tools = options.mode === "fc" ? toTools(docs) : [];
  const messages: Message[] = [];
  const calls: string[][][] = [];
  const raw: PyObject[][] = [];
  for (const [turnIndex, turn] of entry.turns.entries()) {
    let turnMessages: Message[] = turn.map((m) => chatMessage(m.role, m.content));
    const heldOut = entry.heldOut.get(turnIndex);
    if (heldOut) {
      if (options.mode === "fc") {
        tools = [...tools, ...toTools(heldOut.rawFunctions)];
        turnMessages = [{ role: "user", content: ADDITIONAL_FUNCTIONS_PROMPT }];
      } else turnMessages = [{ role: "user", content: additionalFunctionsPrompt(heldOut.rawFunctions) }];
    }
    if (turnIndex === 0 && options.mode === "prompt") prependSystemPrompt(turnMessages, systemPrompt(docs));
    messages.push(...turnMessages);
    const turnCalls: string[][] = [];
    const turnRaw: PyObject[] = [];
    for (let step = 0; ; step++) {
      const generation = await options.policy.generate(request(options, messages, tools), options.signal);
      turnRaw.push(rawResult(generation, options.mode));
      let decoded: string[];
      try {
        decoded = options.mode === "prompt" ? decodePythonExecution(generation.text) : functionCallExecutionList(decodeNative(generation));
      } catch (error) {
        if (!(error instanceof DecodeError)) throw error;
        messages.push(assistantMessage(generation, options.mode, []));
        break;
      }
      const wire = options.mode === "fc" ? nativeCalls(generation) : [];
      messages.push(assistantMessage(generation, options.mode, wire));
      if (decoded.length === 0) break;
      const results = decoded.map((call) => environments.execute(call));
      turnCalls.push(decoded);
      results.forEach((result, i) => {
        const id = wire[i]?.id ?? `call_${turnIndex}_${step}_${i}`;
        messages.push({ role: "tool", tool_call_id: id, name: decoded[i]!, content: result });
      });
      if (step + 1 > MAXIMUM_STEP_LIMIT) {
        calls.push(turnCalls);
        raw.push(turnRaw);
        return { calls, raw, forceQuit: true };
      }
    }
    calls.push(turnCalls);
    raw.push(turnRaw);
  }
  return { calls, raw, forceQuit: false };
}

function assistantMessage(generation: Generation, mode: InferenceMode, calls: WireToolCall[]): AssistantMessage {
  if (mode === "fc" && calls.length > 0) return { role: "assistant", content: generation.text || null, tool_calls: calls };
  return { role: "assistant", content: generation.text };
}
