import type { SamplingParams } from "@envace/protocol";
import type { Rng } from "./rng.js";

/**
 * Draw one token from next-token logits under `params`, and its log-probability under the
 * distribution actually sampled from: softmax(logits / temperature), restricted to the top-k
 * tokens and then to the top-p nucleus, renormalised. At temperature 1 with no top-k/top-p that
 * is the model's own distribution, so the log-probability equals the learner's (what training
 * needs). Temperature 0 is greedy decoding: the distribution is a point mass and the
 * log-probability is 0.
 */
export function sampleToken(
  logits: ArrayLike<number>,
  params: Pick<SamplingParams, "temperature" | "topP" | "topK">,
  rng: Rng,
): { token: number; logprob: number } {
  const V = logits.length;
  if (params.temperature === 0) {
    let best = 0;
    for (let i = 1; i < V; i++) if (logits[i]! > logits[best]!) best = i;
    return { token: best, logprob: 0 };
  }
  const inv = 1 / params.temperature;
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i]! * inv);
  const weights = new Float64Array(V);
  for (let i = 0; i < V; i++) weights[i] = Math.exp(logits[i]! * inv - max);
  const truncate = (params.topK > 0 && params.topK < V) || params.topP < 1;
  let candidates: number[] | null = null;
  if (truncate) {
    const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => weights[b]! - weights[a]! || a - b);
    let keep = params.topK > 0 ? Math.min(params.topK, V) : V;
    if (params.topP < 1) {
      let total = 0;
      for (let k = 0; k < keep; k++) total += weights[order[k]!]!;
      let cumulative = 0;
      for (let k = 0; k < keep; k++) {
        cumulative += weights[order[k]!]!;
        // The nucleus is the smallest prefix whose mass reaches topP (the crossing token included).
        if (cumulative >= params.topP * total) {
          keep = k + 1;
          break;
        }
      }
    }
    candidates = order.slice(0, keep);
  }
  let total = 0;
  if (candidates) for (const i of candidates) total += weights[i]!;
  else for (let i = 0; i < V; i++) total += weights[i]!;
  let u = rng.next() * total;
  let token = -1;
  const pool = candidates ?? null;
  const count = pool ? pool.length : V;
  for (let k = 0; k < count; k++) {
    const i = pool ? pool[k]! : k;
    u -= weights[i]!;
    if (u < 0) {
      token = i;
      break;
    }
  }
  // Rounding can leave u a hair above zero after the last candidate: take the last one with mass.
  if (token < 0) {
    for (let k = count - 1; k >= 0; k--) {
      const i = pool ? pool[k]! : k;
      if (weights[i]! > 0) {
        token = i;
        break;
      }
    }
  }
  return { token, logprob: Math.log(weights[token]! / total) };
}
