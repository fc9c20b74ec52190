import { EnvaceError } from "@envace/errors";
import { z } from "zod";
import type { SamplingParamsInput } from "@envace/protocol";

/** A rehearsal setting that does not parse, or that a call cannot use. */
export class RehearsalSettingError extends EnvaceError {
  override readonly code = "rehearsal-setting";
}

/**
 * How a task is rehearsed before its committed execution.
 *
 * - `none`: no rehearsal; the policy acts against the real environment straight away.
 * - `parallel`: `attempts` independent private attempts from the same task context, run concurrently.
 * - `sequential`: `attempts` private attempts one after another; each sees the earlier attempts
 *   together with their assessments and revision suggestions.
 */
export const RehearsalSetting = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("none") }),
  z.object({ mode: z.enum(["parallel", "sequential"]), attempts: z.number().int().positive() }),
]);
export type RehearsalSetting = z.infer<typeof RehearsalSetting>;

/** A rehearsal setting, or its text form: `none`, `parallel:N`, `sequential:N`. */
export type RehearsalSettingInput = RehearsalSetting | string;

const TEXT_FORM = /^(?:none|(parallel|sequential):([1-9]\d*))$/;
const GRAMMAR = "expected none, parallel:N or sequential:N with N ≥ 1";

/**
 * A setting in its text form, as configs and command lines give it: `none`, `parallel:N` or
 * `sequential:N` (N ≥ 1), surrounding spaces dropped. The text it yields is the canonical form
 * (`formatRehearsalSetting` of its parse), so it can label results and key run folders as it is.
 */
export const RehearsalSettingText = z.string().trim().regex(TEXT_FORM, GRAMMAR);

/** Parse `none`, `parallel:N` or `sequential:N` (N ≥ 1); a bad value throws naming the grammar. */
export function parseRehearsalSetting(input: RehearsalSettingInput): RehearsalSetting {
  if (typeof input !== "string") return RehearsalSetting.parse(input);
  const match = TEXT_FORM.exec(input.trim());
  if (match === null) throw new RehearsalSettingError(`rehearsal setting ${JSON.stringify(input)}: ${GRAMMAR}`);
  const [, mode, attempts] = match;
  return mode === undefined ? { mode: "none" } : { mode: mode as "parallel" | "sequential", attempts: Number(attempts) };
}

/** The text form of a setting: `none`, `parallel:2`, `sequential:3`. */
export function formatRehearsalSetting(setting: RehearsalSetting): string {
  return setting.mode === "none" ? "none" : `${setting.mode}:${setting.attempts}`;
}

/** Sampling of each role during private rehearsal. */
export interface RehearsalSampling {
  act: SamplingParamsInput;
  rehearse: SamplingParamsInput;
  reflect: SamplingParamsInput;
  summarize: SamplingParamsInput;
}

/**
 * The paper's test-time sampling: Act and Rehearse sample at temperature 1.0 (diverse attempts),
 * reflect and summarize at 0.01 (near-greedy judgements). Reflections and summaries are capped at
 * 1,024 output tokens, far more than the answer formats need.
 */
export const REHEARSAL_SAMPLING = {
  act: { temperature: 1, topP: 1, topK: 0 },
  rehearse: { temperature: 1, topP: 1, topK: 0 },
  reflect: { temperature: 0.01, topP: 1, topK: 0, maxTokens: 1024 },
  summarize: { temperature: 0.01, topP: 1, topK: 0, maxTokens: 1024 },
} as const satisfies RehearsalSampling;
