// The `grounding:` section of the train config and the combinations it cannot work with.
import { z } from "zod";

/**
 * Hybrid grounding (`environment: self`): a share of the rehearsed calls is also executed for real
 * (`@envace/grounding`), after replaying the trajectory's committed calls on a fresh environment.
 * Absent, or `fraction: 0`, is EnvACE exactly.
 */
export const GroundingConfig = z.strictObject({
  /** The share of the rehearsed calls executed for real, 0 to 1. */
  fraction: z.number().min(0).max(1).default(0),
  /** `uniform`, `writes` (the domain's write tools only), or `uncertain` (the Rehearse role's highest entropy first). */
  select: z.enum(["uniform", "writes", "uncertain"]).default("uniform"),
  /** `metric`: fidelity on the grounded calls, per step; `target`: a supervised Rehearse term on them; `reward`: a Rehearse reward term. */
  use: z
    .array(z.enum(["metric", "target", "reward"]))
    .min(1)
    .refine((uses) => new Set(uses).size === uses.length, "each use once")
    .default(["metric"]),
  /** Hard caps on the real calls grounding makes (prefix replays included), per step and per run; null: none. */
  max_calls: z
    .strictObject({
      per_step: z.number().int().min(0).nullable().default(null),
      per_run: z.number().int().min(0).nullable().default(null),
    })
    .default({ per_step: null, per_run: null }),
  /** `use: target`: the weight of the supervised term (× the mean cross-entropy per target token). Default 1. */
  target_coef: z.number().positive().optional(),
  /** `use: reward`: λ of the Rehearse row's reward r + λ·(2a − 1), a its agreement with the real answer. Default 0.5. */
  reward_coef: z.number().positive().optional(),
});
export type GroundingConfig = z.infer<typeof GroundingConfig>;

/** Why a grounding section cannot work with the rest of the config, each naming its keys. */
export function groundingIssues(
  config: { mode: string; environment: string; data: { source: string } },
  grounding: GroundingConfig,
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (config.environment !== "self") {
    issues.push({
      path: ["grounding"],
      message: `grounding executes a share of the rehearsed calls for real; it needs environment: self (mode envace or per-role), not environment: ${config.environment}`,
    });
  }
  if (config.data.source !== "builtin") {
    issues.push({
      path: ["grounding"],
      message: `grounding needs a real environment; data source ${config.data.source} has none (its records hold reference dialogues, not tools that run)`,
    });
  }
  const { fraction, max_calls: caps } = grounding;
  for (const key of ["per_step", "per_run"] as const) {
    if (fraction > 0 && caps[key] === 0) {
      issues.push({
        path: ["grounding", "max_calls", key],
        message: `grounding.max_calls.${key} 0 cannot honour grounding.fraction ${fraction}: no call could be grounded; set fraction 0 or a cap of at least 1`,
      });
    }
  }
  if (grounding.target_coef !== undefined && !grounding.use.includes("target")) {
    issues.push({
      path: ["grounding", "target_coef"],
      message: "grounding.target_coef weighs the supervised term of use: target; add target to grounding.use",
    });
  }
  if (grounding.reward_coef !== undefined && !grounding.use.includes("reward")) {
    issues.push({ path: ["grounding", "reward_coef"], message: "grounding.reward_coef weighs the reward term of use: reward; add reward to grounding.use" });
  }
  return issues;
}
