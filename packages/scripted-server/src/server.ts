import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { z } from "zod";
import { readRenderRequest, renderChat, renderCompletion, renderStream, type Dialect } from "./render.js";
import type { Reply } from "./reply.js";

/** One request as the server received it. */
export interface RecordedRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body; `undefined` when there was no body or it was not JSON. */
  body: unknown;
  rawBody: string;
}

/** A queue of replies consumed in order, or a function of the request. */
export type Script = readonly Reply[] | ((request: RecordedRequest) => Reply | Promise<Reply>);

export interface ScriptedServerOptions {
  script?: Script;
  /** Ids listed by `GET /v1/models`. Default `["scripted-model"]`. */
  models?: readonly string[];
  /** Default `vllm`: token ids are returned when asked for. */
  dialect?: Dialect;
  /** `owned_by` of the listed models, which clients use to recognise the server. Default: the dialect (`vllm` or `openai`). */
  ownedBy?: string;
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
}

export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `http://127.0.0.1:<port>/v1`, what OpenAI clients take as `baseURL`. */
  readonly baseURL: string;
  /** Every request received so far, `GET /v1/models` included. */
  readonly requests: readonly RecordedRequest[];
  /** Requests that reached the script (everything except the built-in `/v1/models`), with bodies. */
  readonly scripted: readonly RecordedRequest[];
  /** Replies still queued. */
  readonly pending: number;
  /** Requests that arrived with nothing scripted for them; they were answered with HTTP 500. */
  readonly unexpected: readonly RecordedRequest[];
  /** Append replies to the queue (switches a function script back to a queue). */
  enqueue(...replies: Reply[]): void;
  /** Replace the script. */
  setScript(script: Script): void;
  /** Forget recorded requests. */
  clearRequests(): void;
  /** Stop listening, cut open connections and pending delays. Idempotent. */
  close(): Promise<void>;
}

const ChatRequest = z.object({
  model: z.string(),
  messages: z.array(z.looseObject({ role: z.string() })).min(1),
  n: z.number().int().positive().optional(),
  tools: z.array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }) })).optional(),
  stream: z.boolean().nullish(),
});

const CompletionRequest = z.object({
  model: z.string(),
  prompt: z.union([z.string(), z.array(z.number().int().nonnegative()), z.array(z.string()), z.array(z.array(z.number().int()))]),
  n: z.number().int().positive().optional(),
  stream: z.boolean().nullish(),
});

