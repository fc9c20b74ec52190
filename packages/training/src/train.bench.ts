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

/** Seconds of process CPU time (all threads) since `start`. */
function cpuSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

/**
 * The matMul roofline: the best plain 2-D matMul throughput among a square and the model's own
 * shapes, by wall time (best of 15 runs) and by process CPU time (over the 15 runs; robust to
 * other processes taking turns on the cores).
 */
function matmulRoofline(): { wall: number; cpu: number; shapes: string[] } {
  const shapes: [number, number, number][] = [
    [1024, 1024, 1024],
    [2048, 192, 512],
    [2048, 512, 192],
  ];
  let wall = 0;
  let cpu = 0;
  const lines: string[] = [];
  for (const [m, k, n] of shapes) {
    const a = tf.randomNormal([m, k]);
    const b = tf.randomNormal([k, n]);
    tf.matMul(a, b).dispose();
    const flops = 2 * m * k * n;
    let fastest = Infinity;
    const c0 = process.cpuUsage();
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      tf.matMul(a, b).dispose();
      fastest = Math.min(fastest, (performance.now() - t0) / 1000);
    }
    const cpuRate = (15 * flops) / cpuSince(c0);
    lines.push(`${m}×${k}·${k}×${n}: ${fmt(flops / fastest / 1e9, 1)} (CPU ${fmt(cpuRate / 1e9, 1)})`);
    wall = Math.max(wall, flops / fastest);
    cpu = Math.max(cpu, cpuRate);
    a.dispose();
    b.dispose();
  }
  return { wall, cpu, shapes: lines };
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
  let fastestStep = Infinity;
  for (let s = 0; s < STEPS; s++) {
    const data = randomData(rng);
    const s0 = performance.now();
    await model.forwardBackward(data, loss);
    await model.optimStep(adam);
    fastestStep = Math.min(fastestStep, (performance.now() - s0) / 1000);
  }
  const trainSeconds = (performance.now() - t0) / 1000;
  const trainCpuSeconds = cpuSince(cpu0);
  const stepTokens = ROWS * SEQ;
  const trainTokens = STEPS * stepTokens;
  // PaLM's accounting: 6N per token for the weights (forward 2N, backward 4N; N includes the
  // tied embedding once, for the logits) plus 12·L·D·T for attention scores and values over the
  // full T×T matrix (no discount for the causal mask).
  const trainFlopsPerToken = 6 * N + 12 * L * D * SEQ;
  const trainRate = trainTokens / trainSeconds;
  const trainCpuRate = trainTokens / trainCpuSeconds;

  const sampler = await model.saveWeightsForSampler();
  const promptLength = 16;
  const newTokens = SEQ - promptLength;
  const prompts = Array.from({ length: STREAMS }, () => Array.from({ length: promptLength }, () => rng.nextUint32() % config.vocabSize));
  const params = { temperature: 1, maxTokens: newTokens };
  await sampler.sample(prompts[0]!, { ...params, maxTokens: 8, seed: 0 });
  const g0 = performance.now();
  const gc0 = process.cpuUsage();
  const outs = await Promise.all(prompts.map((p, i) => sampler.sample(p, { ...params, seed: i })));
  const genSeconds = (performance.now() - g0) / 1000;
  const genCpuSeconds = cpuSince(gc0);
  const genTokens = outs.reduce((n, o) => n + o.tokens.length, 0);
  const s0 = performance.now();
  const single = await sampler.sample(prompts[0]!, { ...params, seed: 99 });
  const singleSeconds = (performance.now() - s0) / 1000;
  // Per generated token: 2N for the weights plus 4·L·D·context for attention, context averaging
  // prompt + half the new tokens.
  const genFlopsPerToken = 2 * N + 4 * L * D * (promptLength + newTokens / 2);
  const genRate = genTokens / genSeconds;
  const genCpuRate = genTokens / genCpuSeconds;
  const singleRate = single.tokens.length / singleSeconds;
  const loadAfter = loadavg();
  const rssMb = process.resourceUsage().maxRSS / 1024;
  const pct = (rate: number, flopsPerToken: number, roof: number) => `${fmt((100 * rate * flopsPerToken) / roof, 1)}%`;
  const gflops = (rate: number, flopsPerToken: number) => `${fmt((rate * flopsPerToken) / 1e9, 2)} GFLOP/s`;

  console.log(`@envace/training in-process backend — ${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), tfjs-wasm, one thread`);
  console.log(
    `load average before ${loadBefore.map((x) => x.toFixed(2)).join(" ")}, after ${loadAfter.map((x) => x.toFixed(2)).join(" ")} (other processes share these cores; CPU-time figures discount their turns)`,
  );
  console.log(
    `model: ${fmt(N)} parameters (V=${config.vocabSize}, D=${D}, L=${L}, heads=${config.numHeads}, F=${config.intermediateSize}), sequence length ${SEQ}`,
  );
  console.log(`matMul roofline, GFLOP/s: wall ${fmt(roofline.wall / 1e9, 1)}, CPU-time ${fmt(roofline.cpu / 1e9, 1)}  [${roofline.shapes.join("; ")}]`);
  console.log(`training: GRPO loss, ${ROWS}×${SEQ} tokens per step, forwardBackward + optimStep, ${STEPS} steps after one warm-up step`);
  console.log(`  FLOP accounting: 6·N + 12·L·D·T = ${fmt(trainFlopsPerToken / 1e6, 2)} MFLOP per token (PaLM's; full T×T attention)`);
  console.log(
    `  wall:     ${fmt(trainRate)} tokens/s = ${gflops(trainRate, trainFlopsPerToken)} = ${pct(trainRate, trainFlopsPerToken, roofline.wall)} of the wall roofline (fastest step: ${fmt(stepTokens / fastestStep)} tokens/s = ${pct(stepTokens / fastestStep, trainFlopsPerToken, roofline.wall)})`,
  );
  console.log(
    `  CPU time: ${fmt(trainCpuRate)} tokens/CPU-s = ${gflops(trainCpuRate, trainFlopsPerToken)} = ${pct(trainCpuRate, trainFlopsPerToken, roofline.cpu)} of the CPU-time roofline`,
  );
  console.log(`generation: ${STREAMS} concurrent streams, ${promptLength}-token prompts, ${newTokens} new tokens each, temperature 1`);
  console.log(`  FLOP accounting: 2·N + 4·L·D·(mean context) = ${fmt(genFlopsPerToken / 1e6, 2)} MFLOP per generated token`);
  console.log(
    `  wall:     ${fmt(genRate)} tokens/s = ${pct(genRate, genFlopsPerToken, roofline.wall)} of the wall roofline; one stream alone ${fmt(singleRate)} tokens/s = ${pct(singleRate, genFlopsPerToken, roofline.wall)}`,
  );
  console.log(`  CPU time: ${fmt(genCpuRate)} tokens/CPU-s = ${pct(genCpuRate, genFlopsPerToken, roofline.cpu)} of the CPU-time roofline`);
  console.log(`peak RSS: ${fmt(rssMb)} MB`);
  model.dispose();
}

await main();
