import { createHash, timingSafeEqual } from "node:crypto";
import { ConcurrencyLimit } from "@envace/concurrency";
import { HttpError } from "@envace/http";
import { canStream, type StreamingPolicy } from "@envace/models";
import type { Policy, Tokenizer } from "@envace/protocol";
import type { RehearsalMemory } from "@envace/rehearsal";
import type { Logger } from "pino";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { complete, type Completion } from "./completion.js";
import type { ServerConfig } from "./config.js";
import { ApiError, toApiError } from "./errors.js";
import { LruStore } from "./memory-store.js";
import { ServerMetrics } from "./metrics.js";
import { parseChatRequest, type ChatTurnRequest } from "./request.js";
import { choiceDeltas } from "./response.js";
import { SseWriter, streamCompletion } from "./stream.js";

export interface AppOptions {
  policy: Policy;
  /** The policy's tokenizer: per-token logprobs, and exact token counts for memory budgets. */
  tokenizer?: Tokenizer | undefined;
  /** The model id clients name. */
  model: string;
  config: ServerConfig;
  /** Bearer tokens accepted on `/v1`; none means no authentication (loopback only, see `startServer`). */
  tokens: readonly string[];
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

/** The bearer token of a request, if it is one of `tokens` (compared in constant time). */
function authorised(header: string | undefined, tokens: readonly Buffer[]): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (match === null) return undefined;
  const given = digest(match[1]!);
  return tokens.some((token) => timingSafeEqual(token, given)) ? match[1] : undefined;
}

/** Build the Fastify app: the OpenAI-compatible routes, health, metrics, auth and admission control. */
export function buildApp(options: AppOptions): App {
  const { config } = options;
  // The request log joins the command's own (stdout carries only the URL line).
  const requestLog: FastifyBaseLogger | undefined = options.logger?.child({ component: "http" }, { level: config.log_level });
  const fastify = Fastify({
    ...(requestLog === undefined ? { logger: { level: config.log_level, stream: process.stderr } } : { loggerInstance: requestLog }),
    bodyLimit: config.limits.body_bytes,
    return503OnClosing: true,
    forceCloseConnections: "idle",
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

  fastify.addHook("onRequest", (request, _reply, done) => {
    if (!request.url.startsWith("/v1/") || tokens.length === 0) {
      done();
      return;
    }
    const token = authorised(request.headers.authorization, tokens);
    if (token === undefined) {
      done(new ApiError(401, "a valid bearer token is required (Authorization: Bearer <token>)", "authentication_error", null, "invalid_api_key"));
      return;
    }
    owners.set(request, token);
    done();
  });

  fastify.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unknown";
    metrics.requests.inc({ route, status: String(reply.statusCode) });
    metrics.latency.observe({ route }, reply.elapsedTime / 1000);
  });

  fastify.setErrorHandler(async (error, request, reply) => {
    const api = toApiError(error);
    if (error instanceof HttpError) metrics.upstreamErrors.inc({ kind: error.code });
    if (api.status >= 500) request.log.error({ err: error }, "request failed");
    return reply.code(api.status).headers(api.headers).send(api.body);
  });

  fastify.setNotFoundHandler(async (request, reply) => {
    const api = new ApiError(404, `no route ${request.method} ${request.url}`, "not_found_error", null, "unknown_route");
    return reply.code(404).send(api.body);
  });

  fastify.get("/health", (_request, reply) => reply.send({ status: "ok", model: options.model, in_flight: slots.active, queued: slots.pending }));

  fastify.get("/metrics", async (_request, reply) => {
    updateGauges();
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  fastify.get("/v1/models", (_request, reply) => reply.send({ object: "list", data: [{ id: options.model, object: "model", created: 0, owned_by: "envace" }] }));

  fastify.post("/v1/chat/completions", async (request, reply) => {
    const turn = parseChatRequest(request.body, {
      maxCompletionTokens: config.limits.max_completion_tokens,
      defaultMaxTokens: config.limits.default_max_tokens,
      maxN: config.limits.max_n,
      logprobs: options.tokenizer !== undefined,
    });
    if (turn.model !== options.model) {
      throw new ApiError(404, `model ${JSON.stringify(turn.model)} is not served here (served: ${options.model})`, "not_found_error", "model", "model_not_found");
    }
    if (slots.active >= slots.limit && slots.pending >= config.concurrency.queue) {
      metrics.rejected.inc();
      const seconds = String(config.concurrency.retry_after_s);
      throw new ApiError(429, `the server is at capacity (${slots.active} generating, ${slots.pending} queued); retry after ${seconds} s`, "rate_limit_error", null, "queue_full", { "retry-after": seconds });
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
      request.log.info("client cancelled the request");
      // Nobody reads this answer; it only closes the request's books (logs, metrics).
      return reply.code(499).send();
    }
    if (turn.stream) {
      writeStream(reply, completion, turn, options.model);
      return reply;
    }
    return { id: completion.id, object: "chat.completion", created: completion.created, model: options.model, choices: completion.choices, usage: completion.usage, ...(completion.envace ? { envace: completion.envace } : {}) };
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
    events.push(JSON.stringify({ ...head, choices: [], ...(turn.includeUsage ? { usage: completion.usage } : {}), ...(completion.envace ? { envace: completion.envace } : {}) }));
  }
  reply
    .code(200)
    .header("content-type", "text/event-stream; charset=utf-8")
    .header("cache-control", "no-cache")
    .send(`${events.map((event) => `data: ${event}\n\n`).join("")}data: [DONE]\n\n`);
}
