import type { AdamParams } from "@envace/training";
import { toWireDatum } from "./datum.js";
import { TinkerReductionError } from "./errors.js";
import type { RemoteReduction } from "./loss-mapping.js";
import type { WireDatum } from "./wire.js";

/**
 * How a server reduces losses, measured rather than taken on trust. The reductions a Tinker server
 * is known to use: a plain `sum` over tokens and datums (hosted Tinker, this project's server),
 * `datum-token-mean` (SkyRL tx's JAX backend: Σ(w·loss)/Σw per datum, and the optimizer step
 * divides by the datums since the last step) and `token-mean` over the whole batch (SkyRL-Train's
 * default `loss_reduction`), which this client cannot rescale for.
 */
export type MeasuredReduction = RemoteReduction | "token-mean";

export interface ReductionCalibration {
  /** What the probe showed; undefined when the server reported nothing that tells. */
  reduction?: MeasuredReduction;
  /** One line: what was measured and what each reduction would have given. */
  evidence: string;
}

/**
 * The probe: two short datums of token ids every vocabulary has, scored at their last 2 and 3
 * positions. Different lengths and scored counts make every reduction give a different number.
 */
export const PROBE: readonly { tokens: readonly number[]; targets: readonly number[]; mask: readonly number[] }[] = [
  { tokens: [1, 2, 3, 4], targets: [2, 3, 4, 5], mask: [0, 0, 1, 1] },
  { tokens: [1, 2, 3, 4, 5], targets: [2, 3, 4, 5, 6], mask: [0, 0, 1, 1, 1] },
];

/** `ppo` clip range of the probe: a ratio of 2 sits far above it, so the clipped branch is taken. */
export const PROBE_CLIP = { clip_low_threshold: 0.8, clip_high_threshold: 1.2 };

/** The forward pass whose log-probabilities the probe's sampler log-probabilities derive from. */
export function probeForwardData(): WireDatum[] {
  return PROBE.map((p) => toWireDatum(p.tokens, { target_tokens: p.targets, weights: p.mask }));
}

/**
 * The loss probe: `ppo` with advantage 1 at the scored positions and sampler log-probabilities
 * ln 2 below the learner's, so every scored ratio is 2, clipped to 1.2. The clipped branch is
 * constant in the weights: the gradient is exactly zero, while the reported loss (−1.2 per scored
 * token before reduction) tells the reductions apart. No `weights` are sent (hosted Tinker's RL
 * losses take none), so a per-datum mean divides by the datum's length.
 */
export function lossProbeData(learner: readonly (readonly number[])[]): WireDatum[] {
  return PROBE.map((p, i) =>
    toWireDatum(p.tokens, {
      target_tokens: p.targets,
      logprobs: learner[i]!.map((lp, t) => (p.mask[t]! > 0 ? lp - Math.LN2 : lp)),
      advantages: [...p.mask],
    }),
  );
}

/** The per-token `ppo` loss −min(r·A, clip(r)·A) with r = exp(learner − sampler). */
function ppoToken(learner: number, sampler: number, advantage: number): number {
  const r = Math.exp(learner - sampler);
  const clipped = Math.min(Math.max(r, PROBE_CLIP.clip_low_threshold), PROBE_CLIP.clip_high_threshold);
  return -Math.min(r * advantage, clipped * advantage);
}

/**
 * The loss each reduction gives for the loss probe, from the log-probabilities the server scored it
 * with (returned by the same `forward_backward`) and the sampler log-probabilities that were sent.
 */
export function lossCandidates(learner: readonly (readonly number[])[], sampler: readonly (readonly number[])[]): Record<MeasuredReduction, number> {
  const perDatum = PROBE.map((p, i) => p.mask.reduce((sum, m, t) => sum + ppoToken(learner[i]![t]!, sampler[i]![t]!, m), 0));
  const total = perDatum.reduce((a, b) => a + b, 0);
  const tokens = PROBE.reduce((n, p) => n + p.tokens.length, 0);
  return {
    sum: total,
    "datum-token-mean": perDatum.reduce((s, loss, i) => s + loss / PROBE[i]!.tokens.length, 0),
    "token-mean": total / tokens,
  };
}

const close = (a: number, b: number, rel: number) => Math.abs(a - b) <= rel * Math.max(1, Math.abs(b));

