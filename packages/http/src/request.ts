import { abortReason } from "@envace/concurrency";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { z } from "zod";
import { HttpError, RequestBodyError } from "./errors.js";

/** How every request of a client is sent. */
export interface HttpSettings {
  /** Per attempt, including reading the body. */
  timeoutMs: number;
  headers?: Record<string, string>;
  /** Cancels the request; it then rejects with the signal's reason (see `abortReason`). */
  signal?: AbortSignal;
  /**
   * Send through this `fetch` instead (a test double, an instrumented client). Default: Node's
   * `http`/`https` with keep-alive connections shared by the process, which costs a request a
   * fraction of what `fetch`'s streams and header objects do.
   */
  fetch?: typeof fetch;
  /** Reply content types returned as raw bytes instead of parsed JSON, e.g. `application/x-protobuf`. */
  binaryTypes?: readonly string[];
}

export interface HttpRequest extends HttpSettings {
  url: string;
  /** Default `GET`, or `POST` when there is a body. */
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Sent as JSON; a `Uint8Array` goes as it is, with `contentType`. */
  body?: unknown;
  /** The content type of a `Uint8Array` body. Default `application/octet-stream`. */
  contentType?: string;
}

export interface HttpReply {
  status: number;
  headers: Headers;
  /** Parsed JSON; the bytes of a `binaryTypes` reply; the text of an error reply that is not JSON; `undefined` when empty. */
  body: unknown;
}

/**
 * One attempt, whatever status comes back. Throws an `HttpError` when there is no usable answer:
 * no connection (`connection`), none in time (`timeout`), a successful reply that is not JSON
 * (`malformed`), or a URL it cannot send to (`url`); throws the signal's reason when the caller aborts.
 */
export async function send(request: HttpRequest): Promise<HttpReply> {
  // Encoded before anything is sent: a body that cannot be encoded is this process's fault, not
  // a failed connection, and asking again cannot help.
  const encoded = encode(request);
  let raw: RawReply;
  try {
    raw = await (request.fetch ? viaFetch(request.fetch, request, encoded) : viaNode(request, encoded));
  } catch (error) {
    if (request.signal?.aborted) throw abortReason(request.signal);
    if (error instanceof HttpError && error.code === "url") throw error;
    if (error instanceof TimedOut) throw new HttpError("timeout", request.url, `no answer within ${request.timeoutMs} ms`, { cause: error });
    throw new HttpError("connection", request.url, `connection failed (${describeCause(error)})`, { cause: error });
  }
  const binary = request.binaryTypes?.some((t) => raw.contentType.includes(t)) === true;
  const payload = binary ? new Uint8Array(raw.bytes) : raw.bytes.toString("utf8");
  return { status: raw.status, headers: raw.headers, body: decode(payload, raw.status, request.url) };
}

/** The per-attempt timeout ran out before the reply ended; `send` turns it into the `timeout` HttpError. */
class TimedOut extends Error {
  constructor(options?: ErrorOptions) {
    super("the per-attempt timeout ran out", options);
  }
}

/** The connection closed before the reply ended; `send` turns it into the `connection` HttpError. */
class ConnectionCut extends Error {
  constructor(options?: ErrorOptions) {
    super("the connection closed before the reply ended", options);
  }
}

/** What came back, before the body is read as JSON, text or bytes. */
interface RawReply {
  status: number;
  headers: Headers;
  contentType: string;
  bytes: Buffer;
}

async function viaFetch(fetcher: typeof fetch, request: HttpRequest, encoded: Encoded): Promise<RawReply> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const { method, headers, body } = encoded;
  try {
    const response = await fetcher(request.url, { method, headers, signal, ...(body === undefined ? {} : { body: new Uint8Array(body) }) });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, headers: response.headers, contentType: response.headers.get("content-type") ?? "", bytes };
  } catch (error) {
    throw timeout.aborted && !request.signal?.aborted ? new TimedOut({ cause: error }) : error;
  }
}

// One pool of keep-alive connections per protocol for the whole process, as fetch's global one.
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * One request through Node's `http`. The timeout is a timer of its own and the caller's signal is
 * listened to directly: `AbortSignal.timeout` and `AbortSignal.any` cost a request more on Node 20
 * (weak references the garbage collector must trace) than the whole of this function.
 */
