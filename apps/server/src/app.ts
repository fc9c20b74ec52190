import { createHash, timingSafeEqual } from "node:crypto";
import { ConcurrencyLimit } from "@envace/concurrency";
import { HttpError } from "@envace/http";
import { canStream, type Policy, type StreamingPolicy, type Tokenizer } from "@envace/protocol";
import type { RehearsalMemory } from "@envace/rehearsal";
import type { Logger } from "pino";
import type { IncomingMessage, ServerResponse } from "node:http";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { complete, type Completion } from "./completion.js";
import { isLoopback, type ServerConfig } from "./config.js";
import { ApiError, toApiError } from "./errors.js";
import { LruStore } from "./memory-store.js";
import { ServerMetrics } from "./metrics.js";
import { parseChatRequest, type ChatTurnRequest } from "./request.js";
import type { ReadinessProbe } from "./ready.js";
import { choiceDeltas } from "./response.js";
import { SseWriter, streamCompletion } from "./stream.js";

export interface AppOptions {
  policy: Policy;
  /** The policy's tokenizer: per-token logprobs, and exact token counts for memory budgets. */
  tokenizer?: Tokenizer | undefined;
  /** The model id clients name. */
  model: string;
  config: ServerConfig;
  /**
   * Bearer tokens accepted on the protected routes (every `/v1` route, and `/metrics` when
   * `config.host` is beyond loopback); none means no authentication on loopback, and no access
   * to a protected route beyond it.
   */
  tokens: readonly string[];
  /** Whether the model answers, for `GET /ready`; default: always (a policy in this process is ready once loaded). */
  ready?: ReadinessProbe | undefined;
  /** The command's logger, for the request log; without one Fastify logs JSON lines to stderr. */
  logger?: Logger | undefined;
}

/** The server app and what it keeps: its metrics, its conversations' memories, and its generation slots. */
export interface App {
  fastify: FastifyInstance;
  metrics: ServerMetrics;
  memories: LruStore<RehearsalMemory>;
  slots: ConcurrencyLimit;
  /** Aborts every generation in flight (the end of a shutdown's grace period). */
  abortAll(reason: Error): void;
}

const digest = (text: string): Buffer => createHash("sha256").update(text).digest();

/**
 * The bearer token of a request, if it is one of `tokens` (their sha256 digests). Every token is
 * compared, in constant time, whichever matches: the time taken says nothing about which, or
 * how much of one, was right.
 */
export function authorised(header: string | undefined, tokens: readonly Buffer[]): string | undefined {
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header ?? "");
  if (match === null) return undefined;
  const given = digest(match[1]!);
  let found = false;
  for (const token of tokens) found = timingSafeEqual(token, given) || found;
  return found ? match[1] : undefined;
}

/** Whether a registered route needs a token: every `/v1` route, and `/metrics` when the server is reachable beyond this machine. */
export function isProtectedRoute(url: string, host: string): boolean {
  return url === "/v1" || url.startsWith("/v1/") || (url === "/metrics" && !isLoopback(host));
}

