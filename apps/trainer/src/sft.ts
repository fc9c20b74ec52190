import type { Generation, Message, Task, ToolCall, ToolResult, ToolSpec, TrainingRow } from "@envace/protocol";
import { datumFromRow, type AdamParams, type Datum, type TrainingBackend } from "@envace/training";
import { buildRehearsePrompt, type IncrementalRenderer, type RehearsePromptOptions } from "@envace/trajectory";
import type { AssistantMessage } from "@envace/protocol";

/** One supervised target of a gold dialogue: an Act turn, or the real answer to one call. */
export type GoldExample =
  | { role: "act"; history: Message[]; target: AssistantMessage; text: string }
  | { role: "rehearse"; history: Message[]; latestAct: AssistantMessage; call: ToolCall; result: ToolResult; text: string };

export interface SftRenderer {
  renderer: IncrementalRenderer;
  rehearsePrompt: RehearsePromptOptions;
}

function stopToken(renderer: IncrementalRenderer): number {
  const stop = renderer.tokenizer.stopTokenIds[0];
  if (stop === undefined) throw new Error("the tokenizer has no stop token to end a supervised target with");
  return stop;
}

/**
 * The training rows of one gold dialogue, tokenised exactly as a rollout would be: Act rows are
 * rendered incrementally (each prompt extends the previous prompt and output), Rehearse rows with
 * the Rehearse prompt builder. Every target ends with the stop token the model must learn to emit.
 */
export function goldRows(task: Task, examples: readonly GoldExample[], { renderer, rehearsePrompt }: SftRenderer): TrainingRow[] {
  const stop = stopToken(renderer);
  const tools: readonly ToolSpec[] = task.tools;
  const rows: TrainingRow[] = [];
  let previous: { generation: Generation; seen: number } | undefined;
  examples.forEach((example, index) => {
    const outputTokens = [...renderer.tokenizer.encode(example.text), stop];
    let promptTokens: number[];
    if (example.role === "act") {
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
      const messages = buildRehearsePrompt(
        { tools, history: example.history, latestAct: example.latestAct, call: example.call },
        rehearsePrompt,
      );
      promptTokens = renderer.prompt(messages, []);
    }
    rows.push({
      taskId: task.id,
      trajectoryId: `${task.id}/gold`,
      rollout: 0,
      index,
      role: example.role,
      promptTokens,
      outputTokens,
      logprobs: outputTokens.map(() => 0),
      invalid: false,
    });
  });
  return rows;
}

/**
 * Rows whose prompt continues the previous row's prompt and output become one datum, so a
 * dialogue's Act turns cost one pass instead of one per turn. Exact for the cross-entropy sum.
 */
export function mergeContinuations(rows: readonly TrainingRow[]): Datum[] {
  const data: Datum[] = [];
  // The open datum of each trajectory and role: Act rows interleave with Rehearse rows.
  const open = new Map<string, { datum: Datum; full: number[] }>();
  for (const row of rows) {
    const key = `${row.trajectoryId}\u0000${row.role}`;
    const datum = datumFromRow(row, 0);
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

