import { InvariantError } from "@envace/errors";
import { NonFiniteGradientError, TrainingInputError } from "./errors.js";
import * as tf from "@tensorflow/tfjs-core";
import type { AdamParams } from "./backend.js";

/** AdamW moments per tensor (same names and layouts as the parameters) and the steps taken. */
export interface AdamState {
  step: number;
  m: Map<string, tf.Tensor>;
  v: Map<string, tf.Tensor>;
}

export function freshAdamState(params: ReadonlyMap<string, tf.Tensor>): AdamState {
  const zeros = () => new Map([...params].map(([name, p]) => [name, tf.zerosLike(p)]));
  return { step: 0, m: zeros(), v: zeros() };
}

export function checkAdamParams(adam: AdamParams): void {
  const bad: string[] = [];
  if (!(adam.learningRate >= 0)) bad.push(`learningRate must be ≥ 0 (got ${adam.learningRate})`);
  if (!(adam.beta1 >= 0 && adam.beta1 < 1)) bad.push(`beta1 must be in [0, 1) (got ${adam.beta1})`);
  if (!(adam.beta2 >= 0 && adam.beta2 < 1)) bad.push(`beta2 must be in [0, 1) (got ${adam.beta2})`);
  if (!(adam.eps > 0)) bad.push(`eps must be > 0 (got ${adam.eps})`);
  if (!(adam.weightDecay >= 0)) bad.push(`weightDecay must be ≥ 0 (got ${adam.weightDecay})`);
  if (!(adam.gradClipNorm >= 0)) bad.push(`gradClipNorm must be ≥ 0 (got ${adam.gradClipNorm})`);
  if (bad.length > 0) throw new TrainingInputError(`invalid Adam parameters: ${bad.join("; ")}`);
}

/** The Euclidean norm of all gradients together. */
export function globalNorm(grads: ReadonlyMap<string, tf.Tensor>): number {
  const squares = tf.tidy(() => tf.addN([...grads.values()].map((g) => tf.sum(tf.square(g)))));
  const total = squares.dataSync()[0]!;
  squares.dispose();
  return Math.sqrt(total);
}

/**
 * One AdamW step on the wasm heap, replacing the tensors of `params` and `state`: clip the
 * gradients to a global norm (as PyTorch's `clip_grad_norm_`: scale by max/(norm + 1e-6) when
 * that is below one), decay the weights where `decays(name)` (decoupled: p ← p·(1 − lr·wd)), then
 * the bias-corrected Adam update. Returns Tinker-style metrics. Throws, changing nothing, when the
 * gradient is not finite.
 */
export function adamwStep(
  params: Map<string, tf.Tensor>,
  grads: ReadonlyMap<string, tf.Tensor>,
  state: AdamState,
  adam: AdamParams,
  decays: (name: string) => boolean,
): Record<string, number> {
  checkAdamParams(adam);
  const norm = globalNorm(grads);
  if (!Number.isFinite(norm)) throw new NonFiniteGradientError(`the gradient is not finite (global norm ${norm}); the step was not applied`);
  const clipScale = adam.gradClipNorm > 0 ? Math.min(1, adam.gradClipNorm / (norm + 1e-6)) : 1;
  state.step += 1;
  const { beta1, beta2, eps, learningRate: lr } = adam;
  const correction1 = 1 - beta1 ** state.step;
  const correction2 = 1 - beta2 ** state.step;
  for (const [name, p] of params) {
    const g = grads.get(name);
    if (!g) throw new InvariantError(`no gradient for ${name}`);
    const m = state.m.get(name)!;
    const v = state.v.get(name)!;
    const next = tf.tidy(() => {
      const gs = clipScale === 1 ? g : tf.mul(g, clipScale);
      const m1 = tf.add(tf.mul(m, beta1), tf.mul(gs, 1 - beta1));
      const v1 = tf.add(tf.mul(v, beta2), tf.mul(tf.square(gs), 1 - beta2));
      const update = tf.div(tf.div(m1, correction1), tf.add(tf.sqrt(tf.div(v1, correction2)), eps));
      const decayed = decays(name) && adam.weightDecay > 0 ? tf.mul(p, 1 - lr * adam.weightDecay) : p;
      return { p1: tf.sub(decayed, tf.mul(update, lr)), m1, v1 };
    });
    p.dispose();
    m.dispose();
    v.dispose();
    params.set(name, next.p1);
    state.m.set(name, next.m1);
    state.v.set(name, next.v1);
  }
  return { "grad_norm:mean": norm, "grad_clip_scale:mean": clipScale, "learning_rate:mean": lr, "step:max": state.step };
}
