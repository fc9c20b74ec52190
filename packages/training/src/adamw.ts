import type { AdamParams } from "./backend.js";
import type { Parameters } from "./parameters.js";

/** AdamW moments per parameter and the number of steps taken. */
export interface AdamState {
  step: number;
  m: Parameters;
  v: Parameters;
}

export function freshAdamState(params: Parameters): AdamState {
  const zeros = () => new Map([...params].map(([name, p]) => [name, new Float32Array(p.length)]));
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
  if (bad.length > 0) throw new Error(`invalid Adam parameters: ${bad.join("; ")}`);
}

/** The Euclidean norm of all gradients together. */
export function globalNorm(grads: Parameters): number {
  let sum = 0;
  for (const g of grads.values()) for (const x of g) sum += x * x;
  return Math.sqrt(sum);
}

/**
 * One AdamW step, in place: clip the gradients to a global norm (as PyTorch's
 * `clip_grad_norm_`: scale by max/(norm + 1e-6) when that is below one), decay the weights
 * (decoupled, matrices only: norm gains are not decayed), then the bias-corrected Adam update.
 * Returns Tinker-style metrics.
 */
export function adamwStep(params: Parameters, grads: Parameters, state: AdamState, adam: AdamParams): Record<string, number> {
  checkAdamParams(adam);
  const norm = globalNorm(grads);
  if (!Number.isFinite(norm)) throw new Error(`the gradient is not finite (global norm ${norm}); the step was not applied`);
  const clipScale = adam.gradClipNorm > 0 ? Math.min(1, adam.gradClipNorm / (norm + 1e-6)) : 1;
  state.step += 1;
  const { beta1, beta2, eps, learningRate: lr } = adam;
  const correction1 = 1 - beta1 ** state.step;
  const correction2 = 1 - beta2 ** state.step;
  for (const [name, p] of params) {
    const g = grads.get(name);
    if (!g) throw new Error(`no gradient for ${name}`);
    const m = state.m.get(name)!;
    const v = state.v.get(name)!;
    const decay = isNormGain(name) ? 1 : 1 - lr * adam.weightDecay;
    for (let i = 0; i < p.length; i++) {
      const gi = g[i]! * clipScale;
      const mi = beta1 * m[i]! + (1 - beta1) * gi;
      const vi = beta2 * v[i]! + (1 - beta2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      p[i] = p[i]! * decay - (lr * (mi / correction1)) / (Math.sqrt(vi / correction2) + eps);
    }
  }
  return { "grad_norm:mean": norm, "grad_clip_scale:mean": clipScale, "learning_rate:mean": lr, "step:max": state.step };
}

function isNormGain(name: string): boolean {
  return name.endsWith("layernorm.weight") || name === "model.norm.weight";
}
