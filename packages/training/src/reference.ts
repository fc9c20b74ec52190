import { toHfConfig, type TinyModelConfig } from "./config.js";
import { llamaShape } from "./llama-config.js";
import { llamaReferenceLogits } from "./llama-reference.js";
import type { Parameters } from "./parameters.js";

/**
 * The tiny model's forward pass written as plainly as possible, in float64, one position at a
 * time: the specification the fast tfjs path (and any export of the checkpoint) is tested
 * against. It is the general Llama reference (`llamaReferenceLogits`) at the tiny model's shape:
 * as many key/value heads as query heads, logits from the tied embedding. Slow (no batching, no
 * caching across calls); for tests and small checks only.
 */
export function referenceLogits(config: TinyModelConfig, params: Parameters, tokens: readonly number[]): Float64Array[] {
  return llamaReferenceLogits(llamaShape(toHfConfig(config)), params, tokens);
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
