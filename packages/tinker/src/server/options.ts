import { EnvaceError, isRetryableStatus } from "@envace/errors";
import type { Sampler } from "@envace/protocol";
import type { TrainingBackend } from "@envace/training";

/** What a `create_model` request asks for. */
export interface BackendRequest {
  baseModel: string;
  /** LoRA rank as requested (0 means full fine-tuning on SkyRL tx); a backend may ignore it. */
  loraRank: number | null;
  seed?: number;
}

/** A checkpoint's address: `tinker://<modelId>/weights/<name>`. */
export interface CheckpointKey {
  modelId: string;
  name: string;
}

/** What `weights_info` reports of a saved checkpoint. */
export interface WeightsInfo {
  base_model: string;
  is_lora: boolean;
  lora_rank?: number | undefined;
  train_unembed: boolean;
  train_mlp: boolean;
  train_attn: boolean;
}

/** Kept with each checkpoint, so its owner and weights info outlive the server process. */
export interface CheckpointRecord {
  tinker_path: string;
  /** The id of the API key that saved it (`sha256:…`), or `anonymous` on a server without keys. */
  owner: string;
  weights_info: WeightsInfo;
  /** ISO 8601. */
  saved_at: string;
}

/**
 * Saves and restores a backend's full training state (weights and optimizer) under a key, with
 * its record. `TrainingBackend` itself has no checkpoint methods, so `save_weights`,
 * `load_weights` and `weights_info` work only when the server is given a store (see
 * `folderCheckpoints`).
 */
export interface CheckpointStore {
  save(backend: TrainingBackend, key: CheckpointKey, record: CheckpointRecord): Promise<void>;
  /** The record of the complete checkpoint under `key`, or undefined when there is none. */
  record(key: CheckpointKey): Promise<CheckpointRecord | undefined>;
  /** Restore `key` and return the backend to use from now on: `backend` itself or a new one. */
  load(backend: TrainingBackend, key: CheckpointKey, options: { optimizer: boolean }): Promise<TrainingBackend>;
}

/**
 * A sampler that can also score a prompt: the log-probability of each prompt token after the
 * first, under the sampler's weights (what `prompt_logprobs` and the SDK's `compute_logprobs` ask for).
 */
export interface PromptScoringSampler extends Sampler {
  promptLogprobs(promptTokens: readonly number[]): Promise<number[]>;
}

export function scoresPrompts(sampler: Sampler): sampler is PromptScoringSampler {
  return typeof (sampler as Partial<PromptScoringSampler>).promptLogprobs === "function";
}

/**
 * A sampler that can also give the `k` most likely tokens at each prompt position after the first,
 * as [token id, log-probability] pairs best first, with the prompt's own log-probabilities (what
 * `topk_prompt_logprobs` asks for; `TinySampler` and this package's `TinkerSampler` both do).
 */
export interface TopkScoringSampler extends Sampler {
  topkPromptLogprobs(promptTokens: readonly number[], k: number): Promise<{ logprobs: number[]; topk: [number, number][][] }>;
}

export function scoresTopk(sampler: Sampler): sampler is TopkScoringSampler {
  return typeof (sampler as Partial<TopkScoringSampler>).topkPromptLogprobs === "function";
}

export interface TinkerServerOptions {
  /** Serve this one backend: one model at a time, whatever `base_model` asks for. */
  backend?: TrainingBackend;
  /** Or build a fresh backend for every `create_model` (and for sampling a base model). */
  createBackend?: (request: BackendRequest) => TrainingBackend | Promise<TrainingBackend>;
  /** The `base_model` names accepted and listed by `get_server_capabilities` (default: any name). */
  baseModels?: string[];
  maxContextLength?: number;
  /**
   * Require one of these `X-API-Key`s on every route but `healthz`. Each key owns the sessions,
   * models, sampler weights and checkpoints made with it. Required (each of at least 32
   * characters) to listen beyond loopback.
   */
  apiKey?: string | readonly string[];
  checkpoints?: CheckpointStore;
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** How long `retrieve_future` holds a poll before answering `try_again` (default 20 s; clients give up at 45 s). */
  longPollMs?: number;
  /** How long a request waits for an earlier `seq_id` before failing (default 120 s). */
  seqGapTimeoutMs?: number;
  /** How many requests per model may wait for an earlier `seq_id` (default 1024). */
  maxWaitingPerModel?: number;
  /** Largest accepted request body, after decompression (default 256 MiB). */
  maxBodyBytes?: number;
  /** How long a settled future stays retrievable (default 10 min). */
  futureTtlMs?: number;
  /** Ask SDK clients to zstd-compress their protobuf `forward_backward` bodies (`proto_compress_fwdbwd`). */
  compressForwardBackward?: boolean;
  /** Ids for new sessions (default `session-` and 8 random hex digits); a replay of recorded traffic fixes them. */
  sessionIds?: () => string;
  /** Unload the models of a session without a heartbeat or request for this long (default 5 min; 0 never). */
  sessionTimeoutMs?: number;
  /** Sessions open at once (default 64); a new one beyond it is refused with 429. */
  maxSessions?: number;
  /** Models loaded at once across sessions (default 64); a new one beyond it is refused with 429. */
  maxModels?: number;
  /**
   * The largest `topk_prompt_logprobs` a sample request may ask for (default 20, as OpenAI-compatible
   * servers allow): the answer holds prompt length × k pairs, so an unbounded k would let one request
   * fill the server's memory. A larger k is refused with 400 naming the limit.
   */
  maxTopkPromptLogprobs?: number;
  /** Where a failure the client is not told the details of goes (default: standard error). */
  onError?: (error: unknown, context: string) => void;
}

export interface TinkerServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The server's answer to a request it refuses before accepting it: the HTTP status, a short code
 * (`not_found`, `invalid_request`, …) and a message naming the problem, sent as `{detail, code}`.
 * A client sees such a reply as `TinkerHttpError`; `@envace/http`'s `HttpError` is a failed call
 * made by this project.
 */
export class TinkerApiError extends EnvaceError {
  override readonly isRetryable: boolean;
  constructor(
    readonly status: number,
    override readonly code: string,
    message: string,
  ) {
    super(message);
    this.isRetryable = isRetryableStatus(status);
  }
}
