import { HttpError } from "@envace/http";
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TinkerHttpError, TinkerRequestFailedError, TinkerTimeoutError } from "./errors.js";
import { retrieveFuture } from "./futures.js";
import { defaultRetryPolicy, TinkerHttp } from "./http.js";

interface Scripted {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Each route's answers, in order; the scripted server records what it was sent. */
const script = new Map<string, Scripted[]>();
let server: ScriptedServer;
let baseUrl: string;

beforeAll(async () => {
  server = await startScriptedServer({
    script: (request) => {
      const next = script.get(request.path)?.shift() ?? { status: 500, body: { detail: `script exhausted for ${request.path}` } };
      return reply.json(next.body, next.status, next.headers);
    },
  });
  baseUrl = server.url;
});

afterAll(() => server.close());

beforeEach(() => {
  script.clear();
  server.clearRequests();
});

/** What the client sent, request by request. */
const seen = () => server.scripted.map((request) => ({ route: request.path, body: (request.body ?? {}) as Record<string, unknown>, headers: request.headers }));

function http(overrides: Partial<typeof defaultRetryPolicy> = {}, url = baseUrl): TinkerHttp {
  return new TinkerHttp({
    baseUrl: url,
    fetch,
    retry: { ...defaultRetryPolicy, initialDelayMs: 5, maxDelayMs: 20, billingPauseMs: 5, ...overrides },
    requestTimeoutMs: 2_000,
    pollTimeoutMs: 2_000,
    userAgent: "test",
    apiKey: () => Promise.resolve("tml-test"),
  });
}

const POLL = "/api/v1/retrieve_future";
const result = { metrics: { "grad_norm:mean": 1.5 } };

describe("retrieve_future reply handling", () => {
  it("polls through try_again, 408, 5xx and 429 to the result", async () => {
    script.set(POLL, [
      { status: 200, body: { type: "try_again", request_id: "r1", queue_state: "active" } },
      { status: 408, body: { queue_state: "active" } },
      { status: 503, body: { detail: "busy" } },
      { status: 429, body: { detail: "slow down" }, headers: { "retry-after-ms": "1" } },
      { status: 200, body: { status: "complete_metadata", response_payload_size: 10 } },
      { status: 200, body: result },
    ]);
    expect(await retrieveFuture(http(), "r1", { requestType: "OptimStep" })).toEqual(result);
    expect(seen()).toHaveLength(6);
    expect(seen().every((s) => s.body.request_id === "r1" && s.body.allow_metadata_only === false)).toBe(true);
    expect(seen().map((s) => s.headers["x-tinker-request-iteration"])).toEqual(["0", "1", "2", "3", "4", "5"]);
    expect(seen()[0]!.headers["x-tinker-request-type"]).toBe("OptimStep");
    expect(seen()[0]!.headers["x-api-key"]).toBe("tml-test");
  });

  it("raises a failed request with its category", async () => {
    script.set(POLL, [{ status: 200, body: { error: "token 99 is outside the vocabulary", category: "user" } }]);
    const error = await retrieveFuture(http(), "r2").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TinkerRequestFailedError);
    expect(error).toMatchObject({ requestId: "r2", category: "user", detail: "token 99 is outside the vocabulary" });
  });

  it("retries a 400 a few times (SkyRL tx reports failures so), then raises its detail", async () => {
    script.set(POLL, [
      { status: 400, body: { detail: "glitch" } },
      { status: 200, body: result },
    ]);
    expect(await retrieveFuture(http(), "r3")).toEqual(result);
    script.set(
      POLL,
      Array.from({ length: 4 }, () => ({ status: 400, body: { detail: "LoadWeights is not permitted" } })),
    );
    await expect(retrieveFuture(http(), "r4")).rejects.toThrow("request r4 failed (unknown): LoadWeights is not permitted");
    expect(seen().filter((s) => s.body.request_id === "r4")).toHaveLength(4);
  });

  it("submits the request again when its future is gone (410)", async () => {
    script.set(POLL, [
      { status: 410, body: { detail: "promise expired" } },
      { status: 200, body: result },
    ]);
    let resubmitted = 0;
    const out = await retrieveFuture(http(), "old", {
      resubmit: () => {
        resubmitted += 1;
        return Promise.resolve("new");
      },
    });
    expect(out).toEqual(result);
    expect(resubmitted).toBe(1);
    expect(seen().map((s) => s.body.request_id)).toEqual(["old", "new"]);
  });

  it("pauses on 402 (billing) within its budget, then gives up", async () => {
    script.set(POLL, [
      { status: 402, body: { detail: "payment required" } },
      { status: 200, body: result },
    ]);
    expect(await retrieveFuture(http(), "r5")).toEqual(result);
    script.set(POLL, [
      { status: 402, body: { detail: "payment required" } },
      { status: 402, body: { detail: "payment required" } },
    ]);
    await expect(retrieveFuture(http({ billingPauseMs: 5, billingMaxPauseMs: 5 }), "r6")).rejects.toThrow(/HTTP 402: request r6: payment required/);
  });

  it("raises other client errors at once", async () => {
    script.set(POLL, [{ status: 404, body: { detail: 'unknown request_id "zz"' } }]);
    const error = await retrieveFuture(http(), "zz").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TinkerHttpError);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ code: "status", status: 404, isRetryable: false });
  });

  it("stops when its deadline passes", async () => {
    script.set(
      POLL,
      Array.from({ length: 50 }, () => ({ status: 408, body: {} })),
    );
    await expect(retrieveFuture(http({ futureDeadlineMs: 0 }), "r7")).rejects.toThrow(TinkerTimeoutError);
  });
});

describe("submission", () => {
  it("retries 5xx and 429 with one idempotency key, then returns the reply", async () => {
    script.set("/api/v1/optim_step", [
      { status: 502, body: { detail: "bad gateway" } },
      { status: 429, body: { detail: "rate" } },
      { status: 200, body: { request_id: "q1" } },
    ]);
    expect(await http().post("/api/v1/optim_step", { seq_id: 1 })).toEqual({ request_id: "q1" });
    const keys = new Set(seen().map((s) => s.headers["x-idempotency-key"]));
    expect(seen()).toHaveLength(3);
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^envace-/);
  });

  it("does not retry a conflict or a bad request", async () => {
    script.set("/api/v1/forward", [{ status: 409, body: { detail: "seq_id 3 of model m was already used by a different request", code: "seq_conflict" } }]);
    await expect(http().post("/api/v1/forward", {})).rejects.toThrow("/api/v1/forward: HTTP 409: seq_id 3 of model m was already used by a different request");
    expect(seen()).toHaveLength(1);
  });

  it("gives up on an unreachable server after its deadline", async () => {
    const closed = await startScriptedServer();
    const url = closed.url;
    await closed.close();
    await expect(http({ submitDeadlineMs: 30 }, url).post("/api/v1/optim_step", {})).rejects.toThrow(/gave up after \d+ attempts/);
  });
});
