// A model server written with node:http alone, for replies the scripted server does not make:
// streams cut short, long streams that wait for their reader, bodies with a `usage` of their own.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { policyFromSpec } from "@envace/models";
import OpenAI from "openai";
import { afterEach } from "vitest";
import type { ServerConfigInput } from "../config.js";
import { startServer, type RunningServer } from "../serve.js";
import { responseDrained } from "../stream.js";
import { MODEL } from "./harness.js";

export type Answer = (body: Record<string, unknown>, res: ServerResponse) => void | Promise<void>;

export interface SseUpstream {
  baseURL: string;
  /** Bodies of the chat requests received. */
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}

/** Listen on 127.0.0.1 and answer each chat completion with `answer`; `GET /v1/models` names a vLLM server. */
export async function startSseUpstream(answer: Answer): Promise<SseUpstream> {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      if (req.method === "GET" && req.url === "/v1/models") {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ object: "list", data: [{ id: MODEL, object: "model", owned_by: "vllm" }] }));
        return;
      }
      const body = JSON.parse(Buffer.concat(parts).toString("utf8")) as Record<string, unknown>;
      bodies.push(body);
      void Promise.resolve(answer(body, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    bodies,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** One `chat.completion.chunk` as a server-sent event. */
export function chunkEvent(delta: Record<string, unknown>, finishReason: string | null = null, extra: Record<string, unknown> = {}): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 0, model: MODEL, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`;
}

export function startStream(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

/** Write, and wait for the reader when the socket is full (as a model server does). */
export async function writeWaiting(res: ServerResponse, text: string): Promise<void> {
  if (!res.write(text)) await responseDrained(res);
}

/** An upstream, the server in front of it, and an `openai` client of the server without retries. */
export interface StartedSse {
  upstream: SseUpstream;
  server: RunningServer;
  client: OpenAI;
}

/** For a test file: `start` listens with an upstream answering `answer` and the server in front of it; both close after each test. */
export function sseServers(): { start(answer: Answer, config?: ServerConfigInput): Promise<StartedSse> } {
  let upstream: SseUpstream | undefined;
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    await upstream?.close();
    server = upstream = undefined;
  });
  return {
    async start(answer, config = {}) {
      upstream = await startSseUpstream(answer);
      const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},retries=0,timeout=10`);
      server = await startServer({ policy: resolved.policy, model: MODEL, config: { port: 0, log_level: "silent", ...config }, tokens: [] });
      return { upstream, server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 }) };
    },
  };
}
