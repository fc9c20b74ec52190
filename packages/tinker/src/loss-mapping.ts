import { aggregationWeights, type PolicyLossConfig } from "@envace/grpo";
import { referenceLoss, type Datum, type LossFn } from "@envace/training";
import { toWireDatum } from "./datum.js";
import { TinkerLossError } from "./errors.js";
import type { WireDatum } from "./wire.js";

/**
 * How the remote server reduces a loss over tokens and datums.
 *
 * - `sum`: a plain sum over tokens and datums (hosted Tinker; SkyRL tx's `skyrl_train` backend for
 *   `cross_entropy` and `importance_sampling`).
 * - `datum-token-mean`: per datum, Σ(weight·loss) / Σ weight, summed over datums, and the optimizer
 *   step divides the accumulated gradient by the number of datums since the last step (SkyRL tx's
 *   JAX backend).
 */
export type RemoteReduction = "sum" | "datum-token-mean";

/**
 * How the client expresses our objective with the server's losses.
 *
 * - `native`: map to the server's `cross_entropy`, `importance_sampling` or `ppo` with rescaled
 *   advantages; refuse what they cannot express.
 * - `surrogate`: as `native` where that is exact; otherwise run a `forward` first and send an
 *   `importance_sampling` surrogate whose gradient equals the objective's (dual clip, KL).
 * - `surrogate-always`: every loss through the surrogate, for servers whose own `ppo` or
 *   `cross_entropy` reduction is unknown.
 */
export type LossStrategy = "native" | "surrogate" | "surrogate-always";

/** GRPO terms that a Tinker server's losses cannot express, and that may be dropped explicitly. */
export type DroppableTerm = "dualClip" | "kl" | "entropy";

export interface LossMappingOptions {
  reduction: RemoteReduction;
  strategy: LossStrategy;
  /** Terms to drop (with a warning) instead of refusing. Empty by default: nothing is dropped silently. */
  drop: readonly DroppableTerm[];
  /** Loss functions beyond Tinker's that the server advertises (`envace_loss_fns`). */
  serverLosses: readonly string[];
}

/** The objective the client reproduces and reports, after any explicitly dropped terms. */
export type Objective = LossFn;

export type LossPlan =
  /** The server implements role-wise GRPO itself (this project's server): send it unchanged. */
  | { kind: "extension"; lossFn: "envace_grpo"; config: Record<string, number | string>; data: WireDatum[] }
  /** One of the server's losses with rescaled advantages reproduces the objective exactly. */
  | { kind: "direct"; lossFn: string; config: Record<string, number> | null; data: WireDatum[]; objective: Objective; dropped: DroppableTerm[] }
  /** Needs the learner's log-probabilities first: `forward`, then `surrogateData`. */
  | { kind: "surrogate"; objective: Objective; dropped: DroppableTerm[] };

export const ENVACE_GRPO = "envace_grpo";

/** The `loss_fn_config` of the EnvACE GRPO extension; a null dual clip is sent as 0. */
export function grpoWireConfig(config: PolicyLossConfig): Record<string, number | string> {
  return {
    eps_low: config.epsLow,
    eps_high: config.epsHigh,
    dual_clip: config.dualClip ?? 0,
    kl_coef: config.klCoef,
    entropy_coef: config.entropyCoef,
    aggregation: config.aggregation,
  };
}

function requiredTerms(config: PolicyLossConfig): DroppableTerm[] {
  const terms: DroppableTerm[] = [];
  if (config.dualClip !== null) terms.push("dualClip");
  if (config.klCoef > 0) terms.push("kl");
  if (config.entropyCoef > 0) terms.push("entropy");
  return terms;
}

const TERM_NAMES: Record<DroppableTerm, string> = {
  dualClip: "the dual clip",
  kl: "the KL penalty",
  entropy: "the entropy bonus",
};

function withoutTerms(config: PolicyLossConfig, dropped: readonly DroppableTerm[]): PolicyLossConfig {
  return {
    ...config,
    dualClip: dropped.includes("dualClip") ? null : config.dualClip,
    klCoef: dropped.includes("kl") ? 0 : config.klCoef,
    entropyCoef: dropped.includes("entropy") ? 0 : config.entropyCoef,
  };
}