/** The reduction whose candidate equals the reported loss (to float32 precision), if any. */
export function matchLoss(reported: number, candidates: Record<MeasuredReduction, number>): ReductionCalibration {
  const listed = Object.entries(candidates)
    .map(([name, value]) => `${name} ${value.toFixed(4)}`)
    .join(", ");
  const found = (Object.keys(candidates) as MeasuredReduction[]).find((name) => close(reported, candidates[name], 1e-3));
  const evidence = `a zero-gradient ppo probe reported loss:sum ${reported.toFixed(4)} (${listed})`;
  return found ? { reduction: found, evidence } : { evidence: `${evidence}: none matches` };
}

/**
 * The gradient probe, for servers that report no reduced loss (SkyRL tx's JAX backend): on a
 * scratch model, `importance_sampling` at ratio 1 with advantage 1 at the scored positions of the
 * second probe datum D. Round 1 sends [D]; round 2 sends [2D, 2D, E] (D's weights doubled, twice,
 * and E = D with weight and advantage 0). Each round ends in an `optim_step` with learning rate 0,
 * which changes no weight and reports the gradient norm. Round 2 over round 1 is 4 for a sum that
 * reads weights, 2 for a sum that does not, 2/3 for datum-token-mean (weights cancel in each
 * datum's mean, three datums divide) and 1 for a token mean over the batch.
 */
export function gradientProbeRounds(learner: readonly number[]): [WireDatum[], WireDatum[]] {
  const p = PROBE[1]!;
  const datum = (weight: number) =>
    toWireDatum(p.tokens, {
      target_tokens: p.targets,
      logprobs: [...learner],
      advantages: p.mask.map((m) => (weight > 0 ? m : 0)),
      weights: p.mask.map((m) => m * weight),
    });
  return [[datum(1)], [datum(2), datum(2), datum(0)]];
}

const GRADIENT_RATIOS: [number, MeasuredReduction][] = [
  [4, "sum"],
  [2, "sum"],
  [2 / 3, "datum-token-mean"],
  [1, "token-mean"],
];

export function matchGradientRatio(first: number, second: number): ReductionCalibration {
  const evidence = `gradient norms of the probe rounds ${first.toPrecision(6)} and ${second.toPrecision(6)} (ratio ${(second / first).toFixed(4)}; sum 4 or 2, datum-token-mean 0.6667, token-mean 1)`;
  if (!(first > 0) || !Number.isFinite(second)) return { evidence: `${evidence}: the first is not a positive number` };
  const found = GRADIENT_RATIOS.find(([ratio]) => close(second / first, ratio, 0.02));
  return found ? { reduction: found[1], evidence } : { evidence: `${evidence}: none matches` };
}

/** The optimizer step of the gradient probe: learning rate 0 moves no weight. */
export const STILL_ADAM: AdamParams = { learningRate: 0, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0, gradClipNorm: 0 };

/** A gradient-norm metric of an optimizer step (SkyRL tx: `skyrl.ai/grad_norm`), if there is one. */
export function gradNormOf(metrics: Record<string, number>): number | undefined {
  const key = Object.keys(metrics).find((k) => /grad_norm/i.test(k));
  return key === undefined ? undefined : metrics[key];
}

/**
 * The reduction to train with, or a `TinkerReductionError` of one line naming the disagreement:
 * a measured reduction wins over the configured one only where they agree (as over the one the
 * server declares); without a measurement the configured or declared one is used, if any.
 */
export function resolveReduction(
  server: string,
  measured: ReductionCalibration | undefined,
  configured: RemoteReduction | undefined,
  declared: RemoteReduction | undefined,
): RemoteReduction | undefined {
  const found = measured?.reduction;
  if (found === undefined) return configured ?? declared;
  if (found === "token-mean") {
    throw new TinkerReductionError(
      `${server} reduces losses as a token mean over the whole batch (${measured!.evidence}), which this client cannot rescale ` +
        `its losses for; use a backend that reduces by "sum" or "datum-token-mean"`,
    );
  }
  if (configured !== undefined && configured !== found) {
    throw new TinkerReductionError(
      `reduction "${configured}" is configured, but ${server} reduces losses by "${found}" (${measured!.evidence}); set reduction to "${found}" or leave it unset`,
    );
  }
  if (declared !== undefined && declared !== found) {
    throw new TinkerReductionError(`${server} declares the reduction "${declared}" but reduces losses by "${found}" (${measured!.evidence})`);
  }
  return found;
}
