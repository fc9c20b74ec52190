import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { decodeSampleResponse } from "./proto/codec.js";
import { bodyOf, type RecordedExchange } from "./testing/record-skyrl.js";
import { skyrlSession, type SkyrlSessionResult } from "./testing/skyrl-session.js";

/**
 * This package's client against SkyRL tx (JAX backend, a tiny random Qwen3), as recorded by
 * `src/testing/record-skyrl.ts` (see `fixtures/skyrl/README.md`): a loopback server answers
 * each request with what SkyRL answered to the same bytes, and the same session runs through the
 * client again. A request the recording does not hold fails the test.
 */

const FIXTURES = new URL("../fixtures/skyrl/", import.meta.url);
const exchanges = readFileSync(new URL("session.jsonl", FIXTURES), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as RecordedExchange);
const recorded = JSON.parse(readFileSync(new URL("session.result.json", FIXTURES), "utf8")) as SkyrlSessionResult;
const BASE_MODEL = "skyrl-run/tiny-qwen3";

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

const key = (method: string, path: string, body: { json?: unknown; base64?: string }) =>
  `${method} ${path} ${body.base64 ?? JSON.stringify(body.json ?? null)}`;

async function replay(): Promise<{ url: string; unmatched: string[]; used: () => number; close: () => Promise<void> }> {
  const pending = exchanges.map((e) => ({ key: key(e.method, e.path, e.request), exchange: e, used: false }));
  const unmatched: string[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = bodyOf(await read(req), req.headers["content-type"]);
      const wanted = key(req.method ?? "GET", req.url ?? "/", body);
      const hit = pending.find((p) => !p.used && p.key === wanted);
      if (!hit) {
        unmatched.push(wanted.slice(0, 300));
        res.writeHead(500, { "Content-Type": "application/json" }).end(JSON.stringify({ detail: "not in the recording" }));
        return;
      }
      hit.used = true;
      const { response } = hit.exchange;
      const payload = response.base64 !== undefined ? Buffer.from(response.base64, "base64") : response.json !== undefined ? JSON.stringify(response.json) : "";
      res.writeHead(response.status, response.contentType ? { "Content-Type": response.contentType } : {}).end(payload);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    unmatched,
    used: () => pending.filter((p) => p.used).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("the client against SkyRL tx's recorded answers", () => {
  it("measures SkyRL's per-datum mean, refuses a configured sum, trains every loss, samples, scores prompts, and resumes", async () => {
    const tx = await replay();
    let result: SkyrlSessionResult;
    try {
      result = await skyrlSession(tx.url, BASE_MODEL);
    } finally {
      await tx.close();
    }
    expect(tx.unmatched).toEqual([]);
    expect(tx.used()).toBe(exchanges.length);

    // SkyRL's client/config says nothing of its reduction; the gradient-norm probe finds it (2/3, by hand in calibration.ts).
    expect(exchanges.find((e) => e.path === "/api/v1/client/config")!.response.json).toEqual({ pjwt_auth_enabled: false });
    expect(result.measured).toBe("datum-token-mean");
    expect(result.evidence).toMatch(/\(ratio 0\.6667;/);
    expect(result.refusedSum).toMatch(/^reduction "sum" is configured, but http:\/\/127\.0\.0\.1:\d+ reduces losses by "datum-token-mean" \(gradient norms/);
    // SkyRL's JAX backend reports no loss:sum, so every loss is the client's own reduction of the returned log-probabilities.
    expect(Object.keys(result.losses)).toEqual(["importance_sampling", "ppo", "grpo", "cross_entropy"]);
    for (const [name, loss] of Object.entries(result.losses)) expect(loss).toBeCloseTo(recorded.losses[name]!, 9);
    // SkyRL leaves out the leading null: n − 1 prompt log-probabilities, equal to forward's.
    expect(result.promptLogprobs).toHaveLength(6);
    result.promptLogprobs.forEach((lp, i) => expect(lp).toBeCloseTo(result.forwardOfPrompt[i]!, 5));
    expect(result.sampled.stopTokens.logprobs).toHaveLength(result.sampled.stopTokens.tokens.length);
    expect(result.checkpoint).toMatch(/^tinker:\/\/model_[0-9a-f]+\/weights\/step-4$/);
    // Loaded weights score as the saved ones; with the optimizer state the next step matches the model that kept training.
    expect(result.resumedForward.withOptimizer).toEqual(result.forwardBeforeSave);
    expect(result.resumedForward.withoutOptimizer).toEqual(result.forwardBeforeSave);
    expect(result.nextStep.resumed).toBeCloseTo(result.nextStep.kept, 6);
    expect(Math.abs(result.nextStep.weightsOnly - result.nextStep.kept)).toBeGreaterThan(1e-3);
  });

  it("holds SkyRL's own wire: protobuf sample results whose prompt log-probabilities have no leading null, protobuf forward_backward bodies it accepted", () => {
    const samples = exchanges
      .filter((e) => e.path === "/api/v1/retrieve_future" && e.response.base64 !== undefined)
      .map((e) => Buffer.from(e.response.base64!, "base64"))
      .flatMap((bytes) => {
        try {
          const decoded = decodeSampleResponse(bytes);
          return decoded.sequences.length > 0 ? [decoded] : [];
        } catch {
          return [];
        }
      });
    expect(samples.length).toBeGreaterThanOrEqual(3);
    const scored = samples.map((s) => s.prompt_logprobs).filter((p) => p !== null);
    expect(scored.map((p) => [p.length, p.every((x) => x !== null)])).toEqual([[6, true]]);
    const bodies = exchanges.filter((e) => e.path === "/api/v1/forward_backward");
    expect(bodies.every((e) => e.request.contentType === "application/x-protobuf" && e.response.status === 200)).toBe(true);
  });
});
