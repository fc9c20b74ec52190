// Every request is counted and logged once, cancelled or not; clients never see the upstream's
// URL, a path or a stack, while the log keeps them.
import { policyFromSpec } from "@envace/models";
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import OpenAI from "openai";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "./serve.js";
import { MODEL, waitFor } from "./testing/harness.js";
import { rawRequest } from "./testing/raw.js";

interface LogLine {
  msg: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  err?: { message: string; stack?: string };
  [key: string]: unknown;
}

let upstream: ScriptedServer | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  await upstream?.close();
  server = undefined;
  upstream = undefined;
});

/** The scripted upstream, the server in front of it logging JSON lines into `lines`, and a client. */
async function start(script: Parameters<typeof startScriptedServer>[0] = {}): Promise<{ lines: LogLine[]; client: OpenAI; upstreamURL: string }> {
  upstream = await startScriptedServer(script);
  const lines: LogLine[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  const resolved = await policyFromSpec(`openai:${upstream.baseURL}#${MODEL},retries=0,timeout=0.5`);
  server = await startServer({ policy: resolved.policy, model: MODEL, config: { port: 0, log_level: "info" }, tokens: [], logger });
  return { lines, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0 }), upstreamURL: upstream.baseURL };
}

/** `envace_server_requests_total` by `route|status`, read from the registry (not over HTTP, which would count itself). */
async function counts(): Promise<Record<string, number>> {
  const metric = await server!.app.metrics.requests.get();
  return Object.fromEntries(metric.values.map((v) => [`${String(v.labels.route)}|${String(v.labels.status)}`, v.value]));
}

const user = [{ role: "user" as const, content: "Hello?" }];

describe("request accounting", () => {
  it("counts and logs each request once: answered, failed, unknown, and cancelled streamed or not", async () => {
    const { lines, client } = await start({ script: [reply.text("hi"), reply.delay(5000, reply.text("late")), reply.delay(5000, reply.text("late"))] });
    await client.chat.completions.create({ model: MODEL, messages: user });
    expect((await rawRequest(server!.port, "GET", "/nowhere")).status).toBe(404);
    for (const stream of [false, true]) {
      const controller = new AbortController();
      const pending = client.chat.completions.create({ model: MODEL, messages: user, stream }, { signal: controller.signal });
      const before = upstream!.scripted.length;
      await waitFor(() => upstream!.scripted.length === before + 1);
      controller.abort();
      await expect(pending).rejects.toThrow(OpenAI.APIUserAbortError);
    }
    await waitFor(() => lines.filter((l) => l.msg.startsWith("request")).length === 4);
    // Hand-counted: one 200, one 404, two cancelled chat completions.
    expect(await counts()).toEqual({ "/v1/chat/completions|200": 1, "unknown|404": 1, "/v1/chat/completions|499": 2 });
    const requestLines = lines.filter((l) => l.msg.startsWith("request"));
    expect(requestLines.map((l) => [l.req?.url, l.res?.statusCode])).toEqual([
      ["/v1/chat/completions", 200],
      ["/nowhere", 404],
      ["/v1/chat/completions", 499],
      ["/v1/chat/completions", 499],
    ]);
    expect(requestLines.filter((l) => l.res?.statusCode === 499).every((l) => l.msg.startsWith("request cancelled"))).toBe(true);
    // Nothing counted twice afterwards, once the cancelled handlers have unwound.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(Object.values(await counts()).reduce((a, b) => a + b, 0)).toBe(4);
    expect(lines.filter((l) => l.msg.startsWith("request"))).toHaveLength(4);
  });
});

describe("error bodies", () => {
  it("a failing upstream, a silent one and an unreachable one: generic messages with stable codes, details only in the log", async () => {
    const { lines, client, upstreamURL } = await start({
      script: [reply.error(500, "boom at /srv/model/weights.bin"), reply.delay(3000, reply.text("late")), reply.error(500, "boom"), reply.text("x")],
    });
    const port = new URL(upstreamURL).port;
    const answers: { status: number; body: string }[] = [];
    for (const stream of [false, false, true]) {
      const answer = await fetch(`${server!.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, messages: user, stream }),
      });
      answers.push({ status: answer.status, body: await answer.text() });
    }
    // The upstream gone: the connection is refused.
    await upstream!.close();
    upstream = undefined;
    const refused: unknown = await client.chat.completions.create({ model: MODEL, messages: user }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const { status, error } = refused as InstanceType<typeof OpenAI.APIError>;
    answers.push({ status: status ?? 0, body: JSON.stringify(error) });
    expect(answers.map((a) => a.status)).toEqual([502, 504, 502, 502]);
    expect(answers.map((a) => (JSON.parse(a.body) as { error?: { code: string } }).error?.code ?? (JSON.parse(a.body) as { code: string }).code)).toEqual([
      "upstream_error",
      "upstream_timeout",
      "upstream_error",
      "upstream_error",
    ]);
    for (const { body } of answers) {
      for (const secret of [port, "127.0.0.1", "localhost", "/srv/model", "boom", "http", "    at "]) expect(body).not.toContain(secret);
    }
    // The log has what the clients were not told.
    const failures = lines.filter((l) => l.err !== undefined).map((l) => JSON.stringify(l.err));
    expect(failures.some((f) => f.includes(port))).toBe(true);
  });
});
