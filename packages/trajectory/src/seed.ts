import type { SamplingParams } from "@envace/protocol";

/**
 * A seed derived from `base` and the parts that name one request (rollout, turn, call, …): the
 * same parts always give the same seed, different parts unrelated ones (FNV-1a over 32-bit words,
 * then an avalanche). Non-negative and below 2³¹, as every sampler accepts.
 */
export function deriveSeed(base: number, ...parts: readonly number[]): number {
  let hash = 0x811c9dc5;
  for (const part of [base, Math.floor(base / 2 ** 32), ...parts]) {
    hash = Math.imul(hash ^ (part | 0), 0x01000193);
    hash ^= hash >>> 15;
    hash = Math.imul(hash, 0x2c1b3c6d);
    hash ^= hash >>> 12;
  }
  return (hash >>> 0) % 0x7fffffff;
}

/** `params` with its seed, if it has one, derived for the request named by `parts`. */
export function seededFor(params: SamplingParams, ...parts: readonly number[]): SamplingParams {
  return params.seed === undefined ? params : { ...params, seed: deriveSeed(params.seed, ...parts) };
}

/** A number naming `text` (FNV-1a over its UTF-16 code units), to derive seeds from ids. */
export function seedOfText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
