import type { ReductionCalibration } from "./calibration.js";
import { TinkerReductionError } from "./errors.js";
import type { TinkerHttp } from "./http.js";
import type { DroppableTerm, LossStrategy, RemoteReduction } from "./loss-mapping.js";
import type { TinkerSampler } from "./sampler.js";
import type { ClientConfig } from "./wire.js";

/** How `forward_backward` travels: protobuf until the server refuses it, then JSON for the session. */
export type ForwardBackwardWire = "protobuf" | "json";

/**
 * What a training client needs of the connection that created it (`TinkerService` is one): the
 * session's HTTP layer and server config, the wire in use, and the session's sampler numbering.
 */
export interface TrainingService {
  readonly http: TinkerHttp;
  readonly clientConfig: ClientConfig;
  readonly forwardBackwardWire: ForwardBackwardWire;
  /** The server refused a protobuf body: speak JSON for the rest of the session. */
  fallBackToJson(reason: string): void;
  /** The next per-session number of a sampling session. */
  nextSamplingSeq(): number;
  createSampler(source: { modelPath: string }, stopTokenIds: readonly number[]): Promise<TinkerSampler>;
}

export interface TrainingClientOptions {
  /** e.g. `Qwen/Qwen3-8B` on hosted Tinker, the `--base-model` of a SkyRL tx server. */
  baseModel: string;
  /** LoRA rank (default 32; SkyRL tx treats 0 as full fine-tuning). */
  loraRank?: number;
  seed?: number;
  trainMlp?: boolean;
  trainAttn?: boolean;
  trainUnembed?: boolean;
  userMetadata?: Record<string, unknown>;
  /**
   * How the server reduces losses: `sum` (hosted Tinker; SkyRL tx with the skyrl_train backend) or
   * `datum-token-mean` (SkyRL tx with the JAX backend). Needed to train on a server that does not
   * declare it (only this project's server does); the client refuses to train without it.
   */
  reduction?: RemoteReduction;
  /** How our objective is expressed with the server's losses (default `native`). */
  lossStrategy?: LossStrategy;
  /** GRPO terms to drop with a warning instead of refusing the loss. Default: none. */
  dropUnsupportedTerms?: DroppableTerm[];
  /** Use losses the server advertises beyond Tinker's (this project's server implements GRPO). Default true. */
  useServerExtensions?: boolean;
  /** Stop token ids for samplers of this model, used when a request gives no stop strings. */
  stopTokenIds?: number[];
  /**
   * Measure the server's reduction before creating the model (default true): a probe on a scratch
   * model (see `calibration.ts`) whose result must agree with `reduction` and with what the
   * server declares, or the model is not created.
   */
  calibrateReduction?: boolean;
  /** Refuse (`TinkerReductionError`) before creating the model when no reduction is measured, configured or declared. */
  requireReduction?: boolean;
}

/** The one line a client without a reduction refuses with. */
export function noReductionError(server: string, calibration?: ReductionCalibration): TinkerReductionError {
  return new TinkerReductionError(
    `${server} does not say how it reduces losses${calibration ? ` and the probe could not tell (${calibration.evidence})` : ""}, so gradients would be scaled blindly: ` +
      `set the training client's reduction to "sum" (hosted Tinker; SkyRL tx with the skyrl_train backend) or "datum-token-mean" (SkyRL tx with the JAX backend)`,
  );
}
