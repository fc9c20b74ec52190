import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { HttpError, RequestBodyError } from "./errors.js";
import { parseReply, requestJson, send } from "./request.js";
import { withRetry, type RetryEvent, type RetryOptions } from "./retry.js";

/** A step of the loopback server's script: answer with this, never answer (`hang`), or break off mid-body (`cut`). */
type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang" | "cut";

const script: Answer[] = [];
const seen: { method: string; headers: IncomingMessage["headers"]; body: string; port: number | undefined }[] = [];
const hanging: ServerResponse[] = [];
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      seen.push({ method: req.method ?? "", headers: req.headers, body, port: req.socket.remotePort });
      const next = script.shift() ?? { status: 500, body: '{"detail":"script exhausted"}' };
      if (next === "hang") {
        hanging.push(res);
        return;
      }
      if (next === "cut") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write('{"answer":', () => res.destroy());
        return;
      }
      res.writeHead(next.status, { "content-type": "application/json", ...next.headers });
      res.end(next.body ?? "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/thing`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  for (const res of hanging.splice(0)) res.destroy();
  script.length = 0;
  seen.length = 0;
});

/** Retries that wait 1 ms unless the server asks for longer (the cap leaves room for what it asks). */
const quick: RetryOptions = { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 10_000, factor: 2 };

function retried(options: RetryOptions = quick): { run: () => Promise<unknown>; events: RetryEvent[] } {
  const events: RetryEvent[] = [];
  return {
    events,
    run: () =>
      withRetry(
        () => requestJson({ url, body: { n: 1 }, timeoutMs: 5_000 }),
        options,
        undefined,
        (e) => events.push(e),
      ),
  };
}

const error = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => expect.fail("resolved"),
    (e: unknown) => e,
  );

