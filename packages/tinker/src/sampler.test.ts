import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { InProcessBackend } from "@envace/training";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TinkerService } from "./client.js";
import { messageType } from "./proto/schema.js";
import { alignPromptScores } from "./sampler.js";
import type { TinkerServer } from "./server/options.js";
import { startTinkerServer } from "./server/server.js";
import { startProxy } from "./testing/proxy.js";
import { TINY_MODEL } from "./testing/tiny-model.js";

describe("alignPromptScores", () => {
  it("takes Tinker's n entries with a leading null and SkyRL tx's n − 1, and refuses anything else", () => {
    expect(alignPromptScores([null, -1, -2], 3, "prompt logprobs")).toEqual([-1, -2]);
    expect(alignPromptScores([-1, -2], 3, "prompt logprobs")).toEqual([-1, -2]);
    expect(() => alignPromptScores([-1], 3, "prompt logprobs")).toThrow(
      "the server returned prompt logprobs with 1 entries for a prompt of 3 tokens (expected 3 with a leading null, or 2)",
    );
    expect(() => alignPromptScores([null, null, -2], 3, "prompt logprobs")).toThrow(/a null at prompt position 1 /);
    expect(() => alignPromptScores([-1, null], 3, "prompt logprobs")).toThrow(/a null at prompt position 2 /);
  });
});

describe("prompt log-probabilities in either shape equal forward's", () => {
  let server: TinkerServer;
  beforeAll(async () => {
    server = await startTinkerServer({ createBackend: ({ seed }) => InProcessBackend.create(TINY_MODEL, { seed: seed ?? 0 }) });
  });
  afterAll(() => server.close());

  const prompt = [1, 2, 3, 4, 5, 6];
  const forwardOf = async (service: TinkerService) => {
    const client = await service.createTrainingClient({ baseModel: "tiny", seed: 3, loraRank: 0 });
    const zeros = prompt.slice(1).map(() => 0);
    const [scored] = await client.forward([
      { tokens: prompt.slice(0, -1), targetTokens: prompt.slice(1), logprobs: zeros, advantages: zeros, mask: zeros.map(() => 1) },
    ]);
    return { client, scored: scored! };
  };

  it("with the leading null (Tinker; this project's server, over protobuf)", async () => {
    const service = await TinkerService.connect({ baseUrl: server.url, heartbeatIntervalMs: 0 });
    const { client, scored } = await forwardOf(service);
    const scores = await (await client.saveWeightsForSampler()).promptLogprobs(prompt);
    expect(scores).toHaveLength(prompt.length - 1);
    scores.forEach((s, i) => expect(s).toBeCloseTo(scored[i]!, 5));
    service.close();
  });

  it("without it (SkyRL tx answers n − 1 values, over JSON)", async () => {
    let sent: unknown;
    const proxy = await startProxy(server.url, {
      rewriteJson: (_path, reply) => {
        const r = reply as { type?: string; prompt_logprobs?: unknown[] };
        if (r.type !== "sample" || !r.prompt_logprobs) return reply;
        sent = r.prompt_logprobs.slice(1);
        return { ...r, prompt_logprobs: sent };
      },
    });
    const service = await TinkerService.connect({ baseUrl: proxy.url, heartbeatIntervalMs: 0 });
    const { client, scored } = await forwardOf(service);
    const scores = await (await client.saveWeightsForSampler()).promptLogprobs(prompt);
    expect(sent).toHaveLength(prompt.length - 1);
    expect(scores).toHaveLength(prompt.length - 1);
    scores.forEach((s, i) => expect(s).toBeCloseTo(scored[i]!, 5));
    service.close();
    await proxy.close();
  });
});

describe("top-k prompt log-probabilities", () => {
  /** A scripted server: one sample future whose result is the given protobuf SampleResponse. */
  async function scripted(result: Uint8Array) {
    const bodies: unknown[] = [];
    const fake = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown) : undefined;
        if (req.url === "/api/v1/retrieve_future") {
          res.writeHead(200, { "Content-Type": "application/x-protobuf" }).end(result);
          return;
        }
        bodies.push(body);
        const replies: Record<string, unknown> = {
          "/api/v1/client/config": { pjwt_auth_enabled: false },
          "/api/v1/create_session": { type: "create_session", session_id: "s" },
          "/api/v1/create_sampling_session": { type: "create_sampling_session", sampling_session_id: "sampling_1" },
          "/api/v1/asample": { request_id: "7" },
        };
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(replies[req.url!] ?? {}));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    const service = await TinkerService.connect({ baseUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, heartbeatIntervalMs: 0 });
    const sampler = await service.createSampler({ baseModel: "m" });
    const close = async () => {
      service.close();
      await new Promise((resolve) => fake.close(resolve));
    };
    return { sampler, bodies, close };
  }

  const le = (values: number[], write: (b: Buffer, v: number, o: number) => void) => {
    const b = Buffer.alloc(values.length * 4);
    values.forEach((v, i) => write(b, v, i * 4));
    return b;
  };
  const int32s = (values: number[]) => le(values, (b, v, o) => b.writeInt32LE(v, o));
  const float32s = (values: number[]) => le(values, (b, v, o) => b.writeFloatLE(v, o));

  it("reads the protobuf N × k table (empty cells dropped, first row unscored) and asks with topk_prompt_logprobs", async () => {
    const type = messageType("SampleResponse");
    // A 3-token prompt, k = 2; row 0 is empty, row 2 has one candidate only. Values are exact in float32.
    const bytes = type
      .encode(
        type.fromObject({
          sequences: [{ tokens: int32s([9]), logprobs: float32s([-0.5]) }],
          prompt_logprobs: float32s([Number.NaN, -1.5, -0.25]),
          topk_prompt_logprobs: {
            token_ids: int32s([0, 0, 4, 7, 2, 0]),
            logprobs: float32s([-99999, -99999, -0.75, -1.5, -0.25, -99999]),
            k: 2,
            prompt_length: 3,
          },
        }),
      )
      .finish();
    const { sampler, bodies, close } = await scripted(bytes);
    const out = await sampler.topkPromptLogprobs([1, 7, 2], 2);
    expect(out).toEqual({
      logprobs: [-1.5, -0.25],
      topk: [
        [
          [4, -0.75],
          [7, -1.5],
        ],
        [[2, -0.25]],
      ],
    });
    expect(bodies.at(-1)).toMatchObject({ prompt_logprobs: true, topk_prompt_logprobs: 2, sampling_params: { max_tokens: 1 } });
    await expect(sampler.topkPromptLogprobs([1, 7, 2], 0)).rejects.toThrow(/k must be a positive integer, got 0/);
    // The same table read with k = 1 has rows longer than asked for.
    await expect(sampler.topkPromptLogprobs([1, 7, 2], 1)).rejects.toThrow(/2 top-k entries at prompt position 1, more than k = 1/);
    await close();
  });
});

