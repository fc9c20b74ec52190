import { headDim, type TinyModelConfig } from "./config.js";
import { EMBED, FINAL_NORM, layerNames, type Parameters } from "./parameters.js";

/**
 * The tiny model's forward pass written as plainly as possible, in float64, one position at a
 * time: the specification the fast tfjs path (and any export of the checkpoint) is tested
 * against. Hugging Face Llama semantics: pre-norm RMSNorm, q/k/v/o and gate/up/down projections
 * y = x·Wᵀ with W in [out, in] layout, rotary embedding with the rotate_half convention, causal
 * softmax attention scaled by 1/√headDim, SwiGLU, final RMSNorm, logits from the tied embedding.
 * Slow (no batching, no caching across calls); for tests and small checks only.
 */
export function referenceLogits(config: TinyModelConfig, params: Parameters, tokens: readonly number[]): Float64Array[] {
  const D = config.hiddenSize;
  const H = config.numHeads;
  const dh = headDim(config);
  const half = dh / 2;
  const p = (name: string) => params.get(name)!;
  const embed = p(EMBED);
  let x: Float64Array[] = tokens.map((tok) => Float64Array.from(embed.subarray(tok * D, (tok + 1) * D)));
  for (let l = 0; l < config.numLayers; l++) {
    const n = layerNames(l);
    const h = x.map((row) => rmsNorm(row, p(n.inputNorm), config.rmsNormEps));
    const rope = (vec: Float64Array, t: number) => {
      const out = new Float64Array(D);
      for (let head = 0; head < H; head++) {
        for (let j = 0; j < half; j++) {
          const angle = t / config.ropeTheta ** ((2 * j) / dh);
          const a = vec[head * dh + j]!;
          const b = vec[head * dh + j + half]!;
          out[head * dh + j] = a * Math.cos(angle) - b * Math.sin(angle);
          out[head * dh + j + half] = b * Math.cos(angle) + a * Math.sin(angle);
        }
      }
      return out;
    };
    const q = h.map((row, t) => rope(linear(row, p(n.q), D), t));
    const k = h.map((row, t) => rope(linear(row, p(n.k), D), t));
    const v = h.map((row) => linear(row, p(n.v), D));
    const attended = q.map((qt, t) => {
      const out = new Float64Array(D);
      for (let head = 0; head < H; head++) {
        const scores = [];
        for (let u = 0; u <= t; u++) {
          let dot = 0;
          for (let j = 0; j < dh; j++) dot += qt[head * dh + j]! * k[u]![head * dh + j]!;
          scores.push(dot / Math.sqrt(dh));
        }
        const probs = softmax(scores);
        probs.forEach((pr, u) => {
          for (let j = 0; j < dh; j++) out[head * dh + j]! += pr * v[u]![head * dh + j]!;
        });
      }
      return out;
    });
    x = x.map((row, t) => add(row, linear(attended[t]!, p(n.o), D)));
    x = x.map((row) => {
      const h2 = rmsNorm(row, p(n.postNorm), config.rmsNormEps);
      const gate = linear(h2, p(n.gate), config.intermediateSize);
      const up = linear(h2, p(n.up), config.intermediateSize);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!);
      return add(row, linear(act, p(n.down), D));
    });
  }
  return x.map((row) => linear(rmsNorm(row, p(FINAL_NORM), config.rmsNormEps), embed, config.vocabSize));
}

/** Log-probability of each target and entropy of each next-token distribution, from `referenceLogits`. */
export function referenceScores(
  config: TinyModelConfig,
  params: Parameters,
  tokens: readonly number[],
  targets: readonly number[],
): { logprobs: number[]; entropies: number[] } {
  const logits = referenceLogits(config, params, tokens);
  const logprobs: number[] = [];
  const entropies: number[] = [];
  logits.forEach((z, t) => {
    const max = Math.max(...z);
    const lse = max + Math.log(z.reduce((s, zi) => s + Math.exp(zi - max), 0));
    logprobs.push(z[targets[t]!]! - lse);
    entropies.push(-z.reduce((s, zi) => s + Math.exp(zi - lse) * (zi - lse), 0));
  });
  return { logprobs, entropies };
}

function rmsNorm(x: Float64Array, weight: Float32Array, eps: number): Float64Array {
  const ms = x.reduce((s, v) => s + v * v, 0) / x.length;
  const r = 1 / Math.sqrt(ms + eps);
  return x.map((v, i) => v * r * weight[i]!);
}

/** y = x·Wᵀ for W in [out, in] layout. */
function linear(x: Float64Array, w: Float32Array, out: number): Float64Array {
  const n = x.length;
  const y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += w[o * n + i]! * x[i]!;
    y[o] = s;
  }
  return y;
}

function add(a: Float64Array, b: Float64Array): Float64Array {
  return a.map((v, i) => v + b[i]!);
}

function softmax(z: number[]): number[] {
  const max = Math.max(...z);
  const e = z.map((v) => Math.exp(v - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}
