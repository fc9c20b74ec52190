import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultPolicyLossConfig, type PolicyLossConfig } from "@envace/grpo";
import { SamplingParams } from "@envace/protocol";
import { defaultAdamParams, InProcessBackend, type Datum, type LossFn } from "@envace/training";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TinkerService, tinkerEnv } from "./client.js";
import type { TrainingClientOptions } from "./training-service.js";
import { TinkerLossError } from "./errors.js";
import { folderCheckpoints } from "./server/checkpoints.js";
import type { TinkerServer } from "./server/options.js";
import { startTinkerServer } from "./server/server.js";
import { rolloutDatum } from "./testing/rollout-datum.js";
import { TINY_MODEL } from "./testing/tiny-model.js";

const makeBackend = (seed: number) => InProcessBackend.create(TINY_MODEL, { seed });

/**
 * Every test trains two identical backends: one behind the server, driven by the client, and one
 * called directly. Whatever the client does over HTTP must leave them in the same state.
 */
let server: TinkerServer;
let service: TinkerService;
let seeds = 0;
let checkpointRoot: string;

beforeAll(async () => {
  checkpointRoot = await mkdtemp(join(tmpdir(), "tinker-client-"));
  server = await startTinkerServer({
    createBackend: ({ seed }) => makeBackend(seed ?? 0),
    checkpoints: folderCheckpoints(checkpointRoot, {
      save: (backend, dir) => {
        if (!(backend instanceof InProcessBackend)) throw new Error("expected the in-process backend");
        return backend.saveCheckpoint(dir);
      },
      load: (dir, { optimizer }) => InProcessBackend.load(dir, { optimizer }),
    }),
  });
  service = await TinkerService.connect({ baseUrl: server.url, apiKey: "tml-local", heartbeatIntervalMs: 0 });
});

afterAll(async () => {
  service.close();
  await server.close();
  await rm(checkpointRoot, { recursive: true, force: true });
});

async function pair(options: Partial<TrainingClientOptions> = {}) {
  const seed = ++seeds;
  const client = await service.createTrainingClient({ baseModel: "table", seed, loraRank: 0, ...options });
  return { client, direct: await makeBackend(seed) };
}

/** Three sequences: prompt positions (mask 0) then output positions with the row's advantage. */
function batch(): Datum[] {
  const rows = [
    { prompt: [1, 2, 3], output: [4, 5, 15], advantage: 0.5, sampler: [-2.1, -1.7, -2.6] },
    { prompt: [1, 2, 3], output: [6, 15], advantage: -0.5, sampler: [-3.6, -3.4] },
    { prompt: [7, 8], output: [9, 10, 11, 15], advantage: 1, sampler: [-2.2, -3.5, -2.8, -3.6] },
  ];
  return rows.map((row) => {
    const datum = rolloutDatum(row);
    return { ...datum, refLogprobs: datum.tokens.map((_, t) => -2 - 0.1 * t) };
  });
}

const grpo = (config: Partial<PolicyLossConfig> = {}): LossFn => ({ type: "grpo", config: { ...defaultPolicyLossConfig, ...config } });
const adam = { ...defaultAdamParams, learningRate: 0.05 };

function expectRowsClose(actual: number[][], expected: number[][], digits: number): void {
  expect(actual.map((row) => row.length)).toEqual(expected.map((row) => row.length));
  actual.forEach((row, i) => row.forEach((x, t) => expect(x).toBeCloseTo(expected[i]![t]!, digits)));
}

/** One step through the client and directly; the losses, log-probabilities and next weights agree. */
async function sameStep(options: Partial<TrainingClientOptions>, loss: LossFn, digits = 9): Promise<Record<string, number>> {
  const { client, direct } = await pair(options);
  const data = batch();
  const remote = await client.forwardBackward(data, loss);
  const local = await direct.forwardBackward(data, loss);
  expect(remote.loss).toBeCloseTo(local.loss, digits);
  expectRowsClose(remote.logprobs, local.logprobs, digits);
  await Promise.all([client.optimStep(adam), direct.optimStep(adam)]);
  expectRowsClose(await client.forward(data), await direct.forward(data), digits);
  return local.metrics;
}

describe("connecting", () => {
  it("opens a session and reads the server's losses", () => {
    expect(service.sessionId).toMatch(/^session-/);
    expect(service.clientConfig.envace_loss_fns).toEqual(["envace_grpo"]);
  });

  it("reads TINKER_BASE_URL and TINKER_API_KEY, defaulting to hosted Tinker", () => {
    expect(tinkerEnv({})).toEqual({ baseUrl: "https://tinker.thinkingmachines.dev/services/tinker-prod" });
    expect(tinkerEnv({ TINKER_BASE_URL: "http://gpu-box:8000", TINKER_API_KEY: "tml-x" })).toEqual({ baseUrl: "http://gpu-box:8000", apiKey: "tml-x" });
  });
});

