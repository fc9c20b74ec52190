import { abortReason } from "@envace/concurrency";
import type { z } from "zod";
import { HttpError } from "./errors.js";

/** How every request of a client is sent. */
export interface HttpSettings {
  /** Per attempt, including reading the body. */
  timeoutMs: number;
  headers?: Record<string, string>;
  /** Cancels the request; it then rejects with the signal's reason (see `abortReason`). */
  signal?: AbortSignal;
  /** Default: the platform's `fetch`. */
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
 * no connection (`connection`), none in time (`timeout`), or a successful reply that is not JSON
 * (`malformed`); throws the signal's reason when the caller aborts.
 */
export async function send(request: HttpRequest): Promise<HttpReply> {
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  let response: Response;
  let payload: string | Uint8Array;
  try {
    response = await (request.fetch ?? fetch)(request.url, { ...encode(request), signal });
    const type = response.headers.get("content-type") ?? "";
    const binary = request.binaryTypes?.some((t) => type.includes(t)) === true;
    payload = binary ? new Uint8Array(await response.arrayBuffer()) : await response.text();
  } catch (error) {
    if (request.signal?.aborted) throw abortReason(request.signal);
    if (timeout.aborted) throw new HttpError("timeout", request.url, `no answer within ${request.timeoutMs} ms`, { cause: error });
    throw new HttpError("connection", request.url, `connection failed (${describeCause(error)})`, { cause: error });
  }
  return { status: response.status, headers: response.headers, body: decode(payload, response, request.url) };
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

function encode(request: HttpRequest): RequestInit {
  const headers = new Headers({ accept: "application/json" });
  const method = request.method ?? (request.body === undefined ? "GET" : "POST");
  let body: RequestInit["body"];
  if (request.body instanceof Uint8Array) {
    headers.set("content-type", request.contentType ?? "application/octet-stream");
    // A copy over a plain ArrayBuffer, which is what fetch's body type takes.
    body = new Uint8Array(request.body);
  } else if (request.body !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(request.body);
  }
  // Set after the defaults, whatever their case, so a caller's header replaces ours rather than joining it.
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.set(name, value);
  return { method, headers, ...(body === undefined ? {} : { body }) };
}

function decode(payload: string | Uint8Array, response: Response, url: string): unknown {
  if (typeof payload !== "string") return payload;
  if (payload.length === 0) return undefined;
  try {
    return JSON.parse(payload) as unknown;
  } catch (error) {
    // An error page need not be JSON; its text still says what went wrong.
    if (!response.ok) return payload;
    throw new HttpError("malformed", url, `reply is not JSON: ${snippet(payload)}`, { status: response.status, cause: error });
  }
}

/** Any JSON value on one line, shortened; `undefined` is an empty body. */
function preview(body: unknown, max = 300): string {
  return body === undefined ? "(empty body)" : snippet(JSON.stringify(body), max);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