/**
 * Per-token advantages that make the server's reduction of a loss that is positively homogeneous
 * in the advantage (ppo, importance_sampling) equal Σ coef[i][t]·loss_t(A[i][t]). `weights` is set
 * when the server reads them (the datum-token-mean reduction divides by their sum).
 */
export function rescaleAdvantages(
  advantages: readonly (readonly number[])[],
  coef: readonly (readonly number[])[],
  masks: readonly (readonly number[])[],
  reduction: RemoteReduction,
): { advantages: number[][]; weights: number[][] | null } {
  if (reduction === "sum") {
    return { advantages: advantages.map((row, i) => row.map((a, t) => coef[i]![t]! * a)), weights: null };
  }
  const datums = advantages.length;
  return {
    advantages: advantages.map((row, i) => {
      const mask = masks[i]!;
      const total = mask.reduce((s, m) => s + m, 0);
      return row.map((a, t) => (mask[t]! > 0 ? (coef[i]![t]! * a * datums * total) / mask[t]! : 0));
    }),
    weights: masks.map((mask) => [...mask]),
  };
}

function rlData(data: readonly Datum[], advantages: number[][], weights: number[][] | null, samplerLogprobs: readonly (readonly number[])[]): WireDatum[] {
  return data.map((d, i) =>
    toWireDatum(d.tokens, {
      target_tokens: d.targetTokens,
      logprobs: samplerLogprobs[i]!,
      advantages: advantages[i]!,
      ...(weights ? { weights: weights[i]! } : {}),
    }),
  );
}

/** The server's `lossFn` over the sampled tokens, with their sampler log-probabilities and the rescaled advantages. */
function directRl(
  lossFn: string,
  config: Record<string, number> | null,
  data: readonly Datum[],
  scaled: { advantages: number[][]; weights: number[][] | null },
  objective: Objective,
  dropped: DroppableTerm[],
): LossPlan {
  const samplerLogprobs = data.map((d) => d.logprobs);
  return { kind: "direct", lossFn, config, data: rlData(data, scaled.advantages, scaled.weights, samplerLogprobs), objective, dropped };
}

