import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Datum } from "../backend.js";
import type { InProcessBackend } from "../in-process.js";
import { Rng } from "../rng.js";

/** A small model and a fixed stream of batches: the training run the resume test interrupts. */
export const resumeConfig = {
  vocabSize: 32,
  hiddenSize: 32,
  intermediateSize: 64,
  numLayers: 2,
  numHeads: 2,
  maxPositionEmbeddings: 64,
};

export const resumeAdam = { learningRate: 3e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.01, gradClipNorm: 1 };

/** The batch of step `step` (0-based): four copy-task sequences drawn from a generator seeded by the step. */
export function batchFor(step: number): Datum[] {
  const rng = Rng.fromSeed(1000 + step);
  return Array.from({ length: 4 }, () => {
    const half = Array.from({ length: 6 }, () => 1 + (rng.nextUint32() % 30));
    const full = [0, ...half, 31, ...half];
    const mask = full.slice(1).map((_, t) => (t >= half.length + 1 ? 1 : 0));
    return { tokens: full.slice(0, -1), targetTokens: full.slice(1), logprobs: mask.map(() => 0), advantages: mask.map(() => 0), mask };
  });
}

/** One training step; returns the loss of the step's batch before the update. */
export async function trainStep(backend: InProcessBackend): Promise<number> {
  const { loss } = await backend.forwardBackward(batchFor(backend.optimizerStep), { type: "cross_entropy" });
  await backend.optimStep(resumeAdam);
  return loss;
}

export function checkpointDir(runDir: string, step: number): string {
  return join(runDir, `step-${String(step).padStart(6, "0")}`);
}

/** The newest complete checkpoint in `runDir` (temporary folders of interrupted saves are ignored). */
export async function latestCheckpoint(runDir: string): Promise<{ step: number; dir: string } | null> {
  const steps = (await readdir(runDir).catch(() => [] as string[]))
    .map((name) => /^step-(\d{6})$/.exec(name))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]));
  if (steps.length === 0) return null;
  const step = Math.max(...steps);
  return { step, dir: checkpointDir(runDir, step) };
}