describe("a training step through the client equals calling the backend directly", () => {
  it("SFT: cross_entropy over the output tokens", async () => {
    await sameStep({}, { type: "cross_entropy" });
  });

  it("GRPO with dual clip, sent unchanged to a server that implements it", async () => {
    const metrics = await sameStep({}, grpo({ klCoef: 0.05, entropyCoef: 0.01 }));
    expect(metrics["entropy:mean"]).toBeGreaterThan(0);
  });

  for (const aggregation of ["token-mean", "seq-mean-token-mean", "seq-sum"] as const) {
    it(`GRPO as Tinker's ppo with rescaled advantages (${aggregation})`, async () => {
      // The rescaled advantages travel as float32 (the protobuf wire's tensors, as the SDK's), so agreement is to float32 precision.
      const metrics = await sameStep({ useServerExtensions: false }, grpo({ dualClip: null, aggregation }), 5);
      // The batch is far enough off-policy that the clip binds, so the mapping of ε is exercised.
      expect(metrics["clip_fraction:mean"]).toBeGreaterThan(0);
    });
  }

  it("GRPO with dual clip and KL through the importance-sampling surrogate", async () => {
    const metrics = await sameStep({ useServerExtensions: false, lossStrategy: "surrogate" }, grpo({ dualClip: 1.05, klCoef: 0.1 }));
    expect(metrics["dual_clip_fraction:mean"]).toBeGreaterThan(0);
    expect(metrics["ref_kl:mean"]).toBeGreaterThan(0);
  });

  it("calls issued without awaiting each other run in call order", async () => {
    const { client, direct } = await pair();
    const data = batch();
    const [first, , second] = await Promise.all([
      client.forwardBackward(data, grpo()),
      client.optimStep(adam),
      client.forwardBackward(data, grpo()),
      client.optimStep(adam),
    ]);
    const expectedFirst = await direct.forwardBackward(data, grpo());
    await direct.optimStep(adam);
    const expectedSecond = await direct.forwardBackward(data, grpo());
    expect(first.loss).toBeCloseTo(expectedFirst.loss, 9);
    expect(second.loss).toBeCloseTo(expectedSecond.loss, 9);
    expect(second.loss).not.toBeCloseTo(first.loss, 6);
  });
});

