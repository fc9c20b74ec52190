import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a proxy passed on (or answered itself). */
export interface Seen {
  path: string;
  contentType: string;
  status: number;
  replyType: string;
  /** The request body, parsed when it is JSON. */
  json?: unknown;
}

export interface ProxyOptions {
  /** Answer `client/config` with this instead of the server's reply (e.g. SkyRL tx's `{ pjwt_auth_enabled: false }`). */
  clientConfig?: unknown;
  /** Refuse protobuf bodies with this status, as a server that predates them does. */
  refuseProtobuf?: number;
  /** Ask the server for JSON results only and pass each JSON reply through this (to play a server that answers differently). */
  rewriteJson?: (path: string, reply: unknown, request: unknown) => unknown;
}

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A loopback proxy in front of a Tinker server that records what passes and can play an older or other server. */
export async function startProxy(target: string, options: ProxyOptions = {}): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const path = (req.url ?? "/").replace(/^\/api\/v1\//, "");
      const contentType = req.headers["content-type"] ?? "";
      const json = contentType.includes("json") && body.length > 0 ? (JSON.parse(body.toString("utf8")) as unknown) : undefined;
      const answer = (status: number, reply: unknown) => {
        seen.push({ path, contentType, status, replyType: "application/json", ...(json !== undefined ? { json } : {}) });
        res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(reply));
      };
      if (path === "client/config" && options.clientConfig !== undefined) {
        answer(200, options.clientConfig);
        return;
      }
      if (options.refuseProtobuf !== undefined && contentType.includes("protobuf")) {
        answer(options.refuseProtobuf, { detail: [{ type: "json_invalid", msg: "JSON decode error" }] });
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k, v]) => typeof v === "string" && !["host", "content-length", "connection"].includes(k)),
      ) as Record<string, string>;
      if (options.rewriteJson) headers.accept = "application/json";
      const response = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
      });
      let reply = Buffer.from(await response.arrayBuffer());
      if (options.rewriteJson && (response.headers.get("content-type") ?? "").includes("json")) {
        reply = Buffer.from(JSON.stringify(options.rewriteJson(path, JSON.parse(reply.toString("utf8")), json)));
      }
      const replyType = response.headers.get("content-type") ?? "";
      seen.push({ path, contentType, status: response.status, replyType, ...(json !== undefined ? { json } : {}) });
      res.writeHead(response.status, { "Content-Type": replyType }).end(reply);
    })().catch((error: unknown) => {
      res.writeHead(502).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
