/**
 * Token sampling from one row of logits: temperature, top-k, top-p, seeded randomness, and the
 * log-probability of the chosen token under the distribution it was drawn from.
 */

/** A seeded random source in [0, 1): SplitMix32 — small, fast, and good enough for sampling. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    z = (z ^ (z >>> 16)) >>> 0;
    return z / 4294967296;
  };
}

export interface TokenSamplingParams {
  temperature: number;
  topP: number;
  topK: number;
}

export interface SampledToken {
  token: number;
  /**
   * log π(token) under the distribution the token was drawn from: softmax(logits / temperature)
   * restricted to the top-k / top-p set and renormalised. Temperature 0 is greedy decoding, a
   * point mass: the logprob is 0 (as the training package's sampler reports it).
   */
  logprob: number;
}

/** log Σ exp(x_i · scale), computed stably. */
function logSumExp(logits: ArrayLike<number>, scale: number, indices?: ArrayLike<number>): number {
  const n = indices ? indices.length : logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = logits[indices ? indices[i]! : i]! * scale;
    if (v > max) max = v;
  }
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.exp(logits[indices ? indices[i]! : i]! * scale - max);
  return max + Math.log(sum);
}

/** Index of the largest value (the first one on ties). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/**
 * The candidate set after top-k and top-p, most likely first, or `undefined` when neither
 * truncates (the whole vocabulary, in index order, which avoids a sort).
 */
export function candidateSet(logits: ArrayLike<number>, params: TokenSamplingParams): number[] | undefined {
  const vocab = logits.length;
  const k = params.topK > 0 && params.topK < vocab ? params.topK : vocab;
  if (k === vocab && params.topP >= 1) return undefined;
  const order = Array.from({ length: vocab }, (_, i) => i);
  order.sort((a, b) => logits[b]! - logits[a]! || a - b);
  const kept = order.slice(0, k);
  if (params.topP >= 1) return kept;
  const scale = 1 / params.temperature;
  const total = logSumExp(logits, scale, kept);
  let cumulative = 0;
  for (let i = 0; i < kept.length; i++) {
    cumulative += Math.exp(logits[kept[i]!]! * scale - total);
    // Keep the smallest prefix whose mass reaches top-p (the token that crosses it included).
    if (cumulative >= params.topP) return kept.slice(0, i + 1);
  }
  return kept;
}

/** Draw one token from `logits` (one vocabulary row). */
export function sampleToken(logits: ArrayLike<number>, params: TokenSamplingParams, random: () => number): SampledToken {
  if (params.temperature === 0) return { token: argmax(logits), logprob: 0 };
  const scale = 1 / params.temperature;
  const candidates = candidateSet(logits, params);
  const total = logSumExp(logits, scale, candidates);
  const u = random();
  let cumulative = 0;
  const n = candidates ? candidates.length : logits.length;
  let last = candidates ? candidates[0]! : 0;
  for (let i = 0; i < n; i++) {
    const token = candidates ? candidates[i]! : i;
    const logprob = logits[token]! * scale - total;
    if (logprob === -Infinity) continue;
    last = token;
    cumulative += Math.exp(logprob);
    if (u < cumulative) return { token, logprob };
  }
  // Rounding left the cumulative mass a hair below 1 and u above it: take the last candidate.
  return { token: last, logprob: logits[last]! * scale - total };
}
