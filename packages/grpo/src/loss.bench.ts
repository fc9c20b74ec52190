import type { TrainingRow } from "@envace/protocol";
import { performance } from "node:perf_hooks";
import { computeAdvantages } from "./advantages.js";
import { defaultPolicyLossConfig } from "./loss-config.js";
import { policyLoss, type LossRow } from "./loss.js";
import { crossEntropySum } from "./sum-losses.js";

// The reference loss runs inside the in-process backend's training step, once per micro-batch, so
// its cost per token matters. Measured against the cheapest loss over the same arrays.
const ROWS = 64;
const LENGTH = 256;
let state = 12345;
const random = () => {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 2 ** 32;
};
const rows: LossRow[] = Array.from({ length: ROWS }, () => {
  const prompt = Math.floor(LENGTH / 4);
  const mask = Array.from({ length: LENGTH }, (_, t) => (t >= prompt ? 1 : 0));
  const advantage = random() - 0.5;
  return {
    logprobs: mask.map(() => -3 * random()),
    samplerLogprobs: mask.map(() => -3 * random()),
    advantages: mask.map((m) => m * advantage),
    mask,
    refLogprobs: mask.map(() => -3 * random()),
    entropy: mask.map(() => 2 * random()),
  };
});
const tokens = ROWS * LENGTH;

function time(label: string, fn: () => unknown, units = tokens, unit = "positions"): number {
  for (let i = 0; i < 5; i++) fn();
  const runs = 40;
  const start = performance.now();
  for (let i = 0; i < runs; i++) fn();
  const ms = (performance.now() - start) / runs;
  console.log(`${label.padEnd(46)} ${ms.toFixed(3).padStart(8)} ms   ${(((units / ms) * 1000) / 1e6).toFixed(2).padStart(6)} M ${unit}/s`);
  return ms;
}

console.log(`${ROWS} rows × ${LENGTH} positions (${tokens} positions, 75% loss tokens)`);
const floor = time("crossEntropySum (floor: one pass, no exp)", () => crossEntropySum(rows));
const plain = time("policyLoss, clip + dual clip", () => policyLoss(rows, defaultPolicyLossConfig));
const full = time("policyLoss, clip + dual clip + k3 KL + entropy", () => policyLoss(rows, { ...defaultPolicyLossConfig, klCoef: 1e-3, entropyCoef: 1e-3 }));
console.log(`policyLoss costs ${(plain / floor).toFixed(1)}× the floor (${(full / floor).toFixed(1)}× with KL and entropy)`);

// Advantages for a paper-sized batch: 16 tasks × 4 rollouts × 30 turns × 2 roles.
const trainingRows: TrainingRow[] = [];
const verdicts = new Map<string, { status: "scored"; value: number }>();
for (let task = 0; task < 16; task++) {
  for (let rollout = 0; rollout < 4; rollout++) {
    const trajectoryId = `t${task}/${rollout}`;
    verdicts.set(trajectoryId, { status: "scored", value: random() });
    for (let index = 0; index < 60; index++) {
      trainingRows.push({
        taskId: `t${task}`,
        trajectoryId,
        rollout,
        index,
        role: index % 2 === 0 ? ("act" as const) : ("rehearse" as const),
        promptTokens: [1],
        outputTokens: [2],
        logprobs: [-1],
        invalid: false,
      });
    }
  }
}
time(`computeAdvantages, ${trainingRows.length} rows`, () => computeAdvantages(trainingRows, verdicts), trainingRows.length, "rows");
