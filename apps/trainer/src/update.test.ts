import type { ScoredRow } from "@envace/grpo";
import type { TrainingRow } from "@envace/protocol";
import type { Datum, TrainingBackend } from "@envace/training";
import { describe, expect, it } from "vitest";
import { ActorConfig } from "./config/schema.js";
import { adamOptions, policyLossOptions } from "./config/to-options.js";
import { miniBatches, policyUpdate } from "./update.js";

/** A one-token Act row of task `taskId`; `output` is the token, so tests can tell rows apart. */
function scoredRow(taskId: string, output: number, advantage = 1): ScoredRow {
  const row: TrainingRow = {
    taskId,
    trajectoryId: `${taskId}/${output}`,
    rollout: 0,
    index: 0,
    role: "act",
    promptTokens: [1],
    outputTokens: [output],
    logprobs: [-1],
    invalid: false,
  };
  return { row, reward: 1, score: 1, advantage, groupRole: "act" };
}

const tasksOf = (batches: ScoredRow[][]) => batches.map((b) => b.map((s) => `${s.row.taskId}${s.row.outputTokens[0]}`));

describe("miniBatches", () => {
  it("keeps each task's rows together, tasks in the order they first appear", () => {
    const rows = [scoredRow("a", 1), scoredRow("a", 2), scoredRow("b", 3), scoredRow("c", 4), scoredRow("b", 5), scoredRow("c", 6), scoredRow("d", 7)];
    expect(tasksOf(miniBatches(rows, 2))).toEqual([
      ["a1", "a2", "b3", "b5"],
      ["c4", "c6", "d7"],
    ]);
    expect(tasksOf(miniBatches(rows, 1))).toEqual([["a1", "a2"], ["b3", "b5"], ["c4", "c6"], ["d7"]]);
  });

  it("takes everything at once without a size, and nothing from no rows", () => {
    const rows = [scoredRow("b", 1), scoredRow("a", 2), scoredRow("b", 3)];
    expect(tasksOf(miniBatches(rows, null))).toEqual([["b1", "a2", "b3"]]);
    expect(miniBatches([], null)).toEqual([]);
    expect(miniBatches([], 2)).toEqual([]);
  });
});

/** Records what each forward-backward saw and counts optimizer steps; the n-th update reports loss n. */
function recordingBackend() {
  const seen: { outputs: number[]; step: number }[] = [];
  let steps = 0;
  const backend: TrainingBackend = {
    forwardBackward: (data: Datum[]) => {
      seen.push({ outputs: data.map((d) => d.targetTokens.at(-1)!), step: steps });
      return Promise.resolve({
        logprobs: data.map((d) => d.logprobs),
        loss: seen.length,
        metrics: { "clip_fraction:mean": seen.length / 10, "ratio:max": 1 + seen.length / 10, "tokens:sum": data.length },
      });
    },
    forward: () => Promise.reject(new Error("not used")),
    optimStep: () => Promise.resolve({ learning_rate: 1e-4, grad_norm: ++steps }),
    saveWeightsForSampler: () => Promise.reject(new Error("not used")),
  };
  return { backend, seen, steps: () => steps };
}

describe("policyUpdate", () => {
  const actor = ActorConfig.parse({});
  const rows = [scoredRow("a", 11), scoredRow("b", 21), scoredRow("a", 12), scoredRow("c", 31), scoredRow("d", 41), scoredRow("b", 22)];

  it("takes one step on every row by default", async () => {
    const { backend, seen, steps } = recordingBackend();
    const result = await policyUpdate(backend, rows, policyLossOptions(actor), adamOptions(actor, 1e-4));
    expect(seen).toEqual([{ outputs: [11, 21, 12, 31, 41, 22], step: 0 }]);
    expect(steps()).toBe(1);
    expect(result.loss).toBe(1);
    expect(result.tokens).toBe(6);
  });

  it("steps once per mini-batch of whole groups, epoch after epoch, and reports the means", async () => {
    const { backend, seen, steps } = recordingBackend();
    const result = await policyUpdate(backend, rows, policyLossOptions(actor), adamOptions(actor, 1e-4), undefined, {}, { size: 2, epochs: 2 });
    // Tasks a, b | c, d; each mini-batch's gradient is applied before the next one is computed.
    expect(seen).toEqual([
      { outputs: [11, 12, 21, 22], step: 0 },
      { outputs: [31, 41], step: 1 },
      { outputs: [11, 12, 21, 22], step: 2 },
      { outputs: [31, 41], step: 3 },
    ]);
    expect(steps()).toBe(4);
    // Losses 1, 2, 3, 4 → 2.5; clip fractions 0.1–0.4 → mean 0.25; ratio maxima 1.1–1.4 → 1.4;
    // rows 4 + 2 + 4 + 2 → sum 12; grad norms 1–4 (no reduction named) → mean 2.5. Tokens counted once.
    expect(result.loss).toBe(2.5);
    expect(result.metrics["clip_fraction:mean"]).toBeCloseTo(0.25, 12);
    expect(result.metrics["ratio:max"]).toBeCloseTo(1.4, 12);
    expect(result.metrics["tokens:sum"]).toBe(12);
    expect(result.metrics.grad_norm).toBe(2.5);
    expect(result.tokens).toBe(6);
  });
});
