import type { SampledTokens, Sampler, SamplingParams } from "@envace/protocol";
import type { AdamParams, Datum, ForwardBackwardResult, LossFn, ScoringOptions, TrainingBackend } from "@envace/training";
import { chunkRanges, mergeMetrics } from "./chunks.js";
import { checkDatum, toWireDatum } from "./datum.js";
import { TinkerHttpError, TinkerLossError } from "./errors.js";
import { retrieveFuture } from "./futures.js";
import { defaultRetryPolicy, TinkerHttp, type RetryPolicy } from "./http.js";
import {
  evaluateObjective,
  planLoss,
  surrogateData,
  type DroppableTerm,
  type LossPlan,
  type LossStrategy,
  type RemoteReduction,
} from "./loss-mapping.js";
import {
  AuthTokenResponse,
  CheckpointName,
  ClientConfig,
  CreateModelResponse,
  CreateSamplingSessionResponse,
  CreateSessionResponse,
  ForwardBackwardOutput,
  GetInfoResponse,
  LoadWeightsResponse,
  OptimStepResponse,
  SampleResponse,
  SaveWeightsForSamplerResponse,
  SaveWeightsResponse,
  ServerCapabilities,
  UnloadModelResponse,
  UntypedFuture,
  type WireDatum,
} from "./wire.js";

/** The hosted service. */
export const HOSTED_TINKER_URL = "https://tinker.thinkingmachines.dev/services/tinker-prod";

/**
 * The JSON wire format this client speaks is that of the Python SDK up to 0.24 (0.25 switched
 * `forward_backward` to protobuf), so that is the `sdk_version` it announces by default.
 */
export const JSON_SDK_VERSION = "0.24.1";

const API = "/api/v1";

export interface TinkerConnectOptions {
  /** Server root; routes live under `/api/v1`. See `tinkerEnv` for `TINKER_BASE_URL`. */
  baseUrl: string;
  /** Sent as `X-API-Key`. SkyRL tx ignores it (use any `tml-…` placeholder). */
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  /** Timeout of one request (default 60 s) and of one long poll of a future (default 45 s). */
  requestTimeoutMs?: number;
  pollTimeoutMs?: number;
  /** Session heartbeat period (default 10 s); 0 turns heartbeats off. */
  heartbeatIntervalMs?: number;
  sdkVersion?: string;
  tags?: string[];
  userMetadata?: Record<string, unknown>;
  projectId?: string;
  /** Where warnings go (dropped loss terms, failing heartbeats). Default: `console.warn`. */
  onWarning?: (message: string) => void;
  fetch?: typeof fetch;
}

/** `baseUrl` from `TINKER_BASE_URL` (default: hosted Tinker) and `apiKey` from `TINKER_API_KEY`. */
export function tinkerEnv(env: Record<string, string | undefined> = process.env): Pick<TinkerConnectOptions, "baseUrl" | "apiKey"> {
  const apiKey = env.TINKER_API_KEY;
  return { baseUrl: env.TINKER_BASE_URL ?? HOSTED_TINKER_URL, ...(apiKey ? { apiKey } : {}) };
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
  /** How the server reduces losses: `sum` (hosted Tinker, the default) or `datum-token-mean` (SkyRL tx JAX). */
  reduction?: RemoteReduction;
  /** How our objective is expressed with the server's losses (default `native`). */
  lossStrategy?: LossStrategy;
  /** GRPO terms to drop with a warning instead of refusing the loss. Default: none. */
  dropUnsupportedTerms?: DroppableTerm[];
  /** Use losses the server advertises beyond Tinker's (this project's server implements GRPO). Default true. */
  useServerExtensions?: boolean;
  /** Stop token ids for samplers of this model, used when a request gives no stop strings. */
  stopTokenIds?: number[];
}

/** A connection to a Tinker server: one session, kept alive by heartbeats. */
export class TinkerService {
  private modelSeq = 0;
  private samplingSeq = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private lastHeartbeatOk = Date.now();
  private heartbeatWarned = false;

  private constructor(
    readonly http: TinkerHttp,
    readonly sessionId: string,
    readonly clientConfig: ClientConfig,
    private readonly warn: (message: string) => void,
  ) {}

