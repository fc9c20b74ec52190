import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PolicyLossConfig } from "@envace/grpo";
import { formatPath, type SamplingParams, type Sampler } from "@envace/protocol";
import type { Datum, LossFn, TrainingBackend } from "@envace/training";
import { z } from "zod";
import { fromWireDatum, tensor, WireDatumError } from "../datum.js";
import { ENVACE_GRPO } from "../loss-mapping.js";
import {
  CreateModelRequest,
  CreateSamplingSessionRequest,
  CreateSessionRequest,
  ForwardBackwardRequest,
  ForwardRequest,
  LoadWeightsRequest,
  ModelIdRequest,
  ModelRequest,
  OptimStepRequest,
  RetrieveFutureRequest,
  SampleRequest,
  SaveWeightsForSamplerRequest,
  SaveWeightsRequest,
  SessionRequest,
  type ForwardBackwardInput,
  type ModelInput,
} from "../wire.js";
import { FutureStore } from "./future-store.js";
import { SeqQueue, type StoredReply } from "./seq-queue.js";

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

/**
 * Saves and restores a backend's full training state (weights and optimizer) under a key.
 * `TrainingBackend` itself has no checkpoint methods, so `save_weights` and `load_weights` work
 * only when the server is given a store (see `folderCheckpoints`).
 */
export interface CheckpointStore {
  save(backend: TrainingBackend, key: CheckpointKey): Promise<void>;
  /** Restore `key` and return the backend to use from now on: `backend` itself or a new one. */
  load(backend: TrainingBackend, key: CheckpointKey, options: { optimizer: boolean }): Promise<TrainingBackend>;
}

const CHECKPOINT_PATH = /^tinker:\/\/([^/]+)\/weights\/([A-Za-z0-9_-]+)$/;

export interface TinkerServerOptions {
  /** Serve this one backend: one model at a time, whatever `base_model` asks for. */
  backend?: TrainingBackend;
  /** Or build a fresh backend for every `create_model` (and for sampling a base model). */
  createBackend?: (request: BackendRequest) => TrainingBackend | Promise<TrainingBackend>;
  /** The `base_model` names accepted and listed by `get_server_capabilities` (default: any name). */
  baseModels?: string[];
  maxContextLength?: number;
  /** Require this `X-API-Key` on every route but `healthz`. */
  apiKey?: string;
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
  /** Largest accepted request body (default 256 MiB). */
  maxBodyBytes?: number;
  /** How long a settled future stays retrievable (default 10 min). */
  futureTtlMs?: number;
  /** Unload the models of a session without a heartbeat for this long; 0 (default) never. */
  sessionTimeoutMs?: number;
}