/** Start an OpenAI-compatible server on loopback that answers from `options.script`. */
export async function startScriptedServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const dialect = options.dialect ?? "vllm";
  const models = options.models ?? ["scripted-model"];
  const ownedBy = options.ownedBy ?? dialect;
  let queue: Reply[] = [];
  let handler: ((request: RecordedRequest) => Reply | Promise<Reply>) | undefined;
  const requests: RecordedRequest[] = [];
  const unexpected: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let closed = false;
  let idCounter = 0;

  const setScript = (script: Script): void => {
    if (typeof script === "function") {
      handler = script;
      queue = [];
    } else {
      handler = undefined;
      queue = [...script];
    }
  };
  setScript(options.script ?? []);

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          timers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      timers.add(entry);
    });

  const nextReply = async (request: RecordedRequest): Promise<Reply | undefined> => {
    if (handler) return handler(request);
    return queue.shift();
  };

  const send = async (res: ServerResponse, request: RecordedRequest, reply: Reply): Promise<void> => {
    if (res.destroyed || closed) return;
    switch (reply.type) {
      case "delay":
        await sleep(reply.ms);
        // The client may have given up while we waited; a real server would then just drop the work.
        await send(res, request, reply.then);
        return;
      case "json":
        writeJson(res, reply.status, reply.body, reply.headers);
        return;
      case "error":
        writeJson(res, reply.status, openAiError(reply.message, reply.status), reply.headers);
        return;
      case "malformed":
        res.writeHead(reply.status, { "content-type": "application/json" });
        res.end(reply.body);
        return;
      case "drop":
        if (reply.partial !== undefined) {
          res.writeHead(200, { "content-type": "application/json" });
          res.write(reply.partial);
          // Let the partial body reach the client before the connection dies.
          await sleep(20);
        }
        res.socket?.destroy();
        res.destroy();
        return;
      case "generate":
        sendGeneration(res, request, reply);
        return;
    }
  };

  const sendGeneration = (res: ServerResponse, request: RecordedRequest, reply: Extract<Reply, { type: "generate" }>): void => {
    const endpoint = endpointOf(request.path);
    if (!endpoint) {
      writeJson(
        res,
        500,
        openAiError(
          `scripted server: a generate reply renders only on /v1/chat/completions and /v1/completions, not ${request.path}; script a json reply`,
          500,
        ),
      );
      return;
    }
    const body = request.body as Record<string, unknown>;
    const renderRequest = readRenderRequest(body, endpoint);
    const id = `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-scripted-${idCounter++}`;
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      for (const event of renderStream(endpoint, reply, renderRequest, dialect, id)) res.write(`data: ${JSON.stringify(event)}\n\n`);
      res.end("data: [DONE]\n\n");
      return;
    }
    const rendered = endpoint === "chat" ? renderChat(reply, renderRequest, dialect, id) : renderCompletion(reply, renderRequest, dialect, id);
    writeJson(res, 200, rendered);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? "/", "http://scripted.invalid");
    const request: RecordedRequest = {
      index: requests.length,
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")])),
      body: parseJson(rawBody),
      rawBody,
    };
    requests.push(request);

    if (request.method === "GET" && (request.path === "/v1/models" || request.path.startsWith("/v1/models/"))) {
      answerModels(res, request.path, models, ownedBy);
      return;
    }
    const endpoint = endpointOf(request.path);
    if (endpoint && request.method === "POST") {
      const invalid = validate(endpoint, request);
      if (invalid) {
        writeJson(res, 400, openAiError(invalid, 400));
        return;
      }
    }
    const next = await nextReply(request);
    if (!next) {
      unexpected.push(request);
      writeJson(res, 500, openAiError(`scripted server: no reply scripted for request #${request.index} (${request.method} ${request.path})`, 500));
      return;
    }
    await send(res, request, next);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent && !res.destroyed) writeJson(res, 500, openAiError(`scripted server: ${String(error)}`, 500));
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    baseURL: `${url}/v1`,
    get requests() {
      return requests;
    },
    get scripted() {
      return requests.filter((r) => !(r.method === "GET" && r.path.startsWith("/v1/models")));
    },
    get pending() {
      return queue.length;
    },
    get unexpected() {
      return unexpected;
    },
    enqueue(...replies) {
      handler = undefined;
      queue.push(...replies);
    },
    setScript,
    clearRequests() {
      requests.length = 0;
      unexpected.length = 0;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        closed = true;
        for (const entry of timers) {
          clearTimeout(entry.timer);
          entry.resolve();
        }
        timers.clear();
        server.close(() => {
          resolve();
        });
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function endpointOf(path: string): "chat" | "completions" | undefined {
  if (path === "/v1/chat/completions") return "chat";
  if (path === "/v1/completions") return "completions";
  return undefined;
}

function validate(endpoint: "chat" | "completions", request: RecordedRequest): string | undefined {
  if (request.body === undefined) return `request body is not JSON: ${request.rawBody.slice(0, 80)}`;
  const result = (endpoint === "chat" ? ChatRequest : CompletionRequest).safeParse(request.body);
  if (result.success) return undefined;
  return result.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ");
}

function answerModels(res: ServerResponse, path: string, models: readonly string[], ownedBy: string): void {
  const card = (id: string): Record<string, unknown> => ({ id, object: "model", created: 0, owned_by: ownedBy });
  if (path === "/v1/models") {
    writeJson(res, 200, { object: "list", data: models.map(card) });
    return;
  }
  const id = decodeURIComponent(path.slice("/v1/models/".length));
  if (models.includes(id)) writeJson(res, 200, card(id));
  else writeJson(res, 404, openAiError(`model ${id} does not exist`, 404));
}

function openAiError(message: string, status: number): Record<string, unknown> {
  const type = status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: status } };
}

function writeJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