  /** `client/config`, `create_session`, then heartbeats. */
  static async connect(options: TinkerConnectOptions): Promise<TinkerService> {
    const warn = options.onWarning ?? ((message: string) => console.warn(`[tinker] ${message}`));
    const sdkVersion = options.sdkVersion ?? JSON_SDK_VERSION;
    let token: { value: string; expires: number } | undefined;
    let jwt = false;
    const baseUrl = options.baseUrl.replace(/\/+$/, "");
    const http: TinkerHttp = new TinkerHttp({
      baseUrl,
      fetch: options.fetch ?? fetch,
      retry: { ...defaultRetryPolicy, ...options.retry },
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      pollTimeoutMs: options.pollTimeoutMs ?? 45_000,
      userAgent: `envace-tinker/${sdkVersion}`,
      apiKey: async () => {
        if (!jwt) return options.apiKey;
        // Refresh the short-lived token five minutes before it expires.
        if (!token || token.expires - Date.now() < 300_000) token = await exchangeToken(baseUrl, options);
        return token.value;
      },
    });
    const clientConfig = await http.postParsed(`${API}/client/config`, { sdk_version: sdkVersion }, ClientConfig);
    jwt = clientConfig.pjwt_auth_enabled;
    const session = await http.postParsed(
      `${API}/create_session`,
      {
        tags: options.tags ?? [],
        user_metadata: options.userMetadata ?? null,
        sdk_version: sdkVersion,
        ...(options.projectId ? { project_id: options.projectId } : {}),
        type: "create_session",
      },
      CreateSessionResponse,
    );
    if (session.error_message) throw new TinkerHttpError(`${API}/create_session`, 200, session.error_message);
    if (session.warning_message) warn(session.warning_message);
    const service = new TinkerService(http, session.session_id, clientConfig, warn);
    const period = options.heartbeatIntervalMs ?? 10_000;
    if (period > 0) {
      service.heartbeat = setInterval(() => void service.beat(period), period);
      service.heartbeat.unref();
    }
    return service;
  }

  private async beat(period: number): Promise<void> {
    try {
      const reply = await this.http.send("POST", `${API}/session_heartbeat`, { session_id: this.sessionId, type: "session_heartbeat" }, { timeoutMs: period });
      if (reply.status === 200) {
        this.lastHeartbeatOk = Date.now();
        this.heartbeatWarned = false;
        return;
      }
    } catch {
      // A missed beat is only worth a warning once it has gone on for a while.
    }
    if (!this.heartbeatWarned && Date.now() - this.lastHeartbeatOk > 120_000) {
      this.heartbeatWarned = true;
      this.warn(`session ${this.sessionId}: heartbeats have failed for over 120 s; the server may expire the session`);
    }
  }

  /** Models (and context lengths) the server offers. */
  capabilities(): Promise<ServerCapabilities> {
    return this.http.getParsed(`${API}/get_server_capabilities`, ServerCapabilities);
  }

  /** Create a model (a LoRA adapter on hosted Tinker) and a client that trains it. */
  async createTrainingClient(options: TrainingClientOptions): Promise<TinkerTrainingClient> {
    const future = await this.http.postParsed(
      `${API}/create_model`,
      {
        session_id: this.sessionId,
        model_seq_id: this.modelSeq++,
        base_model: options.baseModel,
        lora_config: {
          rank: options.loraRank ?? 32,
          ...(options.seed !== undefined ? { seed: options.seed } : {}),
          train_unembed: options.trainUnembed ?? true,
          train_mlp: options.trainMlp ?? true,
          train_attn: options.trainAttn ?? true,
        },
        user_metadata: options.userMetadata ?? null,
        type: "create_model",
      },
      UntypedFuture,
    );
    const created = this.http.parse(`${API}/create_model`, await retrieveFuture(this.http, future.request_id, { requestType: "CreateModel" }), CreateModelResponse);
    return new TinkerTrainingClient(this, created.model_id, options, this.warn);
  }

