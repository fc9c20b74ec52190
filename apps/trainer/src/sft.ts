import type { Generation, Message, Task, ToolCall, ToolResult, ToolSpec, TrainingRow, Trajectory } from "@envace/protocol";
import { reflectOutput, buildReflectPrompt, callText, digestAttempt, type AttemptDigest } from "@envace/rehearsal";
import { CheckpointError, datumFromRow, type AdamParams, type Datum, type TrainingBackend } from "@envace/training";
import { buildRehearsePrompt, type IncrementalRenderer, type RehearsePromptOptions } from "@envace/trajectory";
import type { AssistantMessage } from "@envace/protocol";

/** One supervised target of a reference dialogue: an Act turn, or the real answer to one call. */
export type DialogueExample =
  | { role: "act"; history: Message[]; target: AssistantMessage; text: string }
  | { role: "rehearse"; history: Message[]; latestAct: AssistantMessage; call: ToolCall; result: ToolResult; text: string };

/** A supervised target: of a dialogue, or a judgement of an attempt (`messages`: its reflect prompt; `text`: the assessment its real outcome gives). */
export type GoldExample = DialogueExample | { role: "reflect"; messages: Message[]; text: string };

/** The revision a reflect row teaches for a write the real world refused: the system prompt's own rule. */
export const REFUSED_WRITE_REVISION = "do not try it: tell the user why";

/**
 * Reflect rows of a gold dialogue, judged by the real outcome: the gold dialogue as an attempt
 * reached the goal; where the gold solution declined a write, the same attempt with that write
 * made (answered with the real shop's refusal, before the reply) did not, since a refused write
 * fails the outcome check. A policy trained on them judges its rehearsals the way the outcome
 * check would, so the rehearsal memory holds its own judgements instead of the fallback's.
 */
export function reflectExamples(
  task: Task,
  gold: Trajectory,
  declined: { call: ToolCall; result: ToolResult } | undefined,
  instructions: string,
): GoldExample[] {
  const judged = (attempt: AttemptDigest, reachedGoal: boolean, wentWrong: string, revision: string): GoldExample => ({
    role: "reflect",
    messages: buildReflectPrompt(task, attempt, instructions),
    text: reflectOutput({ reachedGoal, wentWrong, revision }),
  });
  const attempt = digestAttempt(gold, 0);
  const examples = [judged(attempt, true, "", "")];
  if (declined?.result.status === "error") {
    const { call, result } = declined;
    const events = [...attempt.events];
    const reply = events.findIndex((event) => event.kind === "reply");
    events.splice(reply < 0 ? events.length : reply, 0, { kind: "call", name: call.name, arguments: call.arguments, result, source: "model" });
    examples.push(judged({ ...attempt, events }, false, `${callText(call.name, call.arguments)}: ${result.error.code}`, REFUSED_WRITE_REVISION));
  }
  return examples;
}

export interface SftRenderer {
  renderer: IncrementalRenderer;
  rehearsePrompt: RehearsePromptOptions;
  /**
   * Loss weight of the tokens of tool-call argument values in Act targets (default 1). The
   * values (a name from the request, an id from a tool answer) are a few percent of the target
   * tokens but carry what the task is about; unweighted, a small model fits the format and never
   * learns to copy them (see docs/experiments/tiny-default-copying.md).
   */
  argumentWeight?: number;
}

/** A gold training row, with a loss weight per output token where they are not all 1. */
export type SftRow = TrainingRow & { outputWeights?: number[] };

function stopToken(renderer: IncrementalRenderer): number {
  const stop = renderer.tokenizer.stopTokenIds[0];
  if (stop === undefined) throw new CheckpointError("the tokenizer has no stop token to end a supervised target with");
  return stop;
}

/**
 * The training rows of one gold dialogue, tokenised exactly as a rollout would be: Act rows are
 * rendered incrementally (each prompt extends the previous prompt and output), Rehearse rows with
 * the Rehearse prompt builder. Every target ends with the stop token the model must learn to emit.
 */
export function goldRows(task: Task, examples: readonly GoldExample[], { renderer, rehearsePrompt, argumentWeight = 1 }: SftRenderer): SftRow[] {
  const stop = stopToken(renderer);
  const tools: readonly ToolSpec[] = task.tools;
  const rows: SftRow[] = [];
  let previous: { generation: Generation; seen: number } | undefined;
  examples.forEach((example, index) => {
    const outputTokens = [...renderer.tokenizer.encode(example.text), stop];
    let promptTokens: number[];
    if (example.role === "reflect") {
      promptTokens = renderer.prompt(example.messages, []);
    } else if (example.role === "act") {
      promptTokens =
        previous === undefined
          ? renderer.prompt(example.history, tools)
          : renderer.continuePrompt(previous.generation, example.history.slice(previous.seen), tools);
      previous = {
        generation: { role: "act", text: example.text, promptTokens, outputTokens, logprobs: null, finishReason: "stop" },
        // The next Act example's history repeats this turn; only what follows it is appended.
        seen: example.history.length + 1,
      };
    } else {
      const messages = buildRehearsePrompt({ tools, history: example.history, latestAct: example.latestAct, call: example.call }, rehearsePrompt);
      promptTokens = renderer.prompt(messages, []);
    }
    const row: SftRow = {
      taskId: task.id,
      trajectoryId: `${task.id}/gold`,
      rollout: 0,
      index,
      role: example.role,
      promptTokens,
      outputTokens,
      logprobs: outputTokens.map(() => 0),
      invalid: false,
    };
    if (example.role === "act" && argumentWeight !== 1) {
      const weighted = argumentTokens(renderer.tokenizer, example.text, outputTokens, example.target.tool_calls ?? []);
      if (weighted.size > 0) row.outputWeights = outputTokens.map((_, t) => (weighted.has(t) ? argumentWeight : 1));
    }
    rows.push(row);
  });
  return rows;
}

