import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TrainingBackend } from "@envace/training";
import { tensor } from "../datum.js";
import { TinkerUsageError } from "../errors.js";
import { ENVACE_GRPO } from "../loss-mapping.js";
import { encodeForwardBackwardOutput, encodeSampleResponse } from "../proto/codec.js";
import {
  CreateModelRequest,
  CreateSessionRequest,
  ForwardBackwardRequest,
  ForwardRequest,
  ModelIdRequest,
  ModelRequest,
  OptimStepRequest,
  RetrieveFutureRequest,
  SaveWeightsForSamplerRequest,
  SessionRequest,
  WeightsInfoRequest,
  type ForwardBackwardInput,
  type ForwardBackwardOutput,
} from "../wire.js";
import { ApiKeys, type Caller } from "./auth.js";
import { acceptsProtobuf, readBody, reply } from "./body.js";
import { loadWeightsTask, saveWeightsTask, weightsInfo, type CheckpointModel } from "./checkpoint-tasks.js";
import { failureOf } from "./failures.js";
import { FutureStore } from "./future-store.js";
import { TinkerApiError, type TinkerServerOptions } from "./options.js";
import { datumsOf, fingerprint, lossOf, parseBody, tinkerMetrics } from "./requests.js";
import { matchRoute } from "./routes.js";
import { DEFAULT_MAX_TOPK, Samplers } from "./sampling.js";
import { SeqQueue, type StoredReply } from "./seq-queue.js";

interface Session {
  id: string;
  /** The caller that created it; only it may address the session, its models and their results. */
  owner: Caller;
  lastSeen: number;
  models: Set<string>;
}

interface Model extends CheckpointModel {
  session: Session;
  queue: SeqQueue;
}

export const DEFAULT_SESSION_TIMEOUT_MS = 300_000;