/** Decide how `loss` over `data` is expressed on the server, or refuse with a `TinkerLossError`. */
export function planLoss(data: readonly Datum[], loss: LossFn, options: LossMappingOptions): LossPlan {
  if (loss.type === "grpo" && options.serverLosses.includes(ENVACE_GRPO)) {
    return {
      kind: "extension",
      lossFn: ENVACE_GRPO,
      config: grpoWireConfig(loss.config),
      data: data.map((d) =>
        toWireDatum(d.tokens, {
          target_tokens: d.targetTokens,
          logprobs: d.logprobs,
          advantages: d.advantages,
          mask: d.mask,
          ...(d.refLogprobs ? { ref_logprobs: d.refLogprobs } : {}),
        }),
      ),
    };
  }

  let objective: Objective = loss;
  let dropped: DroppableTerm[] = [];
  if (loss.type === "grpo") {
    const required = requiredTerms(loss.config);
    // The entropy of the full next-token distribution never leaves a Tinker server.
    const inexpressible = required.filter((term) => term === "entropy" || options.strategy === "native");
    const refused = inexpressible.filter((term) => !options.drop.includes(term));
    if (refused.length > 0) {
      const names = refused.map((term) => TERM_NAMES[term]).join(" and ");
      const fixes = [
        refused.some((t) => t !== "entropy") ? 'lossStrategy "surrogate" (one extra forward pass per step, exact gradient)' : null,
        `dropUnsupportedTerms: [${refused.map((t) => `"${t}"`).join(", ")}] to train without ${refused.length > 1 ? "them" : "it"}`,
        "or a loss config without " + (refused.length > 1 ? "them" : "it"),
      ].filter((fix) => fix !== null);
      throw new TinkerLossError(
        `the server's losses cannot express ${names} of the GRPO loss` +
          (refused.includes("entropy") ? " (a Tinker server never returns the full next-token distribution)" : "") +
          `; use ${fixes.join(", ")}`,
      );
    }
    dropped = inexpressible;
    objective = { type: "grpo", config: withoutTerms(loss.config, dropped) };
  }

  const needsSurrogate =
    options.strategy === "surrogate-always" ||
    (objective.type === "grpo" && (objective.config.dualClip !== null || objective.config.klCoef > 0)) ||
    objective.type === "dro" ||
    (objective.type === "cross_entropy" && options.reduction === "datum-token-mean");
  if (needsSurrogate) {
    if (options.strategy === "native") {
      const why =
        objective.type === "dro"
          ? "a Tinker server's dro penalises every position it scores, prompt positions included (it takes no mask), so it cannot reproduce a masked dro"
          : "cross_entropy under the datum-token-mean reduction averages each datum, which cannot reproduce a token sum";
      throw new TinkerLossError(`${why}; use lossStrategy "surrogate"`);
    }
    return { kind: "surrogate", objective, dropped };
  }

  const masks = data.map((d) => d.mask);
  const advantages = data.map((d) => d.advantages);
  switch (objective.type) {
    case "cross_entropy":
      return {
        kind: "direct",
        lossFn: "cross_entropy",
        config: null,
        data: data.map((d) => toWireDatum(d.tokens, { target_tokens: d.targetTokens, weights: d.mask })),
        objective,
        dropped,
      };
    case "importance_sampling":
    case "ppo":
    case "cispo": {
      // Each token's loss is linear in its advantage, and zero where the advantage is.
      const scaled = rescaleAdvantages(advantages, masks, masks, options.reduction);
      const config = objective.type === "importance_sampling" ? null : { clip_low_threshold: objective.clipLow, clip_high_threshold: objective.clipHigh };
      return directRl(objective.type, config, data, scaled, objective, dropped);
    }
    case "dro":
      // Never sent directly (see needsSurrogate above).
      return { kind: "surrogate", objective, dropped };
    case "grpo": {
      const coef = aggregationWeights(masks, objective.config.aggregation);
      const scaled = rescaleAdvantages(advantages, coef, masks, options.reduction);
      const config = { clip_low_threshold: 1 - objective.config.epsLow, clip_high_threshold: 1 + objective.config.epsHigh };
      return directRl("ppo", config, data, scaled, objective, dropped);
    }
  }
}

/** The objective's value, its gradient with respect to the learner's log-probabilities, and metrics. */
export function evaluateObjective(
  objective: Objective,
  data: readonly Datum[],
  learnerLogprobs: readonly (readonly number[])[],
): { loss: number; gradLogprobs: number[][]; metrics: Record<string, number> } {
  const rows = data.map((d, i) => ({
    logprobs: learnerLogprobs[i]!,
    samplerLogprobs: d.logprobs,
    advantages: d.advantages,
    mask: d.mask,
    ...(d.refLogprobs ? { refLogprobs: d.refLogprobs } : {}),
  }));
  const { loss, gradLogprobs, metrics } = referenceLoss(objective, rows);
  return { loss, gradLogprobs, metrics };
}

/**
 * The `importance_sampling` data whose gradient equals `gradLogprobs`: the sampler log-probabilities
 * are the learner's own (so every ratio is 1 at the current weights) and each advantage is minus the
 * wanted gradient, rescaled for the server's reduction.
 */
export function surrogateData(
  data: readonly Datum[],
  learnerLogprobs: readonly (readonly number[])[],
  gradLogprobs: readonly (readonly number[])[],
  reduction: RemoteReduction,
): WireDatum[] {
  const masks = data.map((d) => d.mask);
  const ones = data.map((d) => d.mask.map(() => 1));
  const negated = gradLogprobs.map((row) => row.map((g) => -g));
  const scaled = rescaleAdvantages(negated, ones, masks, reduction);
  return rlData(data, scaled.advantages, scaled.weights, learnerLogprobs);
}
