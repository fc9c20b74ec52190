import { createHash } from "node:crypto";
import { PolicyLossConfig } from "@envace/grpo";
import { formatPath, type SamplingParams } from "@envace/protocol";
import type { Datum, LossFn } from "@envace/training";
import { z } from "zod";
import { fromWireDatum, WireDatumError } from "../datum.js";
import { ENVACE_GRPO } from "../loss-mapping.js";
import type { ForwardBackwardInput, ModelInput, SampleRequest } from "../wire.js";
import { TinkerApiError } from "./options.js";

/** Tinker's losses plus this project's GRPO extension. */
export const SERVER_LOSS_FNS = ["cross_entropy", "importance_sampling", "ppo", "cispo", "dro", ENVACE_GRPO] as const;

export function parseBody<S extends z.ZodType>(schema: S, body: unknown, route: string): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${formatPath(issue.path) || "body"}: ${issue.message}`);
  throw new TinkerApiError(400, "invalid_request", `${route}: ${problems.join("; ")}`);
}

/**
 * A hash of a request body, to tell a retry from a different request under the same `seq_id`. The
 * typed arrays of a protobuf body are hashed as their bytes (JSON would write them as objects keyed
 * by index, megabytes of text per batch), in the order JSON visits them.
 */
export function fingerprint(body: unknown): string {
  const hash = createHash("sha256");
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (!ArrayBuffer.isView(value)) return value;
    hash.update(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    return `${value.constructor.name}(${value.byteLength})`;
  });
  return hash.update(text).digest("hex");
}

export function tokensOf(input: ModelInput, path: string): number[] {
  const tokens: number[] = [];
  input.chunks.forEach((chunk, c) => {
    if (chunk.type !== "encoded_text") {
      throw new TinkerApiError(400, "unsupported", `${path}.chunks[${c}]: chunk type "${chunk.type}" is not supported (text only)`);
    }
    tokens.push(...chunk.tokens);
  });
  if (tokens.length === 0) throw new TinkerApiError(400, "invalid_request", `${path}: has no tokens`);
  return tokens;
}

/** Metric keys must read `name:reduction`; a backend's plain keys are reported as means. */
export function tinkerMetrics(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).map(([key, value]) => [key.includes(":") ? key : `${key}:mean`, value]));
}

const PpoConfig = z.strictObject({
  clip_low_threshold: z.number().min(0).max(1).default(0.8),
  clip_high_threshold: z.number().min(1).default(1.2),
});
/** Tinker's documented cispo defaults: a one-sided clip of the weight at 4. */
const CispoConfig = z.strictObject({
  clip_low_threshold: z.number().min(0).max(1).default(0),
  clip_high_threshold: z.number().min(1).default(4),
});
/** Tinker's docs give `dro` no default β, so it must be named. */
const DroConfig = z.strictObject({ beta: z.number().min(0) });
const GrpoConfig = z.strictObject({
  eps_low: z.number(),
  eps_high: z.number(),
  dual_clip: z.number().default(0),
  kl_coef: z.number().default(0),
  entropy_coef: z.number().default(0),
  aggregation: z.string(),
});

/** The backend loss for a wire `loss_fn` and `loss_fn_config`, or a 400 naming what is wrong. */
export function lossOf(input: ForwardBackwardInput, path: string): LossFn {
  const config = input.loss_fn_config ?? {};
  const configPath = `${path}.loss_fn_config`;
  switch (input.loss_fn) {
    case "cross_entropy":
    case "importance_sampling": {
      const keys = Object.keys(config);
      if (keys.length > 0) throw new TinkerApiError(400, "invalid_request", `${configPath}: ${input.loss_fn} takes no config keys, got ${keys.join(", ")}`);
      return { type: input.loss_fn };
    }
    case "ppo": {
      const c = parseBody(PpoConfig, config, configPath);
      return { type: "ppo", clipLow: c.clip_low_threshold, clipHigh: c.clip_high_threshold };
    }
    case "cispo": {
      const c = parseBody(CispoConfig, config, configPath);
      return { type: "cispo", clipLow: c.clip_low_threshold, clipHigh: c.clip_high_threshold };
    }
    case "dro":
      return { type: "dro", beta: parseBody(DroConfig, config, configPath).beta };
    case ENVACE_GRPO: {
      const c = parseBody(GrpoConfig, config, configPath);
      const parsed = parseBody(
        PolicyLossConfig,
        {
          epsLow: c.eps_low,
          epsHigh: c.eps_high,
          dualClip: c.dual_clip === 0 ? null : c.dual_clip,
          klCoef: c.kl_coef,
          entropyCoef: c.entropy_coef,
          aggregation: c.aggregation,
        },
        configPath,
      );
      return { type: "grpo", config: parsed };
    }
    default:
      throw new TinkerApiError(
        400,
        "unsupported",
        `${path}.loss_fn: "${input.loss_fn}" is not supported by this server (supported: ${SERVER_LOSS_FNS.join(", ")})`,
      );
  }
}

export function datumsOf(input: ForwardBackwardInput, loss: LossFn, path: string): Datum[] {
  return input.data.map((wire, i) => {
    let datum: Datum;
    try {
      datum = fromWireDatum(wire, i, input.loss_fn);
    } catch (error) {
      if (error instanceof WireDatumError) throw new TinkerApiError(400, "invalid_request", `${path}.${error.message}`);
      throw error;
    }
    if (loss.type === "grpo") {
      if (!wire.loss_fn_inputs.mask) throw new TinkerApiError(400, "invalid_request", `${path}.data[${i}].loss_fn_inputs: ${ENVACE_GRPO} requires mask`);
      if (loss.config.klCoef > 0 && !datum.refLogprobs) {
        throw new TinkerApiError(400, "invalid_request", `${path}.data[${i}].loss_fn_inputs: kl_coef > 0 requires ref_logprobs`);
      }
    }
    return datum;
  });
}

/** Our sampling parameters for a wire request, and the stop token ids it asks for (cut by the server). */
export function samplingParamsOf(request: SampleRequest): { params: SamplingParams; stopTokenIds: number[] } {
  const p = request.sampling_params;
  const stop = p.stop ?? [];
  const stopTokenIds = stop.filter((s): s is number => typeof s === "number");
  return {
    params: {
      temperature: p.temperature,
      topP: p.top_p,
      topK: p.top_k < 0 ? 0 : p.top_k,
      maxTokens: p.max_tokens,
      stop: stop.filter((s): s is string => typeof s === "string"),
      ...(p.seed !== null && p.seed !== undefined ? { seed: p.seed } : {}),
    },
    stopTokenIds,
  };
}