describe("checkpoints", () => {
  it("resume in a new model: the next step matches the model that kept training", async () => {
    const { client } = await pair();
    await client.forwardBackward(batch(), { type: "cross_entropy" });
    await client.optimStep(adam);
    const path = await client.saveWeights("after-step-1");
    expect(path).toBe(`tinker://${client.modelId}/weights/after-step-1`);
    const resumed = await service.createTrainingClient({ baseModel: "tiny", seed: 999 });
    await resumed.loadWeights(path, { optimizer: true });
    const [kept, restored] = [await client.forwardBackward(batch(), grpo()), await resumed.forwardBackward(batch(), grpo())];
    expect(restored.loss).toBe(kept.loss);
    await Promise.all([client.optimStep(adam), resumed.optimStep(adam)]);
    expect(await resumed.forward(batch())).toEqual(await client.forward(batch()));
    await expect(resumed.loadWeights(path)).rejects.toThrow(/allowed only as a model's first request \(seq_id 1\), got seq_id 5/);
  });
});

describe("objectives the server cannot express", () => {
  it("are refused before anything is sent, and the client stays usable", async () => {
    const { client } = await pair({ useServerExtensions: false });
    await expect(client.forwardBackward(batch(), grpo())).rejects.toThrow(TinkerLossError);
    await expect(client.forwardBackward(batch(), grpo({ dualClip: null, entropyCoef: 0.01 }))).rejects.toThrow(/entropy bonus/);
    await expect(client.forwardBackward([], grpo())).rejects.toThrow("no datums: a request needs at least one");
    await expect(client.forward([{ ...batch()[0]!, mask: [1] }])).rejects.toThrow("datum 0: mask has 1 entries, tokens has 5");
    const ok = await client.forwardBackward(batch(), grpo({ dualClip: null }));
    expect(Number.isFinite(ok.loss)).toBe(true);
  });

  it("are dropped only when listed, with a warning", async () => {
    const warnings: string[] = [];
    const quiet = await TinkerService.connect({ baseUrl: server.url, heartbeatIntervalMs: 0, onWarning: (m) => warnings.push(m) });
    try {
      const client = await quiet.createTrainingClient({ baseModel: "table", useServerExtensions: false, dropUnsupportedTerms: ["dualClip"] });
      const direct = await makeBackend(0);
      const remote = await client.forwardBackward(batch(), grpo());
      expect(remote.loss).toBeCloseTo((await direct.forwardBackward(batch(), grpo({ dualClip: null }))).loss, 9);
      await client.forwardBackward(batch(), grpo());
      expect(warnings).toEqual([`model ${client.modelId}: training without dualClip (listed in dropUnsupportedTerms); the server cannot compute it`]);
    } finally {
      quiet.close();
    }
  });

  it("refuse a second forwardBackward before optimStep under the per-datum mean", async () => {
    // Unmeasured: this server sums, and a probe would refuse the configured per-datum mean.
    const { client } = await pair({ useServerExtensions: false, reduction: "datum-token-mean", calibrateReduction: false });
    await client.forwardBackward(batch(), { type: "importance_sampling" });
    await expect(client.forwardBackward(batch(), { type: "importance_sampling" })).rejects.toThrow(/send the whole batch in one call/);
    await client.optimStep(adam);
    await client.forwardBackward(batch(), { type: "importance_sampling" });
  });
});

describe("sampling", () => {
  const params = SamplingParams.parse({ maxTokens: 6, seed: 3 });

  it("samples tokens with their log-probabilities from ephemeral and named sampler weights", async () => {
    const { client, direct } = await pair();
    const ephemeral = await client.saveWeightsForSampler();
    expect(ephemeral.modelPath).toBeNull();
    const out = await ephemeral.sample([1, 2], params);
    const expected = await (await direct.saveWeightsForSampler()).sample([1, 2], params);
    expect({ tokens: out.tokens, finishReason: out.finishReason }).toEqual({ tokens: expected.tokens, finishReason: expected.finishReason });
    // Protobuf sample results carry float32 log-probabilities.
    expectRowsClose([out.logprobs], [expected.logprobs], 6);
    expect(out.logprobs).toHaveLength(out.tokens.length);
    const named = await client.saveWeightsForSampler("step-0");
    expect(named.modelPath).toBe(`tinker://${client.modelId}/sampler_weights/step-0`);
    const group = await named.sampleMany([1, 2], SamplingParams.parse({ maxTokens: 6 }), 4);
    expect(group).toHaveLength(4);
  });

  it("scores a prompt under the sampler's weights as a forward pass of the same weights does", async () => {
    const { client, direct } = await pair();
    const sampler = await client.saveWeightsForSampler();
    const prompt = [1, 2, 3, 4, 5];
    const scores = await sampler.promptLogprobs(prompt);
    const zeros = [0, 0, 0, 0];
    const [expected] = await direct.forward([
      { tokens: prompt.slice(0, -1), targetTokens: prompt.slice(1), logprobs: zeros, advantages: zeros, mask: [1, 1, 1, 1] },
    ]);
    expectRowsClose([scores], [expected!], 6);
  });

  it("checks names and stop settings before sending", async () => {
    const { client } = await pair({ stopTokenIds: [15] });
    await expect(client.saveWeightsForSampler("no spaces")).rejects.toThrow(/checkpoint name "no spaces": must contain only letters/);
    const sampler = await client.saveWeightsForSampler();
    await expect(sampler.sample([1], SamplingParams.parse({ stop: ["\n"] }))).rejects.toThrow(/stop strings or stop token ids, not both/);
  });
});

describe("authentication and heartbeats", () => {
  it("exchanges the API key for a JWT when the server asks, and keeps the session alive", async () => {
    const seen: { route: string; key: string | undefined }[] = [];
    // exp far in the future: the token is fetched once.
    const jwt = `e30.${Buffer.from(JSON.stringify({ exp: Date.now() / 1000 + 3600 })).toString("base64url")}.sig`;
    const replies: Record<string, unknown> = {
      "/api/v1/client/config": { pjwt_auth_enabled: true },
      "/api/v1/auth/token": { jwt },
      "/api/v1/create_session": { type: "create_session", session_id: "s-1" },
      "/api/v1/session_heartbeat": { type: "session_heartbeat" },
    };
    const fake = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push({ route: req.url!, key: req.headers["x-api-key"] as string | undefined });
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify(replies[req.url!] ?? {}));
      });
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    const connected = await TinkerService.connect({
      baseUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/`,
      apiKey: "tml-key",
      heartbeatIntervalMs: 10,
    });
    // Wait for two heartbeats rather than a fixed time: on a loaded machine 60 ms may hold none.
    const beating = (): number => seen.filter((s) => s.route === "/api/v1/session_heartbeat").length;
    for (let waited = 0; beating() < 2 && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    connected.close();
    await new Promise((resolve) => fake.close(resolve));
    expect(seen.slice(0, 3)).toEqual([
      { route: "/api/v1/client/config", key: "tml-key" },
      { route: "/api/v1/auth/token", key: "tml-key" },
      { route: "/api/v1/create_session", key: jwt },
    ]);
    const beats = seen.filter((s) => s.route === "/api/v1/session_heartbeat");
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats.every((b) => b.key === jwt)).toBe(true);
  });
});
