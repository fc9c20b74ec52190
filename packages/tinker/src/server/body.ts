import type { IncomingMessage, ServerResponse } from "node:http";
import { decompress } from "fzstd";
import { decodeForwardBackwardRequest } from "../proto/codec.js";
import { PROTOBUF } from "../proto/schema.js";
import { HttpError } from "./options.js";

/** Routes whose body may come as protobuf (what the SDK ≥ 0.25 sends so). */
const PROTOBUF_ROUTES = new Set(["forward_backward"]);

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
    if (size > limit) throw new HttpError(413, "too_large", `${route}: body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function inflate(raw: Buffer, encoding: string | undefined, route: string, limit: number): Uint8Array {
  if (encoding === undefined || encoding === "identity") return raw;
  if (encoding !== "zstd") throw new HttpError(415, "unsupported_media_type", `${route}: Content-Encoding ${encoding} is not supported (zstd is)`);
  let out: Uint8Array;
  try {
    out = decompress(raw);
  } catch (error) {
    throw new HttpError(400, "invalid_body", `${route}: body is not valid zstd (${(error as Error).message})`);
  }
  if (out.length > limit) throw new HttpError(413, "too_large", `${route}: body is larger than ${limit} bytes once decompressed`);
  return out;
}

/**
 * A request body as the JSON request shape: JSON as is; a protobuf `forward_backward` (zstd or
 * not) converted to it. Anything else is refused with 415 before it takes a sequence number.
 */
export async function readBody(req: IncomingMessage, route: string, limit: number): Promise<RequestBody> {
  const type = (req.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase();
  const protobuf = type === PROTOBUF;
  if (!protobuf && !type.includes("json")) {
    throw new HttpError(415, "unsupported_media_type", `${route}: Content-Type ${type} is not supported; send application/json`);
  }
  if (protobuf && !PROTOBUF_ROUTES.has(route)) {
    throw new HttpError(415, "unsupported_media_type", `${route}: takes application/json (protobuf only on ${[...PROTOBUF_ROUTES].join(", ")})`);
  }
  const bytes = inflate(await readRaw(req, route, limit), req.headers["content-encoding"], route, limit);
  if (protobuf) {
    try {
      return decodeForwardBackwardRequest(bytes);
    } catch (error) {
      throw new HttpError(400, "invalid_body", `${route}: body is not a ForwardBackwardRequest message (${(error as Error).message})`);
    }
  }
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (text.trim() === "") return { body: {}, forwardOnly: false };
  try {
    return { body: JSON.parse(text) as unknown, forwardOnly: false };
  } catch (error) {
    throw new HttpError(400, "invalid_json", `${route}: body is not JSON (${(error as Error).message})`);
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
export function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const final = status >= 400 && status < 500 && ![408, 409, 429].includes(status);
  const extra = final ? { "x-should-retry": "false" } : {};
  if (body instanceof Uint8Array) {
    res.writeHead(status, { "Content-Type": PROTOBUF, "Content-Length": body.byteLength, ...extra });
    res.end(body);
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...extra });
  res.end(text);
}
