import {
  SamplingParams,
  toWireToolCall,
  type Environment,
  type JsonObject,
  type Message,
  type Policy,
  type SamplingParamsInput,
  type ToolCall,
  type ToolSpec,
} from "@envace/protocol";
import { parseRehearsalSetting, rehearse, withNote, type RehearsalSettingInput } from "@envace/rehearsal";
import { parseActOutput, singleTurn, toolMessage } from "@envace/trajectory";
import { userTurnIndices, type FinMcpSample } from "./sample.js";

/** Upstream's cap on model calls per user turn. */
export const MAX_ROUNDS = 20;

/** One tool call the model made, and how the server answered. */
export interface CallRecord {
  name: string;
  arguments: JsonObject;
  status: "ok" | "error";
  /** The error code of a failed call (`MCP_TOOL_ERROR`, `TOOL_NOT_AVAILABLE`, …). */
  code?: string;
}

/** What the model did in one user turn. */
export interface TurnRecord {
  /** Index of the user message in the sample's `messages`. */
  user: number;
  calls: CallRecord[];
  /** The model's last text (its answer), null if it ended on tool calls at the round cap. */
  answer: string | null;
  /** Model calls made in this turn (≤ `maxRounds`). */
  rounds: number;
  /** An output whose tool-call markup could not be read (taken as the answer). */
  parseError?: string;
  /** The private rehearsal before this turn, when one ran. */
  rehearsal?: {
    attempts: number;
    /** The memory the turn was conditioned on. */
    memory: string;
    memoryTokens: number;
    /** Calls that reached the tool server while rehearsing: 0 by construction, recorded to show it. */
    environmentCalls: number;
  };
}

export interface InferSampleOptions {
  sample: FinMcpSample;
  policy: Policy;
  /** The sample's tool server, e.g. an `McpEnvironment` that allows `sample.toolNames`. */
  environment: Environment;
  maxRounds?: number;
  sampling?: SamplingParamsInput;
  /**
   * Test-time private rehearsal before each user turn: `parallel:N` or `sequential:N` attempts on the
   * turn's prefix, every tool result predicted by the policy, summarised into a memory that the
   * turn's real execution is conditioned on (in the system message). Default `none`.
   */
  rehearsal?: RehearsalSettingInput;
  /** Token budget of the rehearsal memory. Default none. */
  memoryBudget?: number | null;
  signal?: AbortSignal;
}

/**
 * Upstream's inference loop. For each user turn the history is the reference dialogue up to and
 * including that user message (the ground-truth prefix, never the model's own earlier turns);
 * the model is called with the tools; every tool call of a response is executed on the server and
 * answered; this repeats while the model calls tools, at most `maxRounds` model calls a turn.
 * The environment's episode spans the sample and is closed however the sample ends.
 */
export async function inferSample(options: InferSampleOptions): Promise<TurnRecord[]> {
  const { sample, policy, environment, signal } = options;
  const maxRounds = options.maxRounds ?? MAX_ROUNDS;
  const sampling = SamplingParams.parse(options.sampling ?? {});
  const turns = userTurnIndices(sample);
  const setting = parseRehearsalSetting(options.rehearsal ?? "none");
  let serverCalls = 0;
  try {
    await environment.reset({ id: sample.id, messages: sample.messages.slice(0, turns[0]! + 1), tools: sample.toolSpecs ?? [], metadata: {} });
    const records: TurnRecord[] = [];
    for (const user of turns) {
      records.push(await runTurn(sample.messages.slice(0, user + 1), user));
    }
    return records;
  } finally {
    await environment.close?.();
  }

  async function runTurn(prefix: Message[], user: number): Promise<TurnRecord> {
    const record: TurnRecord = { user, calls: [], answer: null, rounds: 0 };
    const tools: ToolSpec[] = sample.toolSpecs ?? [...environment.tools()];
    let messages = [...prefix];
    if (setting.mode !== "none") {
      const task = { id: `${sample.id}/${user}`, messages, tools, metadata: {} };
      const before = serverCalls;
      // Rehearsal takes no environment: the policy predicts every tool result.
      const run = await rehearse({
        task,
        policy,
        setting,
        users: singleTurn,
        limits: { maxTurns: maxRounds },
        ...(options.memoryBudget === undefined ? {} : { memoryBudget: options.memoryBudget }),
        ...(signal === undefined ? {} : { signal }),
      });
      record.rehearsal = { attempts: run.attempts.length, memory: run.memory.text, memoryTokens: run.memory.tokens, environmentCalls: serverCalls - before };
      messages = [...withNote(task, run.memory.text).messages];
    }
    while (record.rounds < maxRounds) {
      signal?.throwIfAborted();
      const generation = await policy.generate({ role: "act", messages: [...messages], tools, sampling }, signal);
      record.rounds += 1;
      const calls = toolCallsOf(generation, tools, record);
      if (calls.length === 0) {
        record.answer = generation.text;
        return record;
      }
      messages.push({ role: "assistant", content: generation.text === "" ? null : generation.text, tool_calls: calls.map(toWireToolCall) });
      for (const call of calls) {
        serverCalls += 1;
        const result = await environment.call(call);
        record.calls.push({
          name: call.name,
          arguments: call.arguments,
          status: result.status,
          ...(result.status === "error" ? { code: result.error.code } : {}),
        });
        messages.push(toolMessage(result));
      }
    }
    return record;
  }
}

/**
 * The calls of one response. Native tool calls count as the model made them, whatever their name
 * (a name off the list is a false positive upstream, and the server refuses it); arguments that
 * are not a JSON object are sent as `{}`. Text-format calls (`<tool_call>`) are read by the Act parser.
 */
function toolCallsOf(
  generation: { text: string; toolCalls?: readonly { id: string; function: { name: string; arguments: string } }[] | undefined },
  tools: readonly ToolSpec[],
  record: TurnRecord,
): ToolCall[] {
  if (generation.toolCalls !== undefined && generation.toolCalls.length > 0) {
    return generation.toolCalls.map((wire) => ({ id: wire.id, name: wire.function.name, arguments: objectOf(wire.function.arguments) }));
  }
  const parsed = parseActOutput({ text: generation.text }, { tools, formats: ["hermes"], callId: (index) => `call_${record.rounds}_${index}` });
  if (parsed.kind === "tool_calls") return parsed.calls;
  if (parsed.kind === "error") record.parseError = `${parsed.code}: ${parsed.detail}`;
  return [];
}

function objectOf(text: string): JsonObject {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as JsonObject) : {};
  } catch {
    return {};
  }
}