/**
 * The output-token positions of the argument values of `calls` in `text`, found in order (key,
 * then value) and mapped to tokens where the tokenizer splits at the value's edges; a value it
 * does not split there, or cannot be found, is left out.
 */
export function argumentTokens(
  tokenizer: IncrementalRenderer["tokenizer"],
  text: string,
  tokens: readonly number[],
  calls: readonly { function: { arguments: string } }[],
): Set<number> {
  const positions = new Set<number>();
  const tokenAt = (end: number): number | undefined => {
    const prefix = tokenizer.encode(text.slice(0, end));
    return prefix.every((token, i) => tokens[i] === token) ? prefix.length : undefined;
  };
  let cursor = 0;
  for (const call of calls) {
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments);
    } catch {
      continue;
    }
    for (const [key, value] of leaves(args)) {
      const keyAt = text.indexOf(`${JSON.stringify(key)}:`, cursor);
      if (keyAt < 0) break;
      const needle = typeof value === "string" ? JSON.stringify(value).slice(1, -1) : JSON.stringify(value);
      const start = text.indexOf(needle, keyAt + key.length + 3);
      if (start < 0 || needle.length === 0) continue;
      cursor = start + needle.length;
      const first = tokenAt(start);
      const last = tokenAt(cursor);
      if (first === undefined || last === undefined) continue;
      for (let t = first; t < last; t++) positions.add(t);
    }
  }
  return positions;
}

/** The scalar leaves of a JSON value with the key that holds each, in document order. */
function leaves(value: unknown, key = ""): [string, string | number | boolean][] {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return key === "" ? [] : [[key, value]];
  if (Array.isArray(value)) return value.flatMap((item) => leaves(item, key));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => leaves(v, k));
  return [];
}

/**
 * Rows whose prompt continues the previous row's prompt and output become one datum, so a
 * dialogue's Act turns cost one pass instead of one per turn. Exact for the cross-entropy sum.
 */
export function mergeContinuations(rows: readonly SftRow[]): Datum[] {
  const data: Datum[] = [];
  // The open datum of each trajectory and role: Act rows interleave with Rehearse rows.
  const open = new Map<string, { datum: Datum; full: number[] }>();
  for (const row of rows) {
    const key = `${row.trajectoryId}\u0000${row.role}`;
    const datum = datumFromRow(row, 0);
    if (row.outputWeights !== undefined) {
      const offset = datum.tokens.length - row.outputTokens.length;
      row.outputWeights.forEach((w, t) => (datum.mask[offset + t] = w));
    }
    const last = open.get(key);
    const full = [...row.promptTokens, ...row.outputTokens];
    if (last !== undefined && row.promptTokens.length >= last.full.length && last.full.every((token, i) => row.promptTokens[i] === token)) {
      const start = last.datum.tokens.length;
      for (const field of ["tokens", "targetTokens", "logprobs", "advantages", "mask"] as const) {
        last.datum[field].push(...datum[field].slice(start));
      }
      last.full = full;
    } else {
      data.push(datum);
      open.set(key, { datum, full });
    }
  }
  return data;
}

/** The learning rate of batch `index` of `total`: linear warm-up, then cosine decay to `floor`·peak. */
export function cosineSchedule(peak: number, index: number, total: number, warmupRatio: number, floor = 0.1): number {
  const warmup = Math.floor(total * warmupRatio);
  if (index < warmup) return (peak * (index + 1)) / warmup;
  const progress = total - warmup <= 1 ? 1 : (index - warmup) / (total - warmup - 1);
  return peak * (floor + (1 - floor) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}

export interface SftOptions {
  epochs: number;
  batchSize: number;
  adam: AdamParams;
  /** Learning rate of each batch (default: `adam.learningRate` throughout). */
  schedule?: (batch: number, total: number) => number;
  /** Shuffles the data each epoch. */
  shuffle: (data: Datum[], epoch: number) => Datum[];
  onBatch?: (progress: { epoch: number; batch: number; batches: number; loss: number; tokens: number }) => void;
}

/** Supervised warm start: cross-entropy on the gold targets, summed per batch and divided by its target tokens. */
export async function supervisedWarmStart(backend: TrainingBackend, data: readonly Datum[], options: SftOptions): Promise<void> {
  const batches = Math.ceil(data.length / options.batchSize);
  const total = batches * options.epochs;
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    const order = options.shuffle([...data], epoch);
    for (let b = 0; b < batches; b++) {
      const batch = order.slice(b * options.batchSize, (b + 1) * options.batchSize);
      const tokens = batch.reduce((sum, d) => sum + d.mask.reduce((s, m) => s + m, 0), 0);
      // Tinker's cross-entropy is a sum; weighting by 1/tokens gives a per-token mean and a stable step size.
      const weighted = batch.map((d) => ({ ...d, mask: d.mask.map((m) => m / tokens) }));
      const { loss } = await backend.forwardBackward(weighted, { type: "cross_entropy" });
      const learningRate = options.schedule?.(epoch * batches + b, total) ?? options.adam.learningRate;
      await backend.optimStep({ ...options.adam, learningRate });
      options.onBatch?.({ epoch, batch: b, batches, loss, tokens });
    }
  }
}
