import { readFile } from "node:fs/promises";
import { InputError, JsonValue, parseRecord, ToolSpec, type Message, type WireToolCall } from "@envace/protocol";
import { parseJsonLines } from "@envace/records";
import { z } from "zod";

/** The three task types of FinMCP-Bench. */
export const TASK_TYPES = ["single step", "multi step", "multi turn"] as const;
export type TaskType = (typeof TASK_TYPES)[number];

const WireCall = z.object({
  id: z.string().min(1).optional(),
  type: z.literal("function").optional(),
  function: z.object({
    name: z.string().min(1),
    // On the wire a JSON string; some exports hold the decoded object.
    arguments: z.union([z.string(), z.record(z.string(), JsonValue)]).optional(),
  }),
});

const SampleMessage = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: z.string() }),
  z.object({ role: z.literal("user"), content: z.string() }),
  z.object({ role: z.literal("assistant"), content: z.string().nullable().optional(), tool_calls: z.array(WireCall).optional() }),
  z.object({ role: z.literal("tool"), tool_call_id: z.string().optional(), name: z.string().optional(), content: JsonValue }),
]);

/** One FinMCP-Bench sample as the benchmark stores it. */
export const FinMcpSampleRecord = z.object({
  id: z.union([z.string().min(1), z.number()]).transform(String),
  /** "L1-L2-L3": the scenario at three levels. */
  scenery: z.string().min(1),
  diff_level: z.union([z.string().min(1), z.number()]).transform(String),
  /** "single step", "multi step" or "multi turn" (underscores, hyphens and case are tolerated). */
  task: z
    .string()
    .transform((text) => text.trim().toLowerCase().replace(/[_-]+/g, " ").replace(/\s+/g, " "))
    .pipe(z.enum(TASK_TYPES)),
  /** The tools the sample may use: names of the MCP server's tools, or OpenAI function specs. */
  tool_list: z.array(z.union([z.string().min(1), ToolSpec])),
  messages: z
    .array(SampleMessage)
    .min(1)
    .refine((messages) => messages.some((m) => m.role === "user"), "has no user message"),
});
export type FinMcpSampleRecord = z.infer<typeof FinMcpSampleRecord>;

/** A sample ready to run and score. */
export interface FinMcpSample {
  id: string;
  scenery: string;
  /** The first level of `scenery`, for the breakdown. */
  sceneryLevel1: string;
  diffLevel: string;
  task: TaskType;
  /** The names of `tool_list`, in order. */
  toolNames: string[];
  /** The specs of `tool_list` when it gives them; else the server's specs are offered. */
  toolSpecs: ToolSpec[] | undefined;
  /** The reference dialogue in the OpenAI chat shape (tool-call arguments as JSON strings). */
  messages: Message[];
}

/** The sample's record made ready: messages in the chat shape, gold call ids filled in. */
export function toSample(record: FinMcpSampleRecord): FinMcpSample {
  const messages: Message[] = [];
  let pending: string[] = [];
  record.messages.forEach((message, index) => {
    if (message.role === "assistant") {
      const calls: WireToolCall[] = (message.tool_calls ?? []).map((call, j) => ({
        id: call.id ?? `gold_${index}_${j}`,
        type: "function",
        function: {
          name: call.function.name,
          arguments: typeof call.function.arguments === "string" ? call.function.arguments : JSON.stringify(call.function.arguments ?? {}),
        },
      }));
      pending = calls.map((call) => call.id);
      messages.push({ role: "assistant", content: message.content ?? null, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    } else if (message.role === "tool") {
      const id = message.tool_call_id ?? pending.shift() ?? `gold_${index}`;
      const content = typeof message.content === "string" ? message.content : JSON.stringify(message.content);
      messages.push({ role: "tool", tool_call_id: id, ...(message.name === undefined ? {} : { name: message.name }), content });
    } else {
      messages.push(message);
    }
  });
  const specs = record.tool_list.filter((tool): tool is ToolSpec => typeof tool !== "string");
  return {
    id: record.id,
    scenery: record.scenery,
    sceneryLevel1: record.scenery.split("-")[0]!.trim(),
    diffLevel: record.diff_level,
    task: record.task,
    toolNames: record.tool_list.map((tool) => (typeof tool === "string" ? tool : tool.function.name)),
    toolSpecs: specs.length === record.tool_list.length && specs.length > 0 ? specs : undefined,
    messages,
  };
}

/** The gold tool names: every assistant tool call of the reference dialogue, in order. */
export function goldToolNames(sample: Pick<FinMcpSample, "messages">): string[] {
  return sample.messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((call) => call.function.name) : []));
}

/** The index in `messages` of every user turn. */
export function userTurnIndices(sample: Pick<FinMcpSample, "messages">): number[] {
  return sample.messages.flatMap((m, index) => (m.role === "user" ? [index] : []));
}

/**
 * Read samples from a JSON Lines file (one sample a line) or a JSON file holding an array. A bad
 * record is a `RecordError` naming the file, the line (or array index) and the field; a repeated
 * id names both.
 */
export async function loadSamples(file: string): Promise<FinMcpSample[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new InputError(`${file}: cannot read the FinMCP samples (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let records: FinMcpSampleRecord[];
  if (text.trimStart().startsWith("[")) {
    let array: unknown;
    try {
      array = JSON.parse(text);
    } catch (error) {
      throw new InputError(`${file}: not JSON (${(error as Error).message})`);
    }
    records = (array as unknown[]).map((value, index) => parseRecord(FinMcpSampleRecord, value, { file, record: index }));
  } else {
    records = parseJsonLines(FinMcpSampleRecord, text, file, { source: "user" });
  }
  const seen = new Set<string>();
  for (const record of records) {
    if (seen.has(record.id)) throw new InputError(`${file}: sample id ${record.id} appears more than once`);
    seen.add(record.id);
  }
  return records.map(toSample);
}