/** Where failures go that a client is told only the gist of. */
function logToStderr(error: unknown, context: string): void {
  process.stderr.write(`tinker server: ${context}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
}

/**
 * A Tinker-compatible HTTP server over any `TrainingBackend`: sessions and models,
 * `forward_backward` (JSON, or protobuf as the SDK ≥ 0.25 sends it), `forward`, `optim_step`,
 * sampler weights and sampling, checkpoints when a `CheckpointStore` is given, and futures with a
 * long-polling `retrieve_future` (results as protobuf when the client's `Accept` asks). Each
 * model's requests run in `seq_id` order. A request that cannot be addressed gets a 4xx JSON
 * reply `{detail, code}`; one that is addressed but invalid takes its sequence number and its
 * future fails with the reason (category `user`); a failing backend fails the request's future,
 * never the server. Authorization is decided on the matched route; what a key creates only that
 * key can address.
 */
export class TinkerServerCore {
  private readonly sessions = new Map<string, Session>();
  private readonly models = new Map<string, Model>();
  private readonly samplers: Samplers;
  private readonly futures: FutureStore;
  private readonly sweeper: NodeJS.Timeout;
  private readonly keys: ApiKeys;
  private readonly onError: (error: unknown, context: string) => void;

  constructor(readonly options: TinkerServerOptions) {
    if (!options.backend === !options.createBackend) throw new TinkerUsageError("give exactly one of backend and createBackend");
    const keys = typeof options.apiKey === "string" ? [options.apiKey] : (options.apiKey ?? []);
    if (keys.some((key) => key.length === 0)) throw new TinkerUsageError("apiKey: a key may not be empty");
    this.keys = new ApiKeys(keys);
    this.onError = options.onError ?? logToStderr;
    this.futures = new FutureStore(options.futureTtlMs ?? 600_000);
    this.samplers = new Samplers(this.futures, options.createBackend, 256, this.onError, options.maxTopkPromptLogprobs ?? DEFAULT_MAX_TOPK);
    this.sweeper = setInterval(() => this.sweep(), 10_000);
    this.sweeper.unref();
  }

  /** Forget settled futures past their time, and close sessions past their timeout with their models. */
  sweep(now = Date.now()): void {
    this.futures.sweep(now);
    const timeout = this.options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
    if (timeout <= 0) return;
    for (const session of this.sessions.values()) {
      if (now - session.lastSeen > timeout) {
        for (const id of session.models) this.unload(id, `session ${session.id} expired`);
        this.samplers.dropSession(session.id);
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
      if (error instanceof TinkerApiError) {
        reply(res, error.status, { detail: error.message, code: error.code }, error.status === 429 ? { "Retry-After": "10" } : {});
        return;
      }
      // Details of the server's own faults stay in its log.
      this.onError(error, `${req.method ?? "?"} request`);
      reply(res, 500, { detail: "internal error (the server log has the cause)", code: "internal_error" });
    });
  };

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const matched = matchRoute(method, req.url ?? "/");
    const caller = this.keys.check(req.headers["x-api-key"]);
    if (matched.spec.protected && caller === undefined) throw new TinkerApiError(401, "unauthorized", "missing or wrong X-API-Key");
    const route = matched.spec.path;
    if (route === "samplers/{id}") {
      reply(res, 200, this.samplers.describe(matched.param!, caller!));
      return;
    }
    const { body, forwardOnly } =
      method === "POST" ? await readBody(req, route, this.options.maxBodyBytes ?? 256 * 1024 * 1024) : { body: undefined, forwardOnly: false };
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const [status, payload] = await this.route(route, body, { signal: abort.signal, forwardOnly, protobuf: acceptsProtobuf(req), caller: caller ?? "" });
    reply(res, status, payload);
  }

  private async route(
    route: string,
    body: unknown,
    how: { signal: AbortSignal; forwardOnly: boolean; protobuf: boolean; caller: Caller },
  ): Promise<[number, unknown]> {
    const { caller } = how;
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
        // Plain HTTP/1.1 serves the SDK's httpx transport; `envace_*` keys are this project's
        // extensions (the losses beyond Tinker's, and how losses are reduced).
        return [
          200,
          {
            pjwt_auth_enabled: false,
            use_pyqwest_transport: false,
            ...(this.options.compressForwardBackward ? { proto_compress_fwdbwd: true } : {}),
            envace_loss_fns: [ENVACE_GRPO],
            envace_loss_reduction: "sum",
          },
        ];
      case "client/dynamic_config":
        return [200, { refresh_interval_sec: 300 }];
      case "create_session":
        return [200, this.createSession(body, caller)];
      case "session_heartbeat":
        this.session(parseBody(SessionRequest, body, route).session_id, caller);
        return [200, { type: "session_heartbeat" }];
      case "create_model":
        return [200, this.createModel(body, caller)];
      case "get_info":
        return [200, this.info(parseBody(ModelIdRequest, body, route).model_id, caller)];
      case "unload_model": {
        const { model_id } = parseBody(ModelIdRequest, body, route);
        this.model(model_id, caller);
        const id = this.futures.create(caller);
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
        return this.sequenced(route, body, how.forwardOnly, caller);
      case "create_sampling_session":
        return [200, await this.samplers.createSession(body, (id) => this.session(id, caller))];
      case "asample":
        return [200, this.samplers.sample(body, caller)];
      case "retrieve_future":
        return this.retrieve(body, how.signal, how.protobuf, caller);
      case "weights_info":
        return [200, await weightsInfo(this.options.checkpoints, parseBody(WeightsInfoRequest, body, route).tinker_path, caller)];
      case "telemetry":
        return [200, { status: "accepted" }];
      default:
        throw new TinkerApiError(404, "not_found", `no route /api/v1/${route}`);
    }
  }

  private createSession(body: unknown, caller: Caller): unknown {
    parseBody(CreateSessionRequest, body, "create_session");
    const cap = this.options.maxSessions ?? 64;
    if (this.sessions.size >= cap) this.sweep();
    if (this.sessions.size >= cap) {
      const timeout = this.options.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
      const expiry = timeout > 0 ? `; a session without a heartbeat for ${Math.ceil(timeout / 1000)} s expires` : "";
      throw new TinkerApiError(429, "too_many_sessions", `create_session: this server holds at most ${cap} sessions at once${expiry}`);
    }
    const id = this.options.sessionIds?.() ?? `session-${randomUUID().slice(0, 8)}`;
    if (this.sessions.has(id)) throw new TinkerApiError(409, "conflict", `create_session: session ${id} exists`);
    this.sessions.set(id, { id, owner: caller, lastSeen: Date.now(), models: new Set() });
    return { type: "create_session", session_id: id };
  }

  /** A session of the caller's (another caller's is as unknown as none), marked alive. */
  private session(id: string, caller: Caller): Session {
    const session = this.sessions.get(id);
    if (session?.owner !== caller) throw new TinkerApiError(404, "not_found", `unknown session_id "${id}"`);
    session.lastSeen = Date.now();
    return session;
  }

  private model(id: string, caller: Caller): Model {
    const model = this.models.get(id);
    if (model?.owner !== caller) throw new TinkerApiError(404, "not_found", `unknown model_id "${id}"`);
    model.session.lastSeen = Date.now();
    return model;
  }

  private createModel(body: unknown, caller: Caller): unknown {
    const request = parseBody(CreateModelRequest, body, "create_model");
    const session = this.session(request.session_id, caller);
    const allowed = this.options.baseModels;
    if (allowed && !allowed.includes(request.base_model)) {
      throw new TinkerApiError(400, "invalid_request", `create_model: base_model "${request.base_model}" is not served here (served: ${allowed.join(", ")})`);
    }
    const id = `${session.id}:train:${request.model_seq_id}`;
    if (this.models.has(id)) throw new TinkerApiError(409, "conflict", `create_model: model_seq_id ${request.model_seq_id} of ${session.id} is already used`);
    if (this.options.backend && this.models.size > 0) {
      const live = [...this.models.values()].filter((m) => m.owner === caller).map((m) => m.id);
      throw new TinkerApiError(
        409,
        "conflict",
        `create_model: this server serves one model at a time; ${live.length > 0 ? `unload ${live.join(", ")} first` : "another caller's model is loaded"}`,
      );
    }
    const cap = this.options.maxModels ?? 64;
    if (this.models.size >= cap)
      throw new TinkerApiError(429, "too_many_models", `create_model: this server holds at most ${cap} models at once; unload one first`);
    const futureId = this.futures.create(caller);
    const loraRank = request.lora_config?.rank ?? null;
    const lora = {
      train_unembed: request.lora_config?.train_unembed ?? true,
      train_mlp: request.lora_config?.train_mlp ?? true,
      train_attn: request.lora_config?.train_attn ?? true,
    };
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
      owner: caller,
      baseModel: request.base_model,
      loraRank,
      lora,
      backend,
      queue: new SeqQueue(`model ${id}`, this.options.maxWaitingPerModel ?? 1024, this.options.seqGapTimeoutMs ?? 120_000),
    });
    session.models.add(id);
    backend.then(
      () => this.futures.resolve(futureId, { model_id: id, type: "create_model" }),
      (error: unknown) => {
        this.unload(id, `create_model failed`);
        const failure = failureOf(error, "create_model", this.onError);
        this.futures.reject(futureId, failure.message, failure.category);
      },
    );
    return { request_id: futureId, model_id: id };
  }

  private info(modelId: string, caller: Caller): unknown {
    const model = this.model(modelId, caller);
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
   * sequence number, unknown model, a reused or far-ahead number) are refused without taking the
   * number. A request that is well addressed but invalid or unsupported is accepted: it takes its
   * number (so the requests after it do not wait) and its future fails at once with the reason,
   * which the SDK raises without retrying.
   */
  private sequenced(route: string, body: unknown, forwardOnly: boolean, caller: Caller): [number, unknown] {
    const { model_id, seq_id } = parseBody(ModelRequest, body, route);
    const model = this.model(model_id, caller);
    const print = fingerprint({ route, body, forwardOnly });
    const verdict = model.queue.check(seq_id, print);
    if (verdict.kind === "repeat") return [200, verdict.reply.body];
    if (verdict.kind === "conflict") throw new TinkerApiError(409, "seq_conflict", `${route}: ${verdict.message}`);
    if (verdict.kind === "too-far") throw new TinkerApiError(400, "seq_out_of_range", `${route}: ${verdict.message}`);

    let task: () => Promise<unknown>;
    let refusal: string | undefined;
    try {
      task = this.task(route, body, model, seq_id, forwardOnly);
    } catch (error) {
      if (!(error instanceof TinkerApiError)) throw error;
      refusal = error.message.startsWith(`${route}: `) ? error.message : `${route}: ${error.message}`;
      task = () => Promise.resolve();
    }
    const futureId = this.futures.create(caller, route === "forward_backward" || route === "forward" ? "forward_backward" : "json");
    const accepted: StoredReply = { status: 200, body: { request_id: futureId, model_id } };
    if (refusal !== undefined) this.futures.reject(futureId, refusal, "user");
    model.queue.enqueue(
      seq_id,
      print,
      accepted,
      async () => {
        if (refusal !== undefined) return;
        try {
          this.futures.resolve(futureId, await task());
        } catch (error) {
          const failure = failureOf(error, route, this.onError);
          this.futures.reject(futureId, failure.message, failure.category);
        }
      },
      (message) => this.futures.reject(futureId, `${route}: ${message}`, "user"),
    );
    return [200, accepted.body];
  }

  /** Validate a sequenced request fully and return the work it stands for. */
  private task(route: string, body: unknown, model: Model, seq: number, forwardOnly: boolean): () => Promise<unknown> {
    const backend = () => model.backend;
    switch (route) {
      case "forward_backward": {
        const request = parseBody(ForwardBackwardRequest, body, route);
        const input = request.forward_backward_input;
        if (forwardOnly) return this.forwardTask(input, "forward_backward_input", backend);
        const loss = lossOf(input, "forward_backward_input");
        const data = datumsOf(input, loss, "forward_backward_input");
        return async (): Promise<ForwardBackwardOutput> => {
          const result = await (await backend()).forwardBackward(data, loss);
          return {
            loss_fn_output_type: "ArrayRecord",
            loss_fn_outputs: result.logprobs.map((lp) => ({ logprobs: tensor(lp, "float32") })),
            metrics: { ...tinkerMetrics(result.metrics), "loss:sum": result.loss },
          };
        };
      }
      case "forward":
        return this.forwardTask(parseBody(ForwardRequest, body, route).forward_input, "forward_input", backend);
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
          throw new TinkerApiError(400, "invalid_request", `${route}: give a path (a name) or a sampling_session_seq_id`);
        }
        return async () => {
          const sampler = await (await backend()).saveWeightsForSampler(request.path ?? this.samplers.ephemeralName());
          const saved = this.samplers.save(
            sampler,
            { sessionId: model.session.id, modelId: model.id, baseModel: model.baseModel, owner: model.owner },
            request.path,
          );
          return { ...saved, type: "save_weights_for_sampler" };
        };
      }
      case "save_weights":
        return saveWeightsTask(this.options.checkpoints, model, body, seq);
      case "load_weights":
        return loadWeightsTask(this.options.checkpoints, model, body, seq, (restored) => {
          model.backend = Promise.resolve(restored);
        });
      default:
        throw new TinkerApiError(404, "not_found", `no route /api/v1/${route}`);
    }
  }

  /** A forward pass only: the request's loss is checked, its log-probabilities returned. */
  private forwardTask(input: ForwardBackwardInput, path: string, backend: () => Promise<TrainingBackend>): () => Promise<ForwardBackwardOutput> {
    const data = datumsOf(input, lossOf(input, path), path);
    return async () => {
      const logprobs = await (await backend()).forward(data);
      return { loss_fn_output_type: "ArrayRecord", loss_fn_outputs: logprobs.map((lp) => ({ logprobs: tensor(lp, "float32") })), metrics: {} };
    };
  }

  private async retrieve(body: unknown, signal: AbortSignal, protobuf: boolean, caller: Caller): Promise<[number, unknown]> {
    const { request_id } = parseBody(RetrieveFutureRequest, body, "retrieve_future");
    if (!this.futures.has(request_id, caller)) throw new TinkerApiError(404, "not_found", `retrieve_future: unknown request_id "${request_id}"`);
    const state = await this.futures.wait(request_id, this.options.longPollMs ?? 20_000, signal);
    if (!state) throw new TinkerApiError(404, "not_found", `retrieve_future: unknown request_id "${request_id}"`);
    switch (state.status) {
      case "pending":
        return [200, { type: "try_again", request_id, queue_state: "active" }];
      case "failed":
        return [200, { error: state.error, category: state.category }];
      case "done": {
        if (!protobuf) return [200, state.result];
        // The SDK ≥ 0.25 takes these two result types only as protobuf.
        const kind = this.futures.kindOf(request_id);
        if (kind === "forward_backward") return [200, encodeForwardBackwardOutput(state.result as ForwardBackwardOutput)];
        if (kind === "sample") return [200, encodeSampleResponse(state.result as Parameters<typeof encodeSampleResponse>[0])];
        return [200, state.result];
      }
    }
  }
}