describe("top-k prompt log-probabilities from this project's server", () => {
  let server: TinkerServer;
  beforeAll(async () => {
    server = await startTinkerServer({ createBackend: ({ seed }) => InProcessBackend.create(TINY_MODEL, { seed: seed ?? 0 }) });
  });
  afterAll(() => server.close());

  const prompt = [1, 2, 3, 4, 5, 6];
  const n = prompt.length - 1;

  /**
   * The log-probability of every token of the vocabulary at each scored prompt position, from
   * `forward` (one datum per token, targeting it everywhere): table[t][token], for position t + 1.
   */
  async function forwardTable(service: TinkerService) {
    const client = await service.createTrainingClient({ baseModel: "tiny", seed: 3, loraRank: 0 });
    const zeros = Array.from({ length: n }, () => 0);
    const vocab = Array.from({ length: TINY_MODEL.vocabSize }, (_, token) => token);
    const scored = await client.forward(
      vocab.map((token) => ({
        tokens: prompt.slice(0, n),
        targetTokens: zeros.map(() => token),
        logprobs: zeros,
        advantages: zeros,
        mask: zeros.map(() => 1),
      })),
    );
    const table = zeros.map((_, t) => vocab.map((token) => scored[token]![t]!));
    return { client, table };
  }

  /** The k best of a row of the table, ranked by hand: highest first, then the lower id. */
  const best = (row: number[], k: number) =>
    row
      .map((lp, token) => [token, lp] as [number, number])
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, k);

  function expectTopk(got: [number, number][][], table: number[][], k: number) {
    expect(got).toHaveLength(n);
    got.forEach((row, t) => {
      const want = best(table[t]!, k);
      expect(row.map(([token]) => token)).toEqual(want.map(([token]) => token));
      row.forEach(([, lp], j) => expect(lp).toBeCloseTo(want[j]![1], 5));
    });
  }

  it("answers k = 3 over protobuf: each position's three most likely tokens, best first, and the prompt's own log-probabilities", async () => {
    const service = await TinkerService.connect({ baseUrl: server.url, heartbeatIntervalMs: 0 });
    const { client, table } = await forwardTable(service);
    const out = await (await client.saveWeightsForSampler()).topkPromptLogprobs(prompt, 3);
    expectTopk(out.topk, table, 3);
    expect(out.logprobs).toHaveLength(n);
    out.logprobs.forEach((lp, t) => expect(lp).toBeCloseTo(table[t]![prompt[t + 1]!]!, 5));
    service.close();
  });

  it("clips a k past the vocabulary to all of it, and over JSON sends null for the first position as prompt_logprobs does", async () => {
    const replies: { prompt_logprobs?: unknown[]; topk_prompt_logprobs?: unknown[] }[] = [];
    const proxy = await startProxy(server.url, {
      rewriteJson: (_path, reply) => {
        if ((reply as { type?: string }).type === "sample") replies.push(reply as (typeof replies)[number]);
        return reply;
      },
    });
    const service = await TinkerService.connect({ baseUrl: proxy.url, heartbeatIntervalMs: 0 });
    const { client, table } = await forwardTable(service);
    // 20 is the most the server answers by default, and more than the tiny model's 16 tokens.
    const out = await (await client.saveWeightsForSampler()).topkPromptLogprobs(prompt, 20);
    expectTopk(out.topk, table, 20);
    for (const row of out.topk) expect(row).toHaveLength(TINY_MODEL.vocabSize);
    const [reply] = replies;
    expect(reply?.topk_prompt_logprobs).toHaveLength(prompt.length);
    expect(reply?.topk_prompt_logprobs?.[0]).toBeNull();
    expect(reply?.prompt_logprobs?.[0]).toBeNull();
    service.close();
    await proxy.close();
  });

  it("refuses a k past the server's maxTopkPromptLogprobs, naming the limit, before any work", async () => {
    const service = await TinkerService.connect({ baseUrl: server.url, heartbeatIntervalMs: 0 });
    const { client } = await forwardTable(service);
    const sampler = await client.saveWeightsForSampler();
    await expect(sampler.topkPromptLogprobs(prompt, 21)).rejects.toThrow(
      "asample: topk_prompt_logprobs: 21 is more than this server answers (at most 20, maxTopkPromptLogprobs)",
    );
    service.close();
  });
});