describe("requestJson", () => {
  it("posts JSON and returns the parsed reply", async () => {
    script.push({ status: 200, body: '{"ok":true}' });
    expect(await requestJson({ url, body: { question: 42 }, timeoutMs: 5_000, headers: { Authorization: "Bearer k" } })).toEqual({ ok: true });
    expect(seen[0]).toMatchObject({ method: "POST", body: '{"question":42}' });
    expect(seen[0]!.headers).toMatchObject({ "content-type": "application/json", accept: "application/json", authorization: "Bearer k" });
  });

  it("lets a caller's header replace a default whatever its case", async () => {
    script.push({ status: 200, body: "{}" });
    await requestJson({ url, timeoutMs: 5_000, headers: { Accept: "application/x-protobuf, application/json" } });
    expect(seen[0]).toMatchObject({ method: "GET", body: "" });
    expect(seen[0]!.headers.accept).toBe("application/x-protobuf, application/json");
    expect(seen[0]!.headers["content-type"]).toBeUndefined();
  });

  it("turns an error status into an HttpError with the status, the server's words and the URL", async () => {
    script.push({ status: 400, body: '{"detail":"temperature must be positive"}' });
    const failure = await error(requestJson({ url, body: {}, timeoutMs: 5_000 }));
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ code: "status", status: 400, url, detail: "temperature must be positive", isRetryable: false });
    expect((failure as HttpError).message).toBe(`${url}: HTTP 400: temperature must be positive`);
  });

  it("reads OpenAI's error.message, and keeps an error page that is not JSON as text", async () => {
    script.push({ status: 404, body: '{"error":{"message":"model m not found","type":"invalid_request_error"}}' });
    await expect(requestJson({ url, timeoutMs: 5_000 })).rejects.toThrow(`${url}: HTTP 404: model m not found`);
    script.push({ status: 502, body: "<html> Bad\n gateway </html>", headers: { "content-type": "text/html" } });
    await expect(requestJson({ url, timeoutMs: 5_000 })).rejects.toThrow(`${url}: HTTP 502: <html> Bad gateway </html>`);
  });

  it("calls a successful reply that is not JSON malformed (worth another try)", async () => {
    script.push({ status: 200, body: "hello" });
    const failure = await error(requestJson({ url, timeoutMs: 5_000 }));
    expect(failure).toMatchObject({ code: "malformed", status: 200, isRetryable: true, message: `${url}: reply is not JSON: hello` });
  });

  it("returns the bytes of a reply whose type is binary", async () => {
    script.push({ status: 200, body: "\u0001\u0002", headers: { "content-type": "application/x-protobuf" } });
    const reply = await send({
      url,
      body: new Uint8Array([7, 8]),
      contentType: "application/x-protobuf",
      timeoutMs: 5_000,
      binaryTypes: ["application/x-protobuf"],
    });
    expect(reply.body).toEqual(new Uint8Array([1, 2]));
    expect(seen[0]!.headers["content-type"]).toBe("application/x-protobuf");
    expect(seen[0]!.body).toBe("\u0007\u0008");
  });

  it("sends one request after another over the same kept-alive connection", async () => {
    script.push({ status: 200, body: "{}" }, { status: 200, body: "{}" });
    await requestJson({ url, timeoutMs: 5_000 });
    await requestJson({ url, body: { n: 2 }, timeoutMs: 5_000 });
    expect(seen[1]!.port).toBe(seen[0]!.port);
    expect(seen[1]!.headers).toMatchObject({ "content-length": "7", connection: "keep-alive" });
  });

  it("reports a reply cut off before its last byte as a connection failure (worth another try)", async () => {
    script.push("cut");
    const failure = await error(requestJson({ url, timeoutMs: 5_000 }));
    expect(failure).toMatchObject({ code: "connection", isRetryable: true });
    expect((failure as Error).message).toMatch(`${url}: connection failed (the connection closed before the reply ended`);
  });

  it("refuses a body it cannot encode as this process's fault, sends nothing and is not retried", async () => {
    let deep: unknown = 0;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const failure = await error(withRetry(() => requestJson({ url, body: { deep }, timeoutMs: 5_000 }), quick));
    expect(failure).toBeInstanceOf(RequestBodyError);
    expect(failure).not.toBeInstanceOf(HttpError);
    expect((failure as Error).message).toMatch(`${url}: the request body cannot be encoded as JSON (Maximum call stack size exceeded)`);
    expect(seen).toHaveLength(0);
  });

  it("refuses a URL of another scheme at once, naming it, and does not retry it", async () => {
    let attempts = 0;
    const failure = await error(
      withRetry(() => {
        attempts += 1;
        return requestJson({ url: "ftp://127.0.0.1:1/file", timeoutMs: 5_000 });
      }, quick),
    );
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ code: "url", isRetryable: false, message: "ftp://127.0.0.1:1/file: unsupported protocol ftp:" });
    expect(attempts).toBe(1);
  });

  it("reports a refused connection as a connection failure", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1`;
    await new Promise((resolve) => closed.close(resolve));
    const failure = await error(requestJson({ url: gone, timeoutMs: 5_000 }));
    expect(failure).toMatchObject({ code: "connection", isRetryable: true });
    expect((failure as Error).message).toMatch(new RegExp(`^${gone}: connection failed \\(connect ECONNREFUSED`));
  });

  it("gives up on a server that does not answer within the timeout", async () => {
    script.push("hang");
    const started = performance.now();
    const failure = await error(requestJson({ url, timeoutMs: 100 }));
    expect(failure).toMatchObject({ code: "timeout", isRetryable: true, message: `${url}: no answer within 100 ms` });
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
  });

  it("rejects with the caller's abort reason, not a timeout", async () => {
    script.push("hang");
    const controller = new AbortController();
    const pending = requestJson({ url, timeoutMs: 5_000, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("user cancelled")), 20);
    await expect(pending).rejects.toThrow("user cancelled");
    await expect(requestJson({ url, timeoutMs: 5_000, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("withRetry over HTTP", () => {
  it("retries a 429 after the seconds its retry-after asks for", async () => {
    script.push({ status: 429, body: '{"detail":"slow down"}', headers: { "retry-after": "1" } }, { status: 200, body: '{"ok":1}' });
    const { run, events } = retried();
    const started = performance.now();
    expect(await run()).toEqual({ ok: 1 });
    // Asked for 1 s; the backoff's own delay (1 ms) is shorter, so the server's wins.
    expect(events.map((e) => [e.attempt, e.delayMs, e.error.status])).toEqual([[0, 1_000, 429]]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(seen).toHaveLength(2);
  });

  it("retries a 429 at the HTTP date its retry-after names", async () => {
    // Two seconds ahead, written to the whole second: between 1 and 2 s from now.
    const date = new Date(Date.now() + 2_000).toUTCString();
    script.push({ status: 429, headers: { "retry-after": date } }, { status: 200, body: "[]" });
    const { run, events } = retried();
    expect(await run()).toEqual([]);
    expect(events).toHaveLength(1);
    expect(events[0]!.delayMs).toBeGreaterThan(1_000 - 50);
    expect(events[0]!.delayMs).toBeLessThanOrEqual(2_000);
  });

  it("caps what the server asks for at maxDelayMs", async () => {
    script.push({ status: 503, headers: { "retry-after": "3600" } }, { status: 200, body: "1" });
    const { run, events } = retried({ ...quick, maxDelayMs: 20 });
    expect(await run()).toBe(1);
    expect(events.map((e) => e.delayMs)).toEqual([20]);
  });

  it("does not retry a 400, nor a 503 the server says not to retry", async () => {
    script.push({ status: 400, body: '{"detail":"bad field"}' });
    await expect(retried().run()).rejects.toThrow(`${url}: HTTP 400: bad field`);
    expect(seen).toHaveLength(1);
    script.push({ status: 503, headers: { "x-should-retry": "false" } });
    await expect(retried().run()).rejects.toMatchObject({ code: "status", status: 503 });
    expect(seen).toHaveLength(2);
  });

  it("backs off 1, 2, 4 ms without jitter and throws the last error once retries run out", async () => {
    script.push({ status: 500 }, { status: 502 }, { status: 503 }, { status: 504, body: '{"detail":"last"}' });
    const { run, events } = retried();
    await expect(run()).rejects.toThrow(`${url}: HTTP 504: last`);
    expect(events.map((e) => [e.attempt, e.delayMs, e.error.status])).toEqual([
      [0, 1, 500],
      [1, 2, 502],
      [2, 4, 503],
    ]);
  });

  it("retries statuses the caller's policy names, and only those", async () => {
    script.push({ status: 409 });
    await expect(retried({ ...quick, retryStatus: (s) => s === 429 || s >= 500 }).run()).rejects.toMatchObject({ status: 409 });
    expect(seen).toHaveLength(1);
    script.push({ status: 409 }, { status: 200, body: "2" });
    expect(await retried().run()).toBe(2);
  });

  it("stops before a wait that would end past the deadline", async () => {
    script.push({ status: 503 }, { status: 503 }, { status: 503 });
    const { run } = retried({ ...quick, maxRetries: Infinity, initialDelayMs: 300, deadlineMs: 700 });
    // Waits 300 ms; the next wait, 600 ms, would end past 700 ms: two attempts.
    await expect(run()).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(2);
  });

  it("retries a timeout, then stops at once when the caller aborts during the backoff", async () => {
    script.push("hang", { status: 503 });
    const controller = new AbortController();
    const slow = { ...quick, initialDelayMs: 60_000, maxDelayMs: 60_000 };
    const events: RetryEvent[] = [];
    const pending = withRetry(
      () => requestJson({ url, timeoutMs: 50, signal: controller.signal }),
      slow,
      controller.signal,
      (e) => {
        events.push(e);
        controller.abort();
      },
    );
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(events.map((e) => e.error.code)).toEqual(["timeout"]);
  });

  it("does not retry what is not an HTTP failure", async () => {
    let calls = 0;
    const bug = () => {
      calls++;
      return Promise.reject(new TypeError("x is undefined"));
    };
    await expect(withRetry(bug, quick)).rejects.toThrow(TypeError);
    expect(calls).toBe(1);
  });
});

describe("parseReply", () => {
  it("returns a reply that fits and names each field of one that does not, without retrying it", () => {
    const Model = z.object({ id: z.string(), context: z.number() });
    expect(parseReply(Model, { id: "m", context: 8 }, url)).toEqual({ id: "m", context: 8 });
    let failure: unknown;
    try {
      parseReply(Model, { id: 3 }, url);
    } catch (e) {
      failure = e;
    }
    expect(failure).toMatchObject({ code: "shape", isRetryable: false });
    expect((failure as Error).message).toBe(
      `${url}: unexpected reply (id: Invalid input: expected string, received number; context: Invalid input: expected number, received undefined): {"id":3}`,
    );
  });
});