export interface TinkerServer {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Session {
  id: string;
  lastSeen: number;
  models: Set<string>;
}

interface Model {
  id: string;
  session: Session;
  baseModel: string;
  loraRank: number | null;
  /** Settles once `create_model` has built the backend; requests wait for it. */
  backend: Promise<TrainingBackend>;
  queue: SeqQueue;
}

interface SamplingSession {
  sampler: Sampler;
  baseModel: string;
  modelPath: string | null;
}

const API = "/api/v1";
const ROUTES = [
  "GET healthz",
  "GET get_server_capabilities",
  "POST client/config",
  "POST client/dynamic_config",
  "POST create_session",
  "POST session_heartbeat",
  "POST create_model",
  "POST get_info",
  "POST unload_model",
  "POST forward_backward",
  "POST forward",
  "POST optim_step",
  "POST save_weights",
  "POST save_weights_for_sampler",
  "POST load_weights",
  "POST create_sampling_session",
  "POST asample",
  "POST retrieve_future",
] as const;

/** Tinker's losses plus this project's GRPO extension. */
export const SERVER_LOSS_FNS = ["cross_entropy", "importance_sampling", "ppo", ENVACE_GRPO] as const;

function parseBody<S extends z.ZodType>(schema: S, body: unknown, route: string): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${formatPath(issue.path) || "body"}: ${issue.message}`);
  throw new HttpError(400, "invalid_request", `${route}: ${problems.join("; ")}`);
}

function fingerprint(body: unknown): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}

function tokensOf(input: ModelInput, path: string): number[] {
  const tokens: number[] = [];
  input.chunks.forEach((chunk, c) => {
    if (chunk.type !== "encoded_text") {
      throw new HttpError(400, "unsupported", `${path}.chunks[${c}]: chunk type "${chunk.type}" is not supported (text only)`);
    }
    tokens.push(...chunk.tokens);
  });
  if (tokens.length === 0) throw new HttpError(400, "invalid_request", `${path}: has no tokens`);
  return tokens;
}

/** Metric keys must read `name:reduction`; a backend's plain keys are reported as means. */
function tinkerMetrics(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).map(([key, value]) => [key.includes(":") ? key : `${key}:mean`, value]));
}

const PpoConfig = z.strictObject({
  clip_low_threshold: z.number().min(0).max(1).default(0.8),
  clip_high_threshold: z.number().min(1).default(1.2),
});
const GrpoConfig = z.strictObject({
  eps_low: z.number(),
  eps_high: z.number(),
  dual_clip: z.number().default(0),
  kl_coef: z.number().default(0),
  entropy_coef: z.number().default(0),
  aggregation: z.string(),
});

/** The backend loss for a wire `loss_fn` and `loss_fn_config`, or a 400 naming what is wrong. */
function lossOf(input: ForwardBackwardInput, path: string): LossFn {
  const config = input.loss_fn_config ?? {};
  const configPath = `${path}.loss_fn_config`;
  switch (input.loss_fn) {
    case "cross_entropy":
    case "importance_sampling": {
      const keys = Object.keys(config);
      if (keys.length > 0) throw new HttpError(400, "invalid_request", `${configPath}: ${input.loss_fn} takes no config keys, got ${keys.join(", ")}`);
      return { type: input.loss_fn };
    }
    case "ppo": {
      const c = parseBody(PpoConfig, config, configPath);
      return { type: "ppo", clipLow: c.clip_low_threshold, clipHigh: c.clip_high_threshold };
    }
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
      throw new HttpError(
        400,
        "unsupported",
        `${path}.loss_fn: "${input.loss_fn}" is not supported by this server (supported: ${SERVER_LOSS_FNS.join(", ")})`,
      );
  }
}

function datumsOf(input: ForwardBackwardInput, loss: LossFn, path: string): Datum[] {
  return input.data.map((wire, i) => {
    let datum: Datum;
    try {
      datum = fromWireDatum(wire, i, input.loss_fn);
    } catch (error) {
      if (error instanceof WireDatumError) throw new HttpError(400, "invalid_request", `${path}.${error.message}`);
      throw error;
    }
    if (loss.type === "grpo") {
      if (!wire.loss_fn_inputs.mask) throw new HttpError(400, "invalid_request", `${path}.data[${i}].loss_fn_inputs: ${ENVACE_GRPO} requires mask`);
      if (loss.config.klCoef > 0 && !datum.refLogprobs) {
        throw new HttpError(400, "invalid_request", `${path}.data[${i}].loss_fn_inputs: kl_coef > 0 requires ref_logprobs`);
      }
    }
    return datum;
  });
}

function samplingParamsOf(request: SampleRequest): SamplingParams {
  const p = request.sampling_params;
  const stop = p.stop ?? [];
  if (stop.some((s) => typeof s === "number")) {
    throw new HttpError(400, "unsupported", "sampling_params.stop: stop token ids are not supported by this server; send stop strings");
  }
  return {
    temperature: p.temperature,
    topP: p.top_p,
    topK: p.top_k < 0 ? 0 : p.top_k,
    maxTokens: p.max_tokens,
    stop: stop as string[],
    ...(p.seed !== null && p.seed !== undefined ? { seed: p.seed } : {}),
  };
}

/**
 * A Tinker-compatible HTTP server (JSON only) over any `TrainingBackend`: sessions and models,
 * `forward_backward`, `forward`, `optim_step`, sampler weights and sampling, checkpoints when a
 * `CheckpointStore` is given, and futures with a long-polling `retrieve_future`. Each model's
 * requests run in `seq_id` order. Bad requests get a 4xx JSON reply `{detail, code}` that names
 * the problem; a failing backend fails the request's future, never the server.
 */
export class TinkerServerCore {
  private readonly sessions = new Map<string, Session>();
  private readonly models = new Map<string, Model>();
  private readonly samplingSessions = new Map<string, SamplingSession>();
  private readonly samplerPaths = new Map<string, SamplingSession>();
  private readonly futures: FutureStore;
  private readonly sweeper: NodeJS.Timeout;
  private samplingCounter = 0;

  constructor(readonly options: TinkerServerOptions) {
    if (!options.backend === !options.createBackend) throw new Error("give exactly one of backend and createBackend");
    this.futures = new FutureStore(options.futureTtlMs ?? 600_000);
    this.sweeper = setInterval(() => this.sweep(), 10_000);
    this.sweeper.unref();
  }

  private sweep(): void {
    this.futures.sweep();
    const timeout = this.options.sessionTimeoutMs ?? 0;
    if (timeout <= 0) return;
    for (const session of this.sessions.values()) {
      if (Date.now() - session.lastSeen > timeout) {
        for (const id of session.models) this.unload(id, `session ${session.id} expired`);
        this.sessions.delete(session.id);
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
    this.futures.wakeAll();
  }

  /** The node:http request listener. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    void this.dispatch(req, res).catch((error: unknown) => {
      const known = error instanceof HttpError;
      reply(res, known ? error.status : 500, {
        detail: error instanceof Error ? error.message : String(error),
        code: known ? error.code : "internal_error",
      });
    });
  };

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const method = req.method ?? "GET";
    if (!url.pathname.startsWith(`${API}/`)) throw new HttpError(404, "not_found", `no route ${method} ${url.pathname}`);
    const route = url.pathname.slice(API.length + 1);
    if (this.options.apiKey !== undefined && route !== "healthz" && req.headers["x-api-key"] !== this.options.apiKey) {
      throw new HttpError(401, "unauthorized", "missing or wrong X-API-Key");
    }
    const sampler = /^samplers\/([^/]+)$/.exec(route);
    if (sampler && method === "GET") {
      let id: string;
      try {
        id = decodeURIComponent(sampler[1]!);
      } catch {
        throw new HttpError(400, "invalid_request", `samplers: "${sampler[1]!}" is not a valid URL component`);
      }
      reply(res, 200, this.describeSampler(id));
      return;
    }
    const known = ROUTES.find((r) => r.endsWith(` ${route}`));
    if (!known) throw new HttpError(404, "not_found", `no route ${method} ${url.pathname}`);
    if (!known.startsWith(`${method} `)) throw new HttpError(405, "method_not_allowed", `${url.pathname} takes ${known.split(" ")[0]}, not ${method}`);
    const body = method === "POST" ? await this.readJson(req, route) : undefined;
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const [status, payload] = await this.route(route, body, abort.signal);
    reply(res, status, payload);
  }

  private async readJson(req: IncomingMessage, route: string): Promise<unknown> {
    const type = req.headers["content-type"];
    if (type !== undefined && !type.includes("json")) {
      throw new HttpError(415, "unsupported_media_type", `${route}: Content-Type ${type} is not supported; send application/json`);
    }
    const limit = this.options.maxBodyBytes ?? 256 * 1024 * 1024;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) throw new HttpError(413, "too_large", `${route}: body is larger than ${limit} bytes`);
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    if (text.trim() === "") return {};
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new HttpError(400, "invalid_json", `${route}: body is not JSON (${(error as Error).message})`);
    }
  }

  private async route(route: string, body: unknown, signal: AbortSignal): Promise<[number, unknown]> {
    switch (route) {
      case "healthz":
        return [200, { status: "ok" }];
      case "get_server_capabilities":
        return [
          200,
          {
            supported_models: (this.options.baseModels ?? []).map((name) => ({
              model_name: name,
              ...(this.options.maxContextLength ? { max_context_length: this.options.maxContextLength } : {}),
            })),
          },
        ];
      case "client/config":
        return [200, { pjwt_auth_enabled: false, envace_loss_fns: [ENVACE_GRPO] }];
      case "client/dynamic_config":
        return [200, { refresh_interval_sec: 300 }];
      case "create_session":
        return [200, this.createSession(body)];
      case "session_heartbeat": {
        this.session(parseBody(SessionRequest, body, route).session_id).lastSeen = Date.now();
        return [200, { type: "session_heartbeat" }];
      }
      case "create_model":
        return [200, this.createModel(body)];
      case "get_info":
        return [200, this.info(parseBody(ModelIdRequest, body, route).model_id)];
      case "unload_model": {
        const { model_id } = parseBody(ModelIdRequest, body, route);
        this.model(model_id);
        const id = this.futures.create();
        this.unload(model_id, `model ${model_id} was unloaded`);
        this.futures.resolve(id, { model_id, type: "unload_model" });
        return [200, { request_id: id, model_id }];
      }
      case "forward_backward":
      case "forward":
      case "optim_step":
      case "save_weights":
      case "save_weights_for_sampler":
      case "load_weights":
        return this.sequenced(route, body);
      case "create_sampling_session":
        return [200, await this.createSamplingSession(body)];
      case "asample":
        return [200, this.sample(body)];
      case "retrieve_future":
        return this.retrieve(body, signal);
      default:
        throw new HttpError(404, "not_found", `no route ${API}/${route}`);
    }
  }

  private createSession(body: unknown): unknown {
    parseBody(CreateSessionRequest, body, "create_session");
    const id = `session-${randomUUID().slice(0, 8)}`;
    this.sessions.set(id, { id, lastSeen: Date.now(), models: new Set() });
    return { type: "create_session", session_id: id };
  }

  private session(id: string): Session {
    const session = this.sessions.get(id);
    if (!session) throw new HttpError(404, "not_found", `unknown session_id "${id}"`);
    return session;
  }

  private model(id: string): Model {
    const model = this.models.get(id);
    if (!model) throw new HttpError(404, "not_found", `unknown model_id "${id}"`);
    return model;
  }

  private createModel(body: unknown): unknown {
    const request = parseBody(CreateModelRequest, body, "create_model");
    const session = this.session(request.session_id);
    const allowed = this.options.baseModels;
    if (allowed && !allowed.includes(request.base_model)) {
      throw new HttpError(400, "invalid_request", `create_model: base_model "${request.base_model}" is not served here (served: ${allowed.join(", ")})`);
    }
    const id = `${session.id}:train:${request.model_seq_id}`;
    if (this.models.has(id)) throw new HttpError(409, "conflict", `create_model: model_seq_id ${request.model_seq_id} of ${session.id} is already used`);
    if (this.options.backend && this.models.size > 0) {
      const live = [...this.models.keys()].join(", ");
      throw new HttpError(409, "conflict", `create_model: this server serves one model at a time; unload ${live} first`);
    }
    const futureId = this.futures.create();
    const loraRank = request.lora_config?.rank ?? null;
    const build = async (): Promise<TrainingBackend> =>
      this.options.backend ??
      this.options.createBackend!({
        baseModel: request.base_model,
        loraRank,
        ...(request.lora_config?.seed !== undefined ? { seed: request.lora_config.seed } : {}),
      });
    const backend = build();
    // The id is taken at once, so a second create_model with the same number conflicts.
    this.models.set(id, {
      id,
      session,
      baseModel: request.base_model,
      loraRank,
      backend,
      queue: new SeqQueue(`model ${id}`, this.options.maxWaitingPerModel ?? 1024, this.options.seqGapTimeoutMs ?? 120_000),
    });
    session.models.add(id);
    backend.then(
      () => this.futures.resolve(futureId, { model_id: id, type: "create_model" }),
      (error: unknown) => {
        this.unload(id, `create_model failed`);
        this.futures.reject(futureId, `create_model: ${error instanceof Error ? error.message : String(error)}`, "server");
      },
    );
    return { request_id: futureId, model_id: id };
  }

  private info(modelId: string): unknown {
    const model = this.model(modelId);
    return {
      type: "get_info",
      model_id: model.id,
      model_data: { arch: "envace", model_name: model.baseModel, tokenizer_id: null },
      is_lora: model.loraRank !== null && model.loraRank > 0,
      lora_rank: model.loraRank,
      model_name: model.baseModel,
    };
  }

  private unload(modelId: string, reason: string): void {
    const model = this.models.get(modelId);
    if (!model) return;
    this.models.delete(modelId);
    model.session.models.delete(modelId);
    model.queue.cancel(reason);
    // A backend built for this model alone can release its memory once its last request ran.
    if (this.options.createBackend) {
      void model.backend
        .then(async (backend) => {
          await model.queue.drained();
          (backend as { dispose?: () => void }).dispose?.();
        })
        .catch(() => undefined);
    }
  }

  /**
   * A request that runs against a model in `seq_id` order. Envelope errors (no model id or
   * sequence number, unknown model, a reused or far-ahead number) are rejected without taking the
   * number; a request that is well addressed but invalid takes its number with a no-op, so the
   * requests after it do not wait for it.
   */
  private sequenced(route: string, body: unknown): [number, unknown] {
    const { model_id, seq_id } = parseBody(ModelRequest, body, route);
    const model = this.model(model_id);
    const print = fingerprint({ route, body });
    const verdict = model.queue.check(seq_id, print);
    if (verdict.kind === "repeat") {
      if (verdict.reply.status !== 200) throw new HttpError(verdict.reply.status, "invalid_request", (verdict.reply.body as { detail: string }).detail);
      return [200, verdict.reply.body];
    }
    if (verdict.kind === "conflict") throw new HttpError(409, "seq_conflict", `${route}: ${verdict.message}`);
    if (verdict.kind === "too-far") throw new HttpError(400, "seq_out_of_range", `${route}: ${verdict.message}`);

    let task: () => Promise<unknown>;
    try {
      task = this.task(route, body, model, seq_id);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      model.queue.enqueue(seq_id, print, { status: error.status, body: { detail: error.message } }, () => Promise.resolve(), () => undefined);
      throw error;
    }
    const futureId = this.futures.create();
    const accepted: StoredReply = { status: 200, body: { request_id: futureId, model_id } };
    model.queue.enqueue(
      seq_id,
      print,
      accepted,
      async () => {
        try {
          this.futures.resolve(futureId, await task());
        } catch (error) {
          this.futures.reject(futureId, `${route}: ${error instanceof Error ? error.message : String(error)}`, "server");
        }
      },
      (message) => this.futures.reject(futureId, `${route}: ${message}`, "user"),
    );
    return [200, accepted.body];
  }

  /** Validate a sequenced request fully and return the work it stands for. */
  private task(route: string, body: unknown, model: Model, seq: number): () => Promise<unknown> {
    const backend = () => model.backend;
    switch (route) {
      case "forward_backward": {
        const request = parseBody(ForwardBackwardRequest, body, route);
        const input = request.forward_backward_input;
        const loss = lossOf(input, "forward_backward_input");
        const data = datumsOf(input, loss, "forward_backward_input");
        return async () => {
          const result = await (await backend()).forwardBackward(data, loss);
          return {
            loss_fn_output_type: "ArrayRecord",
            loss_fn_outputs: result.logprobs.map((lp) => ({ logprobs: tensor(lp, "float32") })),
            metrics: { ...tinkerMetrics(result.metrics), "loss:sum": result.loss },
          };
        };
      }
      case "forward": {
        const request = parseBody(ForwardRequest, body, route);
        const input = request.forward_input;
        const loss = lossOf(input, "forward_input");
        const data = datumsOf(input, loss, "forward_input");
        return async () => {
          const logprobs = await (await backend()).forward(data);
          return { loss_fn_output_type: "ArrayRecord", loss_fn_outputs: logprobs.map((lp) => ({ logprobs: tensor(lp, "float32") })), metrics: {} };
        };
      }
      case "optim_step": {
        const { adam_params: a } = parseBody(OptimStepRequest, body, route);
        const adam = {
          learningRate: a.learning_rate,
          beta1: a.beta1,
          beta2: a.beta2,
          eps: a.eps,
          weightDecay: a.weight_decay,
          gradClipNorm: a.grad_clip_norm,
        };
        return async () => ({ metrics: tinkerMetrics(await (await backend()).optimStep(adam)), type: "optim_step" });
      }
      case "save_weights_for_sampler": {
        const request = parseBody(SaveWeightsForSamplerRequest, body, route);
        if (request.path === undefined && request.sampling_session_seq_id === undefined) {
          throw new HttpError(400, "invalid_request", `${route}: give a path (a name) or a sampling_session_seq_id`);
        }
        return async () => {
          const name = request.path ?? `ephemeral-${++this.samplingCounter}`;
          const sampler = await (await backend()).saveWeightsForSampler(name);
          if (request.path === undefined) {
            const id = `${model.session.id}:sample:${++this.samplingCounter}`;
            this.samplingSessions.set(id, { sampler, baseModel: model.baseModel, modelPath: null });
            return { path: null, sampling_session_id: id, type: "save_weights_for_sampler" };
          }
          const path = `tinker://${model.id}/sampler_weights/${request.path}`;
          this.samplerPaths.set(path, { sampler, baseModel: model.baseModel, modelPath: path });
          return { path, sampling_session_id: null, type: "save_weights_for_sampler" };
        };
      }
      case "save_weights": {
        const request = parseBody(SaveWeightsRequest, body, route);
        const store = this.checkpointStore(route);
        const name = request.path ?? `checkpoint-${seq}`;
        return async () => {
          await store.save(await backend(), { modelId: model.id, name });
          return { path: `tinker://${model.id}/weights/${name}`, type: "save_weights" };
        };
      }
      case "load_weights": {
        const request = parseBody(LoadWeightsRequest, body, route);
        if (seq !== 1) {
          throw new HttpError(400, "seq_out_of_range", `${route}: load_weights is allowed only as a model's first request (seq_id 1), got seq_id ${seq}`);
        }
        const store = this.checkpointStore(route);
        const match = CHECKPOINT_PATH.exec(request.path);
        if (!match) throw new HttpError(400, "invalid_request", `${route}: path: "${request.path}" is not a tinker://<model>/weights/<name> path`);
        const key = { modelId: match[1]!, name: match[2]! };
        return async () => {
          const restored = await store.load(await backend(), key, { optimizer: request.optimizer });
          model.backend = Promise.resolve(restored);
          return { path: request.path, model_id: model.id, type: "load_weights" };
        };
      }
      default:
        throw new HttpError(404, "not_found", `no route ${API}/${route}`);
    }
  }

  private checkpointStore(route: string): CheckpointStore {
    if (!this.options.checkpoints) {
      throw new HttpError(400, "unsupported", `${route}: this server has no checkpoint store (start it with the checkpoints option)`);
    }
    return this.options.checkpoints;
  }

  private async createSamplingSession(body: unknown): Promise<unknown> {
    const request = parseBody(CreateSamplingSessionRequest, body, "create_sampling_session");
    const session = this.session(request.session_id);
    let target: SamplingSession;
    if (request.model_path !== undefined) {
      const saved = this.samplerPaths.get(request.model_path);
      if (!saved) {
        throw new HttpError(404, "not_found", `create_sampling_session: model_path: no sampler weights "${request.model_path}" on this server`);
      }
      target = saved;
    } else {
      const baseModel = request.base_model!;
      if (!this.options.createBackend) {
        throw new HttpError(400, "unsupported", "create_sampling_session: base_model: this server serves one backend and cannot sample a base model; save sampler weights instead");
      }
      const backend = await this.options.createBackend({ baseModel, loraRank: null });
      target = { sampler: await backend.saveWeightsForSampler(`base-${++this.samplingCounter}`), baseModel, modelPath: null };
    }
    const id = `${session.id}:sample:${++this.samplingCounter}`;
    this.samplingSessions.set(id, target);
    return { type: "create_sampling_session", sampling_session_id: id };
  }

  private describeSampler(id: string): unknown {
    const session = this.samplingSessions.get(id);
    if (!session) throw new HttpError(404, "not_found", `unknown sampler "${id}"`);
    return { sampler_id: id, base_model: session.baseModel, ...(session.modelPath ? { model_path: session.modelPath } : {}) };
  }

  private sample(body: unknown): unknown {
    const request = parseBody(SampleRequest, body, "asample");
    if (request.prompt_logprobs || request.topk_prompt_logprobs > 0) {
      throw new HttpError(400, "unsupported", "asample: prompt_logprobs are not supported by this server");
    }
    let session: SamplingSession | undefined;
    if (request.sampling_session_id !== undefined) {
      session = this.samplingSessions.get(request.sampling_session_id);
      if (!session) throw new HttpError(404, "not_found", `asample: unknown sampling_session_id "${request.sampling_session_id}"`);
    } else if (request.model_path !== undefined) {
      session = this.samplerPaths.get(request.model_path);
      if (!session) throw new HttpError(404, "not_found", `asample: model_path: no sampler weights "${request.model_path}" on this server`);
    } else {
      throw new HttpError(400, "invalid_request", "asample: give a sampling_session_id or a model_path");
    }
    const prompt = tokensOf(request.prompt, "prompt");
    const params = samplingParamsOf(request);
    const futureId = this.futures.create();
    const sampler = session.sampler;
    void (async () => {
      try {
        const sequences = [];
        for (let i = 0; i < request.num_samples; i++) {
          // Distinct seeds per sample, so a seeded request still gives a varied group.
          const seeded = params.seed !== undefined ? { ...params, seed: params.seed + i } : params;
          const out = await sampler.sample(prompt, seeded);
          if (out.finishReason === "abort") throw new Error("the sampler aborted");
          sequences.push({ stop_reason: out.finishReason, tokens: out.tokens, logprobs: out.logprobs });
        }
        this.futures.resolve(futureId, { type: "sample", sequences, prompt_logprobs: null, topk_prompt_logprobs: null, prompt_cache_hit_tokens: 0 });
      } catch (error) {
        this.futures.reject(futureId, `asample: ${(error as Error).message}`, "server");
      }
    })();
    return { request_id: futureId };
  }

  private async retrieve(body: unknown, signal: AbortSignal): Promise<[number, unknown]> {
    const { request_id } = parseBody(RetrieveFutureRequest, body, "retrieve_future");
    if (!this.futures.has(request_id)) throw new HttpError(404, "not_found", `retrieve_future: unknown request_id "${request_id}"`);
    const state = await this.futures.wait(request_id, this.options.longPollMs ?? 20_000, signal);
    if (!state) throw new HttpError(404, "not_found", `retrieve_future: unknown request_id "${request_id}"`);
    switch (state.status) {
      case "pending":
        return [200, { type: "try_again", request_id, queue_state: "active" }];
      case "failed":
        return [200, { error: state.error, category: state.category }];
      case "done":
        return [200, state.result];
    }
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** Start a Tinker-compatible server on `host:port` (default 127.0.0.1 and a free port). */
export async function startTinkerServer(options: TinkerServerOptions): Promise<TinkerServer> {
  const core = new TinkerServerCore(options);
  const server: Server = createServer(core.handle);
  // A long poll must not be cut by the default request timeout.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        core.close();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
