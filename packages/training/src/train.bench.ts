// Training and generation throughput of the in-process backend for a ~2M-parameter model at
// sequence length 256, each as a fraction of the tfjs-wasm matMul throughput measured in the same run.
import { cpus, loadavg } from "node:os";
import * as tf from "@tensorflow/tfjs-core";
import { defaultPolicyLossConfig } from "@envace/grpo";
import type { Datum } from "./backend.js";
import { createTinyModel } from "./in-process.js";
import { Rng } from "./rng.js";
import { initWasmBackend } from "./wasm.js";

const config = { vocabSize: 1024, hiddenSize: 192, intermediateSize: 512, numLayers: 4, numHeads: 6, maxPositionEmbeddings: 256 };
const SEQ = 256;
const ROWS = 8;
const STEPS = Number(process.env.BENCH_STEPS ?? 6);
const STREAMS = 16;

const fmt = (x: number, digits = 0) => x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Best-of-n wall time of `fn`, in seconds. */
function best(n: number, fn: () => void): number {
  let min = Infinity;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, (performance.now() - t0) / 1000);
  }
  return min;
}

/** The matMul roofline: the best plain 2-D matMul throughput among a square and the model's own shapes. */
function matmulRoofline(): { flops: number; shapes: string[] } {
  const shapes: [number, number, number][] = [
    [1024, 1024, 1024],
    [2048, 192, 512],
    [2048, 512, 192],
  ];
  let flops = 0;
  const lines: string[] = [];
  for (const [m, k, n] of shapes) {
    const a = tf.randomNormal([m, k]);
    const b = tf.randomNormal([k, n]);
    tf.matMul(a, b).dispose();
    const seconds = best(15, () => tf.matMul(a, b).dispose());
    const rate = (2 * m * k * n) / seconds;
    lines.push(`${m}×${k}·${k}×${n}: ${fmt(rate / 1e9, 1)} GFLOP/s`);
    flops = Math.max(flops, rate);
    a.dispose();
    b.dispose();
  }
  return { flops, shapes: lines };
}

function randomData(rng: Rng): Datum[] {
  return Array.from({ length: ROWS }, () => {
    const full = Array.from({ length: SEQ + 1 }, () => rng.nextUint32() % config.vocabSize);
    const prompt = 32;
    const mask = full.slice(1).map((_, t) => (t >= prompt ? 1 : 0));
    const advantage = rng.next() - 0.5;
    return {
      tokens: full.slice(0, -1),
      targetTokens: full.slice(1),
      logprobs: mask.map((m) => (m ? -Math.log(config.vocabSize) + (rng.next() - 0.5) * 0.1 : 0)),
      advantages: mask.map((m) => m * advantage),
      mask,
    };
  });
}

async function main(): Promise<void> {
  await initWasmBackend();
  const loadBefore = loadavg();
  const roofline = matmulRoofline();
  const model = await createTinyModel(config, { seed: 1 });
  const N = model.parameterCount;
  const { numLayers: L, hiddenSize: D } = config;
  const rng = Rng.fromSeed(2);
  const loss = { type: "grpo" as const, config: defaultPolicyLossConfig };
  const adam = { learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 1 };

  // Warm-up: the first step builds caches and XNNPACK operators.
  await model.forwardBackward(randomData(rng), loss);
  await model.optimStep(adam);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let s = 0; s < STEPS; s++) {
    await model.forwardBackward(randomData(rng), loss);
    await model.optimStep(adam);
  }
  const trainSeconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const trainCpuSeconds = (cpu.user + cpu.system) / 1e6;
  const trainTokens = STEPS * ROWS * SEQ;
  // PaLM's accounting: 6N per token for the weights (forward 2N, backward 4N; N includes the
  // tied embedding once, for the logits) plus 12·L·D·T for attention scores and values over the
  // full T×T matrix (no discount for the causal mask).
  const trainFlopsPerToken = 6 * N + 12 * L * D * SEQ;
  const trainRate = trainTokens / trainSeconds;

  const sampler = await model.saveWeightsForSampler();
  const promptLength = 16;
  const newTokens = SEQ - promptLength;
  const prompts = Array.from({ length: STREAMS }, () => Array.from({ length: promptLength }, () => rng.nextUint32() % config.vocabSize));
  const params = { temperature: 1, maxTokens: newTokens };
  await sampler.sample(prompts[0]!, { ...params, maxTokens: 8, seed: 0 });
  const g0 = performance.now();
  const outs = await Promise.all(prompts.map((p, i) => sampler.sample(p, { ...params, seed: i })));
  const genSeconds = (performance.now() - g0) / 1000;
  const genTokens = outs.reduce((n, o) => n + o.tokens.length, 0);
  const s0 = performance.now();
  const single = await sampler.sample(prompts[0]!, { ...params, seed: 99 });
  const singleSeconds = (performance.now() - s0) / 1000;
  // Per generated token: 2N for the weights plus 4·L·D·context for attention, context averaging
  // prompt + half the new tokens.
  const genFlopsPerToken = 2 * N + 4 * L * D * (promptLength + newTokens / 2);
  const genRate = genTokens / genSeconds;
  const singleRate = single.tokens.length / singleSeconds;
  const loadAfter = loadavg();
  const rssMb = process.resourceUsage().maxRSS / 1024;
  const pct = (rate: number, flopsPerToken: number) => `${fmt((100 * rate * flopsPerToken) / roofline.flops, 1)}%`;

  console.log(`@envace/training in-process backend — ${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), tfjs-wasm, one thread`);
  console.log(`load average before ${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${loadAfter.map((x) => x.toFixed(2)).join(" ")} (others share these cores)`);
  console.log(`model: ${fmt(N)} parameters (V=${config.vocabSize}, D=${D}, L=${L}, heads=${config.numHeads}, F=${config.intermediateSize}), sequence length ${SEQ}`);
  console.log(`matMul roofline (best plain 2-D matMul, same run): ${fmt(roofline.flops / 1e9, 1)} GFLOP/s  [${roofline.shapes.join("; ")}]`);
  console.log(
    `training (GRPO loss, ${ROWS}×${SEQ} tokens per step, forwardBackward + optimStep, ${STEPS} steps): ${fmt(trainRate)} tokens/s, ` +
      `${fmt((trainFlopsPerToken * trainRate) / 1e9, 2)} GFLOP/s = ${pct(trainRate, trainFlopsPerToken)} of roofline ` +
      `(per CPU-second: ${fmt(trainTokens / trainCpuSeconds)} tokens, ${pct(trainTokens / trainCpuSeconds, trainFlopsPerToken)})`,
  );
  console.log(`  FLOP accounting: 6·N + 12·L·D·T = ${fmt(trainFlopsPerToken / 1e6, 2)} MFLOP per token`);
  console.log(
    `generation (${STREAMS} concurrent streams, ${promptLength}-token prompts, up to ${newTokens} new tokens, temperature 1): ` +
      `${fmt(genRate)} tokens/s = ${pct(genRate, genFlopsPerToken)} of roofline; one stream alone: ${fmt(singleRate)} tokens/s = ${pct(singleRate, genFlopsPerToken)}`,
  );
  console.log(`  FLOP accounting: 2·N + 4·L·D·(mean context) = ${fmt(genFlopsPerToken / 1e6, 2)} MFLOP per generated token`);
  console.log(`peak RSS: ${fmt(rssMb)} MB`);
  model.dispose();
}

await main();
