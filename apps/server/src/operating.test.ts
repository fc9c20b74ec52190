import { connect, type Socket } from "node:net";
import { ScriptedPolicy } from "@envace/trajectory";
import { reply } from "@envace/scripted-server";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, ServeError, type RunningServer } from "./serve.js";
import { MODEL, startHarness, waitFor, type Harness } from "./testing/harness.js";

let harness: Harness | undefined;
let extra: RunningServer | undefined;
afterEach(async () => {
  await harness?.close();
  await extra?.close();
  harness = undefined;
  extra = undefined;
});

const user = [{ role: "user" as const, content: "Hello?" }];
const TOKEN = "s3cret-token-0123456789abcdef0123456789";

describe("operating the server", () => {
  it("asks for the bearer token on /v1 when it has one, and accepts the right one", async () => {
    harness = await startHarness({ script: [reply.text("hi")], tokens: [TOKEN] });
    await expect(harness.client.chat.completions.create({ model: MODEL, messages: user })).rejects.toThrow(OpenAI.AuthenticationError);
    const wrong = new OpenAI({ baseURL: `${harness.server.url}/v1`, apiKey: "not-the-token", maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401, code: "invalid_api_key" });
    const right = new OpenAI({ baseURL: `${harness.server.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
    const completion = await right.chat.completions.create({ model: MODEL, messages: user });
    expect(completion.choices[0]!.message.content).toBe("hi");
    // Health stays open for probes.
    expect((await fetch(`${harness.server.url}/health`)).status).toBe(200);
  });

  it("refuses to listen beyond loopback without a token", async () => {
    const policy = ScriptedPolicy.queues("scripted", {});
    await expect(startServer({ policy, model: "m", config: { host: "0.0.0.0", port: 0, log_level: "silent" }, tokens: [] })).rejects.toThrow(ServeError);
    await expect(startServer({ policy, model: "m", config: { host: "0.0.0.0", port: 0, log_level: "silent" }, tokens: [] })).rejects.toThrow(
      /without a bearer token/,
    );
    extra = await startServer({ policy, model: "m", config: { host: "0.0.0.0", port: 0, log_level: "silent" }, tokens: [TOKEN] });
    expect(extra.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });

  it("lets the caller add its own routes before it listens", async () => {
    const policy = ScriptedPolicy.queues("scripted", {});
    extra = await startServer({
      policy,
      model: "m",
      config: { port: 0, log_level: "silent" },
      tokens: [],
      prepare: ({ fastify }) => fastify.get("/caller-route", () => ({ mine: true })),
    });
    expect(await (await fetch(`${extra.url}/caller-route`)).json()).toEqual({ mine: true });
  });

  it("answers 429 with retry-after once the generation slots and the queue are full", async () => {
    harness = await startHarness({
      script: () => reply.delay(400, reply.text("done")),
      config: { concurrency: { requests: 1, queue: 1, retry_after_s: 2 } },
    });
    const first = harness.client.chat.completions.create({ model: MODEL, messages: user });
    await waitFor(() => harness!.server.app.slots.active === 1);
    const second = harness.client.chat.completions.create({ model: MODEL, messages: user });
    await waitFor(() => harness!.server.app.slots.pending === 1);
    const third = await harness.client.chat.completions.create({ model: MODEL, messages: user }).catch((error: unknown) => error);
    expect(third).toBeInstanceOf(OpenAI.RateLimitError);
    expect((third as InstanceType<typeof OpenAI.RateLimitError>).headers.get("retry-after")).toBe("2");
    expect((third as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("queue_full");
    // The two admitted requests still complete.
    expect((await first).choices[0]!.message.content).toBe("done");
    expect((await second).choices[0]!.message.content).toBe("done");
  });

  it("maps the upstream's failures to 502 and its silence to 504, and keeps serving", async () => {
    harness = await startHarness({ script: [reply.error(500, "boom"), reply.delay(3000, reply.text("late")), reply.text("fine")], spec: ",timeout=0.5" });
    await expect(harness.client.chat.completions.create({ model: MODEL, messages: user })).rejects.toMatchObject({ status: 502, code: "upstream_error" });
    await expect(harness.client.chat.completions.create({ model: MODEL, messages: user })).rejects.toMatchObject({ status: 504, code: "upstream_timeout" });
    expect((await harness.client.chat.completions.create({ model: MODEL, messages: user })).choices[0]!.message.content).toBe("fine");
    const metrics = await (await fetch(`${harness.server.url}/metrics`)).text();
    expect(metrics).toContain('envace_server_upstream_errors_total{kind="status"} 1');
    expect(metrics).toContain('envace_server_upstream_errors_total{kind="timeout"} 1');
  });

  it("shuts down gracefully: idle and silent connections close, requests in flight finish with connection: close, a pipelined one is not answered, new connections are refused", async () => {
    harness = await startHarness({ script: () => reply.delay(300, reply.text("finished")) });
    const port = harness.server.port;
    const open = (): { socket: Socket; received: () => string; closed: Promise<string> } => {
      const socket = connect({ host: "127.0.0.1", port });
      const chunks: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => chunks.push(chunk));
      socket.on("error", () => undefined);
      const received = (): string => Buffer.concat(chunks).toString();
      return { socket, received, closed: new Promise((resolve) => socket.on("close", () => resolve(received()))) };
    };
    // A keep-alive connection that has been answered once and is idle now.
    const idle = open();
    idle.socket.write("GET /health HTTP/1.1\r\nhost: x\r\n\r\n");
    await waitFor(() => idle.received().endsWith("}"));
    // A request in flight, and a connection that never sends one.
    const body = JSON.stringify({ model: MODEL, messages: user });
    const busy = open();
    busy.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    const silent = open();
    await waitFor(() => harness!.server.app.slots.active === 1);
    const answered = idle.received();
    const closed = harness.server.close();
    // A request pipelined behind the one in flight, once the shutdown has begun.
    await new Promise((resolve) => setTimeout(resolve, 20));
    busy.socket.write("GET /health HTTP/1.1\r\nhost: x\r\n\r\n");
    // The idle and the silent connection close at once, with nothing more sent on them.
    const started = Date.now();
    expect(await idle.closed).toBe(answered);
    expect(await silent.closed).toBe("");
    expect(Date.now() - started).toBeLessThan(250);
    // The request in flight finishes, and tells its client not to reuse the connection.
    const finished = await busy.closed;
    expect(finished).toMatch(/^HTTP\/1\.1 200 /);
    expect(finished.toLowerCase()).toContain("\r\nconnection: close\r\n");
    expect(finished).toContain('"content":"finished"');
    // The pipelined one is not answered: the connection closed after the first.
    expect(finished.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    await closed;
    // Once closed, nothing is accepted.
    await expect(fetch(`${harness.server.url}/health`)).rejects.toThrow();
  });
});
