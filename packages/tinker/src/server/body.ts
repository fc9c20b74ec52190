import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from "node:zlib";
import { Decompress } from "fzstd";
import { decodeForwardBackwardRequest } from "../proto/codec.js";
import { PROTOBUF } from "../proto/schema.js";
import { TinkerApiError } from "./options.js";
import { ZstdLayoutError, zstdLayout } from "./zstd-frames.js";

/** Routes whose body may come as protobuf (what the SDK ≥ 0.25 sends so). */
const PROTOBUF_ROUTES = new Set(["forward_backward"]);

/** How deep a JSON body may nest: Tinker's bodies need 6 levels, so this leaves room for metadata. */
export const MAX_JSON_DEPTH = 64;

/**
 * The largest zstd window accepted (RFC 9659 caps zstd windows for HTTP content coding at 8 MB):
 * a streaming decoder keeps and copies a window this size, whatever the body inflates to.
 */
export const MAX_ZSTD_WINDOW = 8 * 1024 * 1024;

/** Input fed to the zstd decoder at a time, so a refusal comes within one slice's output. */
const ZSTD_SLICE = 16 * 1024;

export interface RequestBody {
  body: unknown;
  /** A protobuf `forward_backward` with `forward_only` set. */
  forwardOnly: boolean;
}

async function readRaw(req: IncomingMessage, route: string, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(route, limit, "");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(route: string, limit: number, how: string): TinkerApiError {
  return new TinkerApiError(413, "too_large", `${route}: body is larger than ${limit} bytes${how}`);
}

const zlibDecoders = { gzip: promisify(gunzip), "x-gzip": promisify(gunzip), deflate: promisify(inflate), br: promisify(brotliDecompress) } as Record<
  string,
  (buffer: Buffer, options: ZlibOptions) => Promise<Buffer>
>;

/** The content codings accepted, as they appear in `Content-Encoding`. */
export const ENCODINGS = ["identity", "zstd", ...Object.keys(zlibDecoders)] as const;

/**
 * The body's bytes once decoded. Decoding stops, with a 413, as soon as the output passes
 * `limit`: memory held is at most `limit` bytes of output (plus, for zstd, a window of at most
 * `MAX_ZSTD_WINDOW`), whatever the body claims or inflates to.
 */
export async function decodeContent(raw: Buffer, header: string | undefined, route: string, limit: number): Promise<Uint8Array> {
  const encoding = (header ?? "identity").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return raw;
  if (encoding === "zstd") return inflateZstd(raw, route, limit);
  const decode = Object.hasOwn(zlibDecoders, encoding) ? zlibDecoders[encoding] : undefined;
  if (!decode) {
    throw new TinkerApiError(
      415,
      "unsupported_media_type",
      `${route}: Content-Encoding ${JSON.stringify(encoding.slice(0, 64))} is not supported (one of ${ENCODINGS.join(", ")})`,
    );
  }
  try {
    // zlib stops and fails once its output passes maxOutputLength.
    return await decode(raw, { maxOutputLength: limit });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge(route, limit, " once decompressed");
    throw new TinkerApiError(400, "invalid_body", `${route}: body is not valid ${encoding} (${(error as Error).message})`);
  }
}

async function inflateZstd(raw: Buffer, route: string, limit: number): Promise<Uint8Array> {
  let layout;
  try {
    layout = zstdLayout(raw);
  } catch (error) {
    if (!(error instanceof ZstdLayoutError)) throw error;
    throw new TinkerApiError(400, "invalid_body", `${route}: body is not valid zstd (${error.message})`);
  }
  if (layout.declaredSize > limit || layout.knownSize > limit) throw tooLarge(route, limit, " once decompressed");
  if (layout.maxWindow > MAX_ZSTD_WINDOW) {
    throw new TinkerApiError(
      413,
      "too_large",
      `${route}: zstd window of ${layout.maxWindow} bytes is over the ${MAX_ZSTD_WINDOW} accepted; compress with a smaller window`,
    );
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const decoder = new Decompress((chunk) => {
    size += chunk.length;
    if (size > limit) throw tooLarge(route, limit, " once decompressed");
    chunks.push(chunk);
  });
  for (let at = 0; at < raw.length; at += ZSTD_SLICE) {
    try {
      decoder.push(raw.subarray(at, at + ZSTD_SLICE), at + ZSTD_SLICE >= raw.length);
    } catch (error) {
      if (error instanceof TinkerApiError) throw error;
      throw new TinkerApiError(400, "invalid_body", `${route}: body is not valid zstd (${(error as Error).message})`);
    }
    // Let other requests run between slices.
    if (at + ZSTD_SLICE < raw.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return Buffer.concat(chunks, size);
}

/**
 * How deep a JSON text nests, by a linear scan that skips strings, stopping once past `limit`
 * (so a deep body is refused before `JSON.parse` builds it).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * A request body as the JSON request shape: JSON as is; a protobuf `forward_backward` converted to
 * it; either one content-coded (zstd, gzip, deflate or br). Anything else is refused before it
 * takes a sequence number.
 */
export async function readBody(req: IncomingMessage, route: string, limit: number): Promise<RequestBody> {
  const type = (req.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase();
  const protobuf = type === PROTOBUF;
  if (!protobuf && !type.includes("json")) {
    throw new TinkerApiError(
      415,
      "unsupported_media_type",
      `${route}: Content-Type ${JSON.stringify(type.slice(0, 64))} is not supported; send application/json`,
    );
  }
  if (protobuf && !PROTOBUF_ROUTES.has(route)) {
    throw new TinkerApiError(415, "unsupported_media_type", `${route}: takes application/json (protobuf only on ${[...PROTOBUF_ROUTES].join(", ")})`);
  }
  const bytes = await decodeContent(await readRaw(req, route, limit), req.headers["content-encoding"], route, limit);
  if (protobuf) {
    try {
      return decodeForwardBackwardRequest(bytes);
    } catch (error) {
      throw new TinkerApiError(400, "invalid_body", `${route}: body is not a ForwardBackwardRequest message (${(error as Error).message})`);
    }
  }
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (text.trim() === "") return { body: {}, forwardOnly: false };
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) throw new TinkerApiError(400, "too_deep", `${route}: body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return { body: JSON.parse(text) as unknown, forwardOnly: false };
  } catch (error) {
    throw new TinkerApiError(400, "invalid_json", `${route}: body is not JSON (${(error as Error).message})`);
  }
}

/** Whether the client's `Accept` header takes protobuf results. */
export function acceptsProtobuf(req: IncomingMessage): boolean {
  return (req.headers.accept ?? "").toLowerCase().includes(PROTOBUF);
}

/**
 * Send a reply. A refusal (4xx other than 408, 409 and 429) says `x-should-retry: false`, which
 * the SDK obeys: the same request would be refused again.
 */
export function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const final = status >= 400 && status < 500 && ![408, 409, 429].includes(status);
  const extra = { ...headers, ...(final ? { "x-should-retry": "false" } : {}) };
  if (body instanceof Uint8Array) {
    res.writeHead(status, { "Content-Type": PROTOBUF, "Content-Length": body.byteLength, ...extra });
    res.end(body);
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...extra });
  res.end(text);
}
