import { SamplingParams, type SamplingParamsInput } from "@envace/protocol";

/** Sampling parameters from any caller, defaults filled in; a bad field is named. */
export function parseSampling(input: SamplingParams | SamplingParamsInput): SamplingParams {
  const parsed = SamplingParams.safeParse(input);
  if (!parsed.success) throw new RangeError(`sampling parameters: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}