function viaNode(request: HttpRequest, encoded: Encoded): Promise<RawReply> {
  const { method, headers, body } = encoded;
  const url = new URL(request.url);
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new HttpError("url", request.url, `unsupported protocol ${url.protocol}`));
  if (body !== undefined) headers["content-length"] = String(body.byteLength);
  const signal = request.signal;
  return new Promise<RawReply>((resolve, reject) => {
    signal?.throwIfAborted();
    const secure = url.protocol === "https:";
    const open = secure ? httpsRequest : httpRequest;
    const outgoing = open(url, { method, headers, agent: secure ? agents.https : agents.http }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
      const cutOff = (cause?: unknown) => fail(new ConnectionCut({ cause }));
      incoming.on("error", cutOff);
      incoming.on("close", () => {
        if (!incoming.complete) cutOff();
      });
      incoming.on("end", () => {
        settle();
        resolve({
          status: incoming.statusCode ?? 0,
          headers: headersOf(incoming),
          contentType: incoming.headers["content-type"] ?? "",
          bytes: Buffer.concat(chunks),
        });
      });
    });
    const timer = setTimeout(() => fail(new TimedOut()), request.timeoutMs);
    function settle(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
    }
    function fail(error: unknown): void {
      settle();
      outgoing.destroy();
      reject(error instanceof Error ? error : new Error(String(error)));
    }
    function abort(): void {
      fail(signal!.reason);
    }
    signal?.addEventListener("abort", abort, { once: true });
    outgoing.on("error", fail);
    outgoing.end(body);
  });
}

function headersOf(incoming: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  return headers;
}

/** `send`, then an `HttpError` (`status`) for any status outside 2xx; the reply's body otherwise. */
export async function requestJson(request: HttpRequest): Promise<unknown> {
  const reply = await send(request);
  if (!isSuccess(reply.status)) throw statusError(request.url, reply);
  return reply.body;
}

export function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** The `HttpError` for an error reply: its status, the server's own words and its retry advice. */
export function statusError(url: string, reply: HttpReply): HttpError {
  return new HttpError("status", url, errorDetail(reply.body), { status: reply.status, headers: reply.headers });
}

/** Validate a reply with `schema`; one that does not fit is an `HttpError` (`shape`) naming each field. */
export function parseReply<S extends z.ZodType>(schema: S, body: unknown, url: string): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(reply)"}: ${issue.message}`).join("; ");
  throw new HttpError("shape", url, `unexpected reply (${fields}): ${preview(body)}`);
}

/**
 * A short human-readable reason from an error reply: OpenAI's `error.message`, else `detail`
 * (FastAPI), `error` or `message`, else the body itself, shortened.
 */
export function errorDetail(body: unknown): string {
  if (isRecord(body)) {
    if (isRecord(body.error) && typeof body.error.message === "string") return body.error.message;
    for (const key of ["detail", "error", "message"]) {
      const value = body[key];
      if (typeof value === "string") return value;
      if (value !== undefined) return snippet(JSON.stringify(value), 500);
    }
  }
  return typeof body === "string" ? snippet(body, 500) : preview(body);
}

/** `text` on one line, cut at `max` characters. */
export function snippet(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat || "(empty body)";
}

/** An error as a user reads it, with the cause that names the socket's error: `fetch failed: connect ECONNREFUSED …`. */
export function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return `${error.message}${cause}`;
}

/** Method, headers (names in lower case) and body bytes of a request. */
interface Encoded {
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

function encode(request: HttpRequest): Encoded {
  const headers: Record<string, string> = { accept: "application/json" };
  const method = request.method ?? (request.body === undefined ? "GET" : "POST");
  let body: Uint8Array | undefined;
  if (request.body instanceof Uint8Array) {
    headers["content-type"] = request.contentType ?? "application/octet-stream";
    body = request.body;
  } else if (request.body !== undefined) {
    headers["content-type"] = "application/json";
    try {
      body = Buffer.from(JSON.stringify(request.body));
    } catch (error) {
      // Too deep for the stack, a BigInt, a cycle: nothing went over the wire.
      throw new RequestBodyError(request.url, error);
    }
  }
  // Set after the defaults, whatever their case, so a caller's header replaces ours rather than joining it.
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  return { method, headers, ...(body === undefined ? {} : { body }) };
}

function decode(payload: string | Uint8Array, status: number, url: string): unknown {
  if (typeof payload !== "string") return payload;
  if (payload.length === 0) return undefined;
  try {
    return JSON.parse(payload) as unknown;
  } catch (error) {
    // An error page need not be JSON; its text still says what went wrong.
    if (!isSuccess(status)) return payload;
    throw new HttpError("malformed", url, `reply is not JSON: ${snippet(payload)}`, { status, cause: error });
  }
}

/** Any JSON value on one line, shortened; `undefined` is an empty body. */
function preview(body: unknown, max = 300): string {
  return body === undefined ? "(empty body)" : snippet(JSON.stringify(body), max);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
