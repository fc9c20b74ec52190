// The forwarding half of the recording proxies: one request passed on to the server, both bodies read whole.
import type { IncomingMessage } from "node:http";

/** The whole body of a request. */
async function readRequest(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Sends `req` on to `target` with its own headers (less those of this hop), and reads the answer whole. */
export async function relay(req: IncomingMessage, target: string): Promise<{ request: Buffer; response: Response; reply: Buffer }> {
  const request = await readRequest(req);
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([k, v]) => typeof v === "string" && !["host", "content-length", "connection"].includes(k)),
  ) as Record<string, string>;
  const response = await fetch(`${target}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    ...(request.length > 0 ? { body: new Uint8Array(request) } : {}),
  });
  return { request, response, reply: Buffer.from(await response.arrayBuffer()) };
}
