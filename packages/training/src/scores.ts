import * as tf from "@tensorflow/tfjs-core";
import type { TokenScores } from "./transformer.js";
import { heapView } from "./wasm.js";

/** What the output head keeps of a forward pass: logits, their softmax and their mean, [N, V] and [N, 1]. */
export interface LogitTensors {
  logits: tf.Tensor;
  probs: tf.Tensor;
  meanLogit: tf.Tensor;
}

/**
 * log p(target) = z_t − logsumexp(z) and entropy = logsumexp(z) − Σ p z, from the softmax kernel
 * (tfjs-wasm's softmax is vectorised, its exp and logSoftmax are not): logsumexp(z) = max z − log max p.
 */
export function readScores(head: LogitTensors, targets: Int32Array, V: number): TokenScores {
  const maxLogit = tf.max(head.logits, 1);
  const maxProb = tf.max(head.probs, 1);
  const zMax = maxLogit.dataSync();
  const pMax = maxProb.dataSync();
  maxLogit.dispose();
  maxProb.dispose();
  const mean = head.meanLogit.dataSync();
  const N = targets.length;
  const logprobs = new Float32Array(N);
  const entropies = new Float32Array(N);
  const logits = heapView(head.logits);
  for (let i = 0; i < N; i++) {
    const lse = zMax[i]! - Math.log(pMax[i]!);
    logprobs[i] = logits[i * V + targets[i]!]! - lse;
    entropies[i] = lse - mean[i]!;
  }
  return { logprobs, entropies };
}
