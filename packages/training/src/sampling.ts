import type { SamplingParams } from "@envace/protocol";

/** The sampling parameters that shape the next-token distribution. */
export type TokenSamplingParams = Pick<SamplingParams, "temperature" | "topP" | "topK">;

export interface SampledToken {
  token: number;
  /**
   * log π(token) under the distribution the token was drawn from: softmax(logits / temperature)
   * restricted to the top-k tokens, then to the top-p nucleus, renormalised. At temperature 1
   * with no top-k/top-p that is the model's own distribution, so the log-probability equals the
   * learner's (what training needs). Temperature 0 is greedy decoding, a point mass: the
   * log-probability is 0.
   */
  logprob: number;
}

/** Index of the largest value (the first one on ties). */
export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/**
 * Unnormalised probabilities exp(logit · inv − max), inv = 1 / temperature, and that max. Weights
 * relative to the largest (which is exactly 1) skip the rounding of normalising first, which can
 * put a mass of exactly top-p a hair below it and let an extra token into the nucleus.
 */
function temperedWeights(logits: ArrayLike<number>, inv: number): { weights: Float64Array; max: number } {
  const vocab = logits.length;
  let max = -Infinity;
  for (let i = 0; i < vocab; i++) max = Math.max(max, logits[i]! * inv);
  const weights = new Float64Array(vocab);
  for (let i = 0; i < vocab; i++) weights[i] = Math.exp(logits[i]! * inv - max);
  return { weights, max };
}

function truncation(weights: Float64Array, params: TokenSamplingParams): number[] | undefined {
  const vocab = weights.length;
  const k = params.topK > 0 && params.topK < vocab ? params.topK : vocab;
  if (k === vocab && params.topP >= 1) return undefined;
  const order = Array.from({ length: vocab }, (_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b);
  const kept = order.slice(0, k);
  if (params.topP >= 1) return kept;
  let total = 0;
  for (const i of kept) total += weights[i]!;
  let cumulative = 0;
  for (let n = 0; n < kept.length; n++) {
    cumulative += weights[kept[n]!]!;
    // The nucleus is the smallest prefix whose mass reaches top-p (the crossing token included).
    if (cumulative >= params.topP * total) return kept.slice(0, n + 1);
  }
  return kept;
}

/**
 * The tokens `sampleToken` may draw after top-k and top-p (applied to the tempered
 * distribution), most likely first, or `undefined` when neither truncates.
 */
export function candidateSet(logits: ArrayLike<number>, params: TokenSamplingParams): number[] | undefined {
  return truncation(temperedWeights(logits, 1 / params.temperature).weights, params);
}

/**
 * Draw one token from next-token logits (one vocabulary row) under `params`, by inverting the
 * cumulative distribution with one uniform draw from `random` (a value in [0, 1)): over the
 * candidates most likely first when top-k/top-p truncate, else in index order.
 */
export function sampleToken(logits: ArrayLike<number>, params: TokenSamplingParams, random: () => number): SampledToken {
  if (params.temperature === 0) return { token: argmax(logits), logprob: 0 };
  const inv = 1 / params.temperature;
  const { weights, max } = temperedWeights(logits, inv);
  const candidates = truncation(weights, params);
  const count = candidates ? candidates.length : weights.length;
  let total = 0;
  for (let n = 0; n < count; n++) total += weights[candidates ? candidates[n]! : n]!;
  let u = random() * total;
  let token = -1;
  for (let n = 0; n < count; n++) {
    const i = candidates ? candidates[n]! : n;
    u -= weights[i]!;
    if (u < 0) {
      token = i;
      break;
    }
  }
  // Rounding can leave u a hair above zero after the last candidate: take the last one with mass.
  for (let n = count - 1; token < 0 && n >= 0; n--) {
    const i = candidates ? candidates[n]! : n;
    if (weights[i]! > 0) token = i;
  }
  // In log space, so a draw of tiny probability keeps a precise logprob.
  return { token, logprob: logits[token]! * inv - max - Math.log(total) };
}