  /** A sampler for saved sampler weights (`tinker://…`) or for a base model. */
  async createSampler(source: { modelPath: string } | { baseModel: string }, stopTokenIds: readonly number[] = []): Promise<TinkerSampler> {
    const reply = await this.http.postParsed(
      `${API}/create_sampling_session`,
      {
        session_id: this.sessionId,
        sampling_session_seq_id: this.samplingSeq++,
        ...("modelPath" in source ? { model_path: source.modelPath } : { base_model: source.baseModel }),
        type: "create_sampling_session",
      },
      CreateSamplingSessionResponse,
    );
    return new TinkerSampler(this.http, reply.sampling_session_id, "modelPath" in source ? source.modelPath : null, stopTokenIds);
  }

  /** The next per-session number of a sampling session (for ephemeral sampler saves). */
  nextSamplingSeq(): number {
    return this.samplingSeq++;
  }

  /** Stop the heartbeats. Models stay loaded on the server until it expires the session. */
  close(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

async function exchangeToken(baseUrl: string, options: TinkerConnectOptions): Promise<{ value: string; expires: number }> {
  const route = `${API}/auth/token`;
  const response = await (options.fetch ?? fetch)(`${baseUrl}${route}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json", ...(options.apiKey ? { "X-API-Key": options.apiKey } : {}) },
    body: "{}",
    signal: AbortSignal.timeout(options.requestTimeoutMs ?? 60_000),
  });
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) throw new TinkerHttpError(route, response.status, JSON.stringify(body));
  const parsed = AuthTokenResponse.safeParse(body);
  if (!parsed.success) throw new TinkerHttpError(route, response.status, `no jwt in reply: ${JSON.stringify(body)}`);
  return { value: parsed.data.jwt, expires: jwtExpiry(parsed.data.jwt) };
}

/** The `exp` claim of a JWT in milliseconds, or one hour from now when it has none. */
export function jwtExpiry(jwt: string): number {
  const payload = jwt.split(".")[1];
  if (payload) {
    try {
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown };
      if (typeof claims.exp === "number") return claims.exp * 1_000;
    } catch {
      // Not a JWT we can read: fall through to the default lifetime.
    }
  }
  return Date.now() + 3_600_000;
}

interface Submitted {
  requestId: string;
  resubmit: () => Promise<string>;
}

/**
 * A `TrainingBackend` backed by a Tinker server: every call is one or more requests, numbered
 * with the model's `seq_id` in call order (so calls may be issued without awaiting each other),
 * and resolved through `retrieve_future`.
 */
export class TinkerTrainingClient implements TrainingBackend {
  private seq = 1;
  private datumsSinceStep = 0;
  private readonly warned = new Set<string>();
  private readonly reduction: RemoteReduction;
  private readonly strategy: LossStrategy;
  private readonly drop: readonly DroppableTerm[];
  private readonly serverLosses: readonly string[];

  constructor(
    readonly service: TinkerService,
    readonly modelId: string,
    readonly options: TrainingClientOptions,
    private readonly warn: (message: string) => void,
  ) {
    this.reduction = options.reduction ?? "sum";
    this.strategy = options.lossStrategy ?? "native";
    this.drop = options.dropUnsupportedTerms ?? [];
    this.serverLosses = options.useServerExtensions === false ? [] : service.clientConfig.envace_loss_fns;
  }

  private get http(): TinkerHttp {
    return this.service.http;
  }

  /** Reserve the next `count` sequence numbers, synchronously, so they follow call order. */
  private reserve(count: number): number[] {
    const ids = Array.from({ length: count }, (_, i) => this.seq + i);
    this.seq += count;
    return ids;
  }

  private async submit(route: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Submitted> {
    const send = async () => (await this.http.postParsed(`${API}/${route}`, body, UntypedFuture, signal)).request_id;
    return { requestId: await send(), resubmit: send };
  }

  private async result(submitted: Submitted, requestType: string, signal?: AbortSignal): Promise<unknown> {
    return retrieveFuture(this.http, submitted.requestId, { resubmit: submitted.resubmit, requestType, ...(signal ? { signal } : {}) });
  }

  /** Submit chunks in sequence order, then wait for all of them. */
  private async runChunks(
    route: "forward" | "forward_backward",
    chunks: readonly { seq: number; data: WireDatum[] }[],
    lossFn: string,
    config: Record<string, number | string> | null,
  ): Promise<{ logprobs: number[][]; metrics: Record<string, number> }> {
    const inputKey = route === "forward" ? "forward_input" : "forward_backward_input";
    const submitted: Submitted[] = [];
    for (const chunk of chunks) {
      submitted.push(
        await this.submit(route, {
          model_id: this.modelId,
          seq_id: chunk.seq,
          [inputKey]: { data: chunk.data, loss_fn: lossFn, ...(config ? { loss_fn_config: config } : {}) },
          type: route,
        }),
      );
    }
    const outputs = await Promise.all(
      submitted.map(async (s, i) => {
        const out = this.http.parse(`${API}/${route}`, await this.result(s, route === "forward" ? "Forward" : "ForwardBackward"), ForwardBackwardOutput);
        if (out.loss_fn_outputs.length !== chunks[i]!.data.length) {
          throw new TinkerHttpError(`${API}/${route}`, 200, `${out.loss_fn_outputs.length} outputs for ${chunks[i]!.data.length} datums`);
        }
        return out;
      }),
    );
    return {
      logprobs: outputs.flatMap((out) => out.loss_fn_outputs.map((o) => o.logprobs.data)),
      metrics: mergeMetrics(outputs.map((out, i) => ({ metrics: out.metrics, datums: chunks[i]!.data.length }))),
    };
  }

  private ranges(data: readonly Datum[]): [number, number][] {
    const config = this.service.clientConfig;
    return chunkRanges(data, config.fwdbwd_max_chunk_len, config.fwdbwd_max_chunk_bytes_count);
  }

  async forwardBackward(data: Datum[], loss: LossFn, options: ScoringOptions = {}): Promise<ForwardBackwardResult> {
    checkTemperature(options);
    checkData(data);
    const plan = planLoss(data, loss, { reduction: this.reduction, strategy: this.strategy, drop: this.drop, serverLosses: this.serverLosses });
    if (plan.kind !== "extension") this.warnDropped(plan);
    if (this.reduction === "datum-token-mean" && plan.kind !== "extension") {
      if (this.datumsSinceStep > 0) {
        throw new TinkerLossError(
          "under the datum-token-mean reduction the server divides the accumulated gradient by every datum since the last " +
            "optimizer step, so a second forwardBackward before optimStep would rescale the first; send the whole batch in one call",
        );
      }
      this.datumsSinceStep += data.length;
    }
    // The extension's reduction spans the whole call, so it goes as one request.
    const ranges = plan.kind === "extension" ? [[0, data.length] as [number, number]] : this.ranges(data);
    const forwardSeqs = plan.kind === "surrogate" ? this.reserve(ranges.length) : [];
    const seqs = this.reserve(ranges.length);

    if (plan.kind === "extension") {
      const out = await this.runChunks("forward_backward", [{ seq: seqs[0]!, data: plan.data }], plan.lossFn, plan.config);
      const loss = out.metrics["loss:sum"];
      if (loss === undefined) throw new TinkerHttpError(`${API}/forward_backward`, 200, "the reply has no loss:sum metric");
      return { logprobs: out.logprobs, loss, metrics: out.metrics };
    }

    let wire: WireDatum[];
    let lossFn: string;
    let config: Record<string, number> | null = null;
    if (plan.kind === "surrogate") {
      const learner = await this.forwardRanges(data, ranges, forwardSeqs);
      const target = evaluateObjective(plan.objective, data, learner);
      wire = surrogateData(data, learner, target.gradLogprobs, this.reduction);
      lossFn = "importance_sampling";
    } else {
      wire = plan.data;
      lossFn = plan.lossFn;
      config = plan.config;
    }
    const out = await this.runChunks(
      "forward_backward",
      ranges.map(([start, end], i) => ({ seq: seqs[i]!, data: wire.slice(start, end) })),
      lossFn,
      config,
    );
    const evaluated = evaluateObjective(plan.objective, data, out.logprobs);
    const remote = Object.fromEntries(Object.entries(out.metrics).map(([key, value]) => [`remote_${key}`, value]));
    return { logprobs: out.logprobs, loss: evaluated.loss, metrics: { ...remote, ...evaluated.metrics } };
  }

  private warnDropped(plan: Exclude<LossPlan, { kind: "extension" }>): void {
    const key = plan.dropped.join(",");
    if (plan.dropped.length === 0 || this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(`model ${this.modelId}: training without ${plan.dropped.join(" and ")} (listed in dropUnsupportedTerms); the server cannot compute it`);
  }

  private forwardRanges(data: readonly Datum[], ranges: readonly [number, number][], seqs: readonly number[]): Promise<number[][]> {
    const wire = data.map((d) => toWireDatum(d.tokens, { target_tokens: d.targetTokens, weights: d.mask }));
    return this.runChunks(
      "forward",
      ranges.map(([start, end], i) => ({ seq: seqs[i]!, data: wire.slice(start, end) })),
      "cross_entropy",
      null,
    ).then((out) => out.logprobs);
  }

  async forward(data: Datum[], options: ScoringOptions = {}): Promise<number[][]> {
    checkTemperature(options);
    checkData(data);
    const ranges = this.ranges(data);
    return this.forwardRanges(data, ranges, this.reserve(ranges.length));
  }

  async optimStep(adam: AdamParams): Promise<Record<string, number>> {
    const [seq] = this.reserve(1);
    this.datumsSinceStep = 0;
    const submitted = await this.submit("optim_step", {
      model_id: this.modelId,
      seq_id: seq,
      adam_params: {
        learning_rate: adam.learningRate,
        beta1: adam.beta1,
        beta2: adam.beta2,
        eps: adam.eps,
        weight_decay: adam.weightDecay,
        grad_clip_norm: adam.gradClipNorm,
      },
      type: "optim_step",
    });
    const reply = this.http.parse(`${API}/optim_step`, await this.result(submitted, "OptimStep"), OptimStepResponse);
    return reply.metrics ?? {};
  }

  /**
   * Save the current weights for sampling and return a sampler over them. With a name the
   * weights are kept (`tinker://…/sampler_weights/<name>`); without one they are ephemeral.
   */
  async saveWeightsForSampler(name?: string): Promise<TinkerSampler> {
    if (name !== undefined) checkName(name);
    const [seq] = this.reserve(1);
    const body =
      name !== undefined
        ? { model_id: this.modelId, seq_id: seq, path: name, type: "save_weights_for_sampler" }
        : { model_id: this.modelId, seq_id: seq, sampling_session_seq_id: this.service.nextSamplingSeq(), type: "save_weights_for_sampler" };
    const submitted = await this.submit("save_weights_for_sampler", body);
    const saved = this.http.parse(`${API}/save_weights_for_sampler`, await this.result(submitted, "SaveWeightsForSampler"), SaveWeightsForSamplerResponse);
    const stops = this.options.stopTokenIds ?? [];
    if (saved.sampling_session_id) return new TinkerSampler(this.http, saved.sampling_session_id, saved.path ?? null, stops);
    if (saved.path) return this.service.createSampler({ modelPath: saved.path }, stops);
    throw new TinkerHttpError(`${API}/save_weights_for_sampler`, 200, "the reply has neither a path nor a sampling_session_id");
  }

  /** Save weights and optimizer state; returns the `tinker://…/weights/<name>` path. */
  async saveWeights(name: string): Promise<string> {
    checkName(name);
    const [seq] = this.reserve(1);
    const submitted = await this.submit("save_weights", { model_id: this.modelId, seq_id: seq, path: name, type: "save_weights" });
    return this.http.parse(`${API}/save_weights`, await this.result(submitted, "SaveWeights"), SaveWeightsResponse).path;
  }

  /**
   * Load saved weights (and, with `optimizer`, the optimizer state). Servers allow this only as a
   * model's first request, i.e. right after `createTrainingClient`.
   */
  async loadWeights(path: string, options: { optimizer?: boolean } = {}): Promise<void> {
    const [seq] = this.reserve(1);
    const submitted = await this.submit("load_weights", {
      model_id: this.modelId,
      seq_id: seq,
      path,
      optimizer: options.optimizer ?? false,
      type: "load_weights",
    });
    this.http.parse(`${API}/load_weights`, await this.result(submitted, "LoadWeights"), LoadWeightsResponse);
  }

  info(): Promise<GetInfoResponse> {
    return this.http.postParsed(`${API}/get_info`, { model_id: this.modelId, type: "get_info" }, GetInfoResponse);
  }

  /** Unload the model from the server; the client is unusable afterwards. */
  async unload(): Promise<void> {
    const submitted = await this.submit("unload_model", { model_id: this.modelId, type: "unload_model" });
    this.http.parse(`${API}/unload_model`, await this.result(submitted, "UnloadModel"), UnloadModelResponse);
  }
}

/** Tinker's losses score the model's own distribution; the protocol has no temperature to send. */
function checkTemperature(options: ScoringOptions): void {
  if ((options.temperature ?? 1) !== 1) {
    throw new TinkerLossError(`a Tinker server scores temperature 1 only (asked for ${options.temperature}); sample training rollouts at temperature 1`);
  }
}

function checkData(data: readonly Datum[]): void {
  if (data.length === 0) throw new Error("no datums: a request needs at least one");
  data.forEach(checkDatum);
}

function checkName(name: string): void {
  const result = CheckpointName.safeParse(name);
  if (!result.success) throw new Error(`checkpoint name "${name}": ${result.error.issues[0]!.message}`);
}

/** A `Sampler` over one sampling session of a Tinker server. */
export class TinkerSampler implements Sampler {
  private seq = 0;

  constructor(
    private readonly http: TinkerHttp,
    readonly samplingSessionId: string,
    /** The `tinker://` path of the weights, when they were saved under a name. */
    readonly modelPath: string | null,
    private readonly stopTokenIds: readonly number[] = [],
  ) {}

  async sample(promptTokens: readonly number[], params: SamplingParams, signal?: AbortSignal): Promise<SampledTokens> {
    const [first] = await this.sampleMany(promptTokens, params, 1, signal);
    return first!;
  }

  /** `count` independent samples of one prompt in one request (a GRPO group). */
  async sampleMany(promptTokens: readonly number[], params: SamplingParams, count: number, signal?: AbortSignal): Promise<SampledTokens[]> {
    if (params.stop.length > 0 && this.stopTokenIds.length > 0) {
      throw new Error("Tinker takes stop strings or stop token ids, not both: clear SamplingParams.stop or the sampler's stopTokenIds");
    }
    const stop = params.stop.length > 0 ? params.stop : this.stopTokenIds.length > 0 ? [...this.stopTokenIds] : undefined;
    const route = `${API}/asample`;
    const body = {
      sampling_session_id: this.samplingSessionId,
      seq_id: this.seq++,
      num_samples: count,
      prompt: { chunks: [{ type: "encoded_text", tokens: [...promptTokens] }] },
      sampling_params: {
        max_tokens: params.maxTokens,
        temperature: params.temperature,
        top_k: params.topK > 0 ? params.topK : -1,
        top_p: params.topP,
        ...(stop ? { stop } : {}),
        ...(params.seed !== undefined ? { seed: params.seed } : {}),
      },
      prompt_logprobs: false,
      topk_prompt_logprobs: 0,
      type: "sample",
    };
    const headers = { "X-Tinker-Sampling-Backpressure": "1" };
    const send = async () => this.http.parse(route, await this.http.post(route, body, signal, headers), UntypedFuture).request_id;
    const requestId = await send();
    const reply = this.http.parse(route, await retrieveFuture(this.http, requestId, { resubmit: send, requestType: "Sample", ...(signal ? { signal } : {}) }), SampleResponse);
    if (reply.sequences.length !== count) throw new TinkerHttpError(route, 200, `${reply.sequences.length} sequences for ${count} samples`);
    return reply.sequences.map((s) => {
      if (s.logprobs?.length !== s.tokens.length) {
        throw new TinkerHttpError(route, 200, "the server returned no per-token logprobs, which training needs");
      }
      return { tokens: s.tokens, logprobs: s.logprobs, finishReason: s.stop_reason };
    });
  }
}
