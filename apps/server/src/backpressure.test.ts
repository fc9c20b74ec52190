import type { ServerResponse } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { MODEL, waitFor } from "./testing/harness.js";
import { chunkEvent, sseServers, startStream, writeWaiting } from "./testing/sse-upstream.js";

const servers = sseServers();

/** 16 MiB of answer in 16,384 deltas of 1 KiB: about twice what the kernel's socket buffers on both hops took in (7-8 MiB, measured). */
const PIECES = 16_384;
const piece = (i: number): string => `${String(i).padStart(6, "0")}${"x".repeat(1018)}`;
/** What `SseWriter` may hold for a reader that stops: the high-water mark and the events of one delta. */
const BOUND = 16 * 1024 + 2 * 1024;

describe("streaming to a reader that stops reading", () => {
  it("holds the server's buffer under the bound, holds back the upstream, and delivers the whole answer once the reader resumes", async () => {
    let sent = 0;
    const { server } = await servers.start(async (_body, res) => {
      startStream(res);
      for (let i = 0; i < PIECES; i += 1) {
        await writeWaiting(res, chunkEvent(i === 0 ? { role: "assistant", content: piece(i) } : { content: piece(i) }));
        sent = i + 1;
      }
      await writeWaiting(res, chunkEvent({}, "stop"));
      res.end("data: [DONE]\n\n");
    });

    // The most the server's response to the client ever held unsent.
    let most = 0;
    server.app.fastify.server.on("request", (_req, res: ServerResponse) => {
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        const ok = write(chunk);
        most = Math.max(most, res.writableLength);
        return ok;
      }) as ServerResponse["write"];
    });

    const body = JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Tell me everything." }], stream: true });
    const socket = connect({ host: "127.0.0.1", port: new URL(server.url).port as unknown as number });
    const received: Buffer[] = [];
    let bytes = 0;
    let tail = "";
    let finished: () => void = () => undefined;
    // The response ends with the last chunk of its chunked encoding (the connection stays open).
    const ended = new Promise<void>((resolve, reject) => {
      finished = resolve;
      socket.on("error", reject);
    });
    socket.on("data", (part: Buffer) => {
      received.push(part);
      bytes += part.length;
      tail = (tail + part.toString("latin1")).slice(-32);
      if (tail.endsWith("\r\n0\r\n\r\n")) finished();
      // The reader stops once the answer has begun.
      if (bytes > 64 * 1024 && !socket.isPaused() && paused === undefined) {
        socket.pause();
        paused = Date.now();
      }
    });
    let paused: number | undefined;
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );

    // Give the upstream time to push past every buffer on the way (loopback TCP stalls for a
    // moment as its windows fill, so a short wait could mistake that for backpressure).
    await waitFor(() => paused !== undefined);
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await sleep(2000);
    const stalledAt = sent;
    await sleep(500);
    expect(sent).toBe(stalledAt);
    const heldWhilePaused = most;
    console.log(
      `paused reader: upstream held at ${stalledAt} of ${PIECES} deltas; server buffer peaked at ${heldWhilePaused} bytes (bound ${BOUND}); rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
    expect(stalledAt).toBeLessThan(PIECES);
    expect(heldWhilePaused).toBeLessThanOrEqual(BOUND);

    socket.resume();
    await ended;
    socket.destroy();
    const text = Buffer.concat(received).toString("utf8");
    const events = text.slice(text.indexOf("\r\n\r\n") + 4);
    // Chunked transfer: the events are between chunk-size lines; take the JSON of each `data:` line.
    const content = [...events.matchAll(/^data: (\{.*\})$/gm)]
      .map((m) => (JSON.parse(m[1]!) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? "")
      .join("");
    expect(content).toBe(Array.from({ length: PIECES }, (_, i) => piece(i)).join(""));
    expect(events).toContain("data: [DONE]");
    expect(most).toBeLessThanOrEqual(BOUND);
  }, 30_000);
});