/** Build the Fastify app: the OpenAI-compatible routes, health, metrics, auth and admission control. */
export function buildApp(options: AppOptions): App {
  const { config } = options;
  // The request log joins the command's own (stdout carries only the URL line).
  const requestLog: FastifyBaseLogger | undefined = options.logger?.child({ component: "http" }, { level: config.log_level });
  const fastify = Fastify({
    ...(requestLog === undefined ? { logger: { level: config.log_level, stream: process.stderr } } : { loggerInstance: requestLog }),
    bodyLimit: config.limits.body_bytes,
    // Shutdown answers 503 in OpenAI's shape (the onRequest hook below), and each request is logged once, when its response closes.
    return503OnClosing: false,
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: "idle",
    // A target the router cannot decode: a 400 that does not echo it.
    frameworkErrors: (_error, _request, reply) => {
      void (reply as FastifyReply)
        .code(400)
        .send(new ApiError(400, "the request target is not a valid URL path", "invalid_request_error", null, "invalid_url").body);
    },
  });
  const metrics = new ServerMetrics();
  const memories = new LruStore<RehearsalMemory>(config.memory.max_entries, config.memory.max_bytes);
  const slots = new ConcurrencyLimit(config.concurrency.requests);
  const tokens = options.tokens.map(digest);
  // The cancel switch of every request in flight, for a shutdown that cannot wait; one signal per
  // request, since combining two with AbortSignal.any on every request is costly on Node 20.
  const inFlight = new Set<AbortController>();
  const owners = new WeakMap<FastifyRequest, string>();
  const context = { policy: options.policy, tokenizer: options.tokenizer, config, memories, metrics };
  const updateGauges = (): void => {
    metrics.queueDepth.set(slots.pending);
    metrics.inFlight.set(slots.active);
  };

  // Every request Node parses is counted and logged once, when its response closes: answered,
  // cut by the client (499), or cut at shutdown. Requests Fastify answers before any hook (a
  // target it cannot decode) included.
  const routes = new WeakMap<object, { route: string; id: string }>();
  fastify.server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    res.once("close", () => {
      const seen = routes.get(req);
      const route = seen?.route ?? "unknown";
      const status = res.writableFinished ? res.statusCode : 499;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc({ route, status: String(status) });
      metrics.latency.observe({ route }, seconds);
      const line = { reqId: seen?.id, req: { method: req.method, url: req.url }, res: { statusCode: status }, responseTime: seconds * 1000 };
      if (status === 499) fastify.log.info(line, "request cancelled: the connection closed before the answer was sent");
      else fastify.log.info(line, "request completed");
    });
  });

  // Set when a shutdown starts: from then on, requests get a 503 and `connection: close`.
  const closing = { now: false };
  fastify.addHook("preClose", (done) => {
    closing.now = true;
    done();
  });
  fastify.addHook("onRequest", (request, reply, done) => {
    routes.set(request.raw, { route: request.routeOptions.url ?? "unknown", id: request.id });
    if (!closing.now) {
      done();
      return;
    }
    void reply.header("connection", "close");
    done(new ApiError(503, "the server is shutting down; retry on another instance", "server_error", null, "shutting_down", { "retry-after": "1" }));
  });
  // Bodies are read as sent: a compressed one is refused before a byte of it is inflated, so no
  // small body can grow past the body limit inside the server.
  fastify.addHook("preParsing", (request, _reply, payload, done) => {
    const encoding = request.headers["content-encoding"];
    if (encoding === undefined || encoding.trim().toLowerCase() === "identity") done(null, payload);
    else
      done(
        new ApiError(415, "request bodies must not be compressed (content-encoding: identity)", "invalid_request_error", null, "unsupported_content_encoding"),
      );
  });
  // A response in flight when the shutdown starts tells its client not to reuse the connection.
  fastify.addHook("onSend", (_request, reply, payload, done) => {
    if (closing.now) void reply.header("connection", "close");
    done(null, payload);
  });

  // Authorization belongs to the route, whatever spelling of the target reached it: each
  // protected route, as it is registered (HEAD twins and routes added later included), gets the
  // token check as its first onRequest hook.
  const authenticate = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void => {
    const token = authorised(request.headers.authorization, tokens);
    if (token !== undefined) owners.set(request, token);
    // No tokens: open on loopback, closed beyond it (a server there without a token is refused, see startServer).
    if (token !== undefined || (tokens.length === 0 && isLoopback(config.host))) done();
    else done(new ApiError(401, "a valid bearer token is required (Authorization: Bearer <token>)", "authentication_error", null, "invalid_api_key"));
  };
  fastify.addHook("onRoute", (route) => {
    if (!isProtectedRoute(route.url, config.host)) return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [authenticate, ...own];
  });

  fastify.setErrorHandler(async (error, request, reply) => {
    const api = toApiError(error);
    if (error instanceof HttpError) metrics.upstreamErrors.inc({ kind: error.code });
    if (api.status >= 500) request.log.error({ err: error }, "request failed");
    return reply.code(api.status).headers(api.headers).send(api.body);
  });

  fastify.setNotFoundHandler(async (_request, reply) => {
    const api = new ApiError(404, "no such route (the API is under /v1)", "not_found_error", null, "unknown_route");
    return reply.code(404).send(api.body);
  });

  // Liveness: the process answers. Readiness: the model answers too.
  fastify.get("/health", (_request, reply) => reply.send({ status: "ok", model: options.model, in_flight: slots.active, queued: slots.pending }));

  fastify.get("/ready", async (_request, reply) => {
    const readiness = options.ready === undefined ? { ready: true } : await options.ready();
    return reply
      .code(readiness.ready ? 200 : 503)
      .send({ status: readiness.ready ? "ready" : "not_ready", model: options.model, ...(readiness.reason === undefined ? {} : { reason: readiness.reason }) });
  });

  fastify.get("/metrics", async (_request, reply) => {
    updateGauges();
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  fastify.get("/v1/models", (_request, reply) =>
    reply.send({ object: "list", data: [{ id: options.model, object: "model", created: 0, owned_by: "envace" }] }),
  );

  fastify.post("/v1/chat/completions", async (request, reply) => {
    const turn = parseChatRequest(request.body, {
      maxCompletionTokens: config.limits.max_completion_tokens,
      defaultMaxTokens: config.limits.default_max_tokens,
      maxN: config.limits.max_n,
      logprobs: options.tokenizer !== undefined,
    });
    if (turn.model !== options.model) {
      throw new ApiError(
        404,
        `model ${JSON.stringify(turn.model)} is not served here (served: ${options.model})`,
        "not_found_error",
        "model",
        "model_not_found",
      );
    }
    if (slots.active >= slots.limit && slots.pending >= config.concurrency.queue) {
      metrics.rejected.inc();
      const seconds = String(config.concurrency.retry_after_s);
      throw new ApiError(
        429,
        `the server is at capacity (${slots.active} generating, ${slots.pending} queued); retry after ${seconds} s`,
        "rate_limit_error",
        null,
        "queue_full",
        { "retry-after": seconds },
      );
    }
    // A client that goes away cancels its generation, upstream included.
    const cancel = new AbortController();
    const client = { gone: false };
    const onClose = (): void => {
      if (reply.raw.writableEnded) return;
      client.gone = true;
      cancel.abort(new DOMException("the client closed the connection", "AbortError"));
    };
    reply.raw.on("close", onClose);
    const signal = cancel.signal;
    inFlight.add(cancel);
    const owner = owners.get(request) ?? "";
    // A streaming upstream streams through; n > 1 and logprobs are streamed from the finished answer.
    const policy = options.policy;
    const live = turn.stream && turn.n === 1 && !turn.logprobs && canStream(policy) ? new SseWriter(reply.raw) : undefined;
    let completion: Completion | undefined;
    // Set inside the slot once the reply is hijacked: from then on, it is answered there.
    const hijacked = { done: false };
    try {
      completion = await slots.run(async () => {
        updateGauges();
        if (live === undefined) return complete(context, turn, owner, signal);
        reply.hijack();
        hijacked.done = true;
        await streamLive(reply, live, () => streamCompletion({ ...context, policy: policy as StreamingPolicy }, turn, owner, signal, live, options.model));
        return undefined;
      }, signal);
    } catch (error) {
      if (!hijacked.done && !client.gone) throw error;
    } finally {
      inFlight.delete(cancel);
      updateGauges();
    }
    if (hijacked.done) return reply;
    if (completion === undefined) {
      // Nobody reads this answer; the request was counted and logged as 499 when its connection closed.
      return reply.code(499).send();
    }
    if (turn.stream) {
      writeStream(reply, completion, turn, options.model);
      return reply;
    }
    return {
      id: completion.id,
      object: "chat.completion",
      created: completion.created,
      model: options.model,
      choices: completion.choices,
      usage: completion.usage,
      ...(completion.envace ? { envace: completion.envace } : {}),
    };
  });

  /** A hijacked streamed reply: its failures are answered here (as HTTP before the first event, in the stream after) and logged; onResponse still counts it. */
  const streamLive = async (reply: FastifyReply, sse: SseWriter, run: () => Promise<void>): Promise<void> => {
    try {
      await run();
    } catch (error) {
      if (error instanceof HttpError) metrics.upstreamErrors.inc({ kind: error.code });
      const api = toApiError(error);
      if (!sse.started && !reply.raw.destroyed) {
        reply.raw.writeHead(api.status, { "content-type": "application/json; charset=utf-8", ...api.headers });
        reply.raw.end(JSON.stringify(api.body));
      }
      if (api.status >= 500 && !reply.raw.destroyed) reply.log.error({ err: error }, "streamed request failed");
    }
  };

  return {
    fastify,
    metrics,
    memories,
    slots,
    abortAll: (reason) => {
      for (const cancel of inFlight) cancel.abort(reason);
    },
  };
}

/** A finished completion as server-sent events in OpenAI's chunk format, ending with `[DONE]`. */
function writeStream(reply: FastifyReply, completion: Completion, turn: ChatTurnRequest, model: string): void {
  const head = { id: completion.id, object: "chat.completion.chunk", created: completion.created, model };
  const events: string[] = [];
  for (const choice of completion.choices) {
    for (const delta of choiceDeltas(choice)) events.push(JSON.stringify({ ...head, choices: [delta] }));
  }
  if (turn.includeUsage || completion.envace) {
    events.push(
      JSON.stringify({
        ...head,
        choices: [],
        ...(turn.includeUsage ? { usage: completion.usage } : {}),
        ...(completion.envace ? { envace: completion.envace } : {}),
      }),
    );
  }
  reply
    .code(200)
    .header("content-type", "text/event-stream; charset=utf-8")
    .header("cache-control", "no-cache")
    .send(`${events.map((event) => `data: ${event}\n\n`).join("")}data: [DONE]\n\n`);
}
