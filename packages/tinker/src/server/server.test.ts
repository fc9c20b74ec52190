import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tableCheckpoints } from "../testing/sdk-fixture-server.js";
import { TableBackend } from "../testing/table-backend.js";
import type { TinkerServer } from "./options.js";
import { startTinkerServer } from "./server.js";

/** Raw JSON over HTTP, as any client would send it. */
async function call(server: TinkerServer, route: string, body?: unknown, init: { method?: string; headers?: Record<string, string>; raw?: string } = {}) {
  const response = await fetch(`${server.url}/api/v1/${route}`, {
    method: init.method ?? (body === undefined && init.raw === undefined ? "GET" : "POST"),
    headers: { "Content-Type": "application/json", ...init.headers },
    ...(init.raw !== undefined ? { body: init.raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Poll a future until it settles. */
async function settle(server: TinkerServer, requestId: unknown): Promise<Record<string, unknown>> {
  for (;;) {
    const { status, body } = await call(server, "retrieve_future", { request_id: requestId });
    expect(status).toBe(200);
    if (body.type !== "try_again") return body;
  }
}

/** A sequenced request that is addressed but invalid is accepted, and its future fails at once with the reason. */
async function refused(server: TinkerServer, reply: { status: number; body: Record<string, unknown> }): Promise<unknown> {
  expect(reply.status).toBe(200);
  const out = await settle(server, reply.body.request_id);
  expect(out.category).toBe("user");
  return out.error;
}

const tensor = (data: number[], dtype = "float32") => ({ data, dtype, shape: [data.length] });
/** A datum for "predict 2 after 1, then 3 after 2", with the prompt position carrying no advantage. */
const datum = {
  model_input: { chunks: [{ type: "encoded_text", tokens: [1, 2] }] },
  loss_fn_inputs: { target_tokens: tensor([2, 3], "int64"), logprobs: tensor([0, -1.5]), advantages: tensor([0, 1]) },
};

async function session(server: TinkerServer): Promise<string> {
  const { body } = await call(server, "create_session", { tags: [], sdk_version: "0.24.1", type: "create_session" });
  return body.session_id as string;
}

async function model(server: TinkerServer, sessionId: string, seq = 0): Promise<string> {
  const { body } = await call(server, "create_model", { session_id: sessionId, model_seq_id: seq, base_model: "table", lora_config: { rank: 0 } });
  expect(await settle(server, body.request_id)).toEqual({ model_id: body.model_id, type: "create_model" });
  return body.model_id as string;
}

const backends: TableBackend[] = [];
let server: TinkerServer;
let sessionId: string;
let models = 0;

/** A new model on the shared server, so each test numbers its requests from seq_id 1. */
function freshModel(): Promise<string> {
  return model(server, sessionId, models++);
}

beforeAll(async () => {
  server = await startTinkerServer({
    createBackend: () => {
      const backend = new TableBackend(8, backends.length, { eos: 7 });
      backends.push(backend);
      return backend;
    },
    baseModels: ["table"],
    seqGapTimeoutMs: 300,
    maxWaitingPerModel: 16,
  });
  sessionId = await session(server);
});

afterAll(async () => {
  await server.close();
});

describe("routes and validation", () => {
  it("answers health, capabilities and client config (with the GRPO extension)", async () => {
    expect(await call(server, "healthz")).toEqual({ status: 200, body: { status: "ok" } });
    expect((await call(server, "get_server_capabilities")).body).toEqual({ supported_models: [{ model_name: "table" }] });
    expect((await call(server, "client/config", { sdk_version: "0.24.1" })).body).toEqual({
      pjwt_auth_enabled: false,
      use_pyqwest_transport: false,
      envace_loss_fns: ["envace_grpo"],
      envace_loss_reduction: "sum",
    });
  });

  it("names unknown routes, wrong methods, non-JSON bodies and wrong content types", async () => {
    expect(await call(server, "nope", {})).toEqual({ status: 404, body: { detail: "no route POST /api/v1/nope", code: "not_found" } });
    expect((await call(server, "forward_backward", undefined, { method: "GET" })).body.detail).toBe("/api/v1/forward_backward takes POST, not GET");
    expect(await call(server, "optim_step", undefined, { raw: "{oops" })).toMatchObject({ status: 400, body: { code: "invalid_json" } });
    expect((await call(server, "optim_step", undefined, { raw: "x", headers: { "Content-Type": "text/plain" } })).status).toBe(415);
  });

  it("names the field of a malformed request", async () => {
    const modelId = await freshModel();
    const bad = await call(server, "forward_backward", {
      model_id: modelId,
      seq_id: 1,
      forward_backward_input: { loss_fn: "ppo", data: [{ model_input: { chunks: [] } }] },
    });
    expect(await refused(server, bad)).toBe(
      "forward_backward: forward_backward_input.data[0].loss_fn_inputs: Invalid input: expected record, received undefined",
    );
  });

  it("names per-token tensors that do not match the tokens", async () => {
    const modelId = await freshModel();
    const short = { ...datum, loss_fn_inputs: { ...datum.loss_fn_inputs, advantages: tensor([1]) } };
    const bad = await call(server, "forward_backward", {
      model_id: modelId,
      seq_id: 1,
      forward_backward_input: { loss_fn: "importance_sampling", data: [datum, short] },
    });
    expect(await refused(server, bad)).toBe(
      "forward_backward: forward_backward_input.data[1].loss_fn_inputs.advantages: has 1 entries, model_input has 2 tokens",
    );
  });

  it("lists the losses it supports and checks their config keys", async () => {
    const modelId = await freshModel();
    const gspo = await call(server, "forward_backward", { model_id: modelId, seq_id: 1, forward_backward_input: { loss_fn: "gspo", data: [datum] } });
    expect(await refused(server, gspo)).toBe(
      'forward_backward: forward_backward_input.loss_fn: "gspo" is not supported by this server (supported: cross_entropy, importance_sampling, ppo, cispo, dro, envace_grpo)',
    );
    const key = await call(server, "forward_backward", {
      model_id: modelId,
      seq_id: 2,
      forward_backward_input: { loss_fn: "ppo", loss_fn_config: { clip_ratio: 0.2 }, data: [datum] },
    });
    expect(await refused(server, key)).toMatch(/^forward_backward: forward_backward_input\.loss_fn_config: .*clip_ratio/);
    const ce = await call(server, "forward_backward", { model_id: modelId, seq_id: 3, forward_backward_input: { loss_fn: "cross_entropy", data: [datum] } });
    expect(await refused(server, ce)).toBe("forward_backward: forward_backward_input.data[0].loss_fn_inputs: cross_entropy requires weights");
    const image = await call(server, "forward", {
      model_id: modelId,
      seq_id: 4,
      forward_input: { loss_fn: "cross_entropy", data: [{ ...datum, model_input: { chunks: [{ type: "image", data: "", format: "png" }] } }] },
    });
    expect(await refused(server, image)).toBe('forward: forward_input.data[0].model_input.chunks[0]: chunk type "image" is not supported (text only)');
  });

  it("computes cispo and dro on the learner's log-probabilities, and asks dro for its beta", async () => {
    const modelId = await freshModel();
    const fwd = await settle(
      server,
      (
        await call(server, "forward", {
          model_id: modelId,
          seq_id: 1,
          forward_input: { loss_fn: "cross_entropy", data: [{ ...datum, loss_fn_inputs: { ...datum.loss_fn_inputs, weights: tensor([1, 1]) } }] },
        })
      ).body.request_id,
    );
    const lp = (fwd.loss_fn_outputs as { logprobs: { data: number[] } }[])[0]!.logprobs.data;
    const sampler = [0, -1.5];
    const advantages = [0, 1];
    // Hand-written from Tinker's definitions, on the learner's log-probabilities from forward.
    const weight = (t: number) => Math.min(4, Math.max(0, Math.exp(lp[t]! - sampler[t]!)));
    const cispo = -[0, 1].reduce((sum, t) => sum + weight(t) * lp[t]! * advantages[t]!, 0);
    const dro = -[0, 1].reduce((sum, t) => sum + lp[t]! * advantages[t]! - 0.5 * 0.1 * (lp[t]! - sampler[t]!) ** 2, 0);
    const lossOf = async (seq: number, loss_fn: string, loss_fn_config?: Record<string, number>) => {
      const out = await settle(
        server,
        (
          await call(server, "forward_backward", {
            model_id: modelId,
            seq_id: seq,
            forward_backward_input: { loss_fn, ...(loss_fn_config ? { loss_fn_config } : {}), data: [datum] },
          })
        ).body.request_id,
      );
      return (out.metrics as Record<string, number>)["loss:sum"];
    };
    expect(await lossOf(2, "cispo")).toBeCloseTo(cispo, 6);
    expect(await lossOf(3, "dro", { beta: 0.1 })).toBeCloseTo(dro, 6);
    const noBeta = await call(server, "forward_backward", { model_id: modelId, seq_id: 4, forward_backward_input: { loss_fn: "dro", data: [datum] } });
    expect(await refused(server, noBeta)).toBe(
      "forward_backward: forward_backward_input.loss_fn_config: beta: Invalid input: expected number, received undefined",
    );
  });

  it("names unknown models, sessions, futures and samplers", async () => {
    expect((await call(server, "optim_step", { model_id: "m?", seq_id: 1, adam_params: {} })).body).toEqual({
      detail: 'unknown model_id "m?"',
      code: "not_found",
    });
    expect((await call(server, "session_heartbeat", { session_id: "s?" })).status).toBe(404);
    expect((await call(server, "retrieve_future", { request_id: "req-999999" })).body.detail).toBe('retrieve_future: unknown request_id "req-999999"');
    expect((await call(server, "samplers/none")).status).toBe(404);
  });

  it("refuses load_weights after the first request, and save_weights without a checkpoint store", async () => {
    const modelId = await freshModel();
    const load = await call(server, "load_weights", { model_id: modelId, seq_id: 2, path: "tinker://x/weights/a", optimizer: true });
    expect(await refused(server, load)).toBe("load_weights: load_weights is allowed only as a model's first request (seq_id 1), got seq_id 2");
    const save = await call(server, "save_weights", { model_id: modelId, seq_id: 3, path: "a" });
    expect(await refused(server, save)).toBe("save_weights: this server has no checkpoint store (start it with the checkpoints option)");
  });
});

describe("sequencing", () => {
  it("runs a model's requests in seq_id order whatever their arrival order", async () => {
    const id = await freshModel();
    const backend = backends.at(-1)!;
    const fb = (seq: number) =>
      call(server, "forward_backward", { model_id: id, seq_id: seq, forward_backward_input: { loss_fn: "importance_sampling", data: [datum] } });
    const step = (seq: number) => call(server, "optim_step", { model_id: id, seq_id: seq, adam_params: { learning_rate: 0.1 } });
    const third = await fb(3);
    const second = await step(2);
    const first = await fb(1);
    const results = await Promise.all([first, second, third].map((r) => settle(server, r.body.request_id)));
    expect(backend.calls).toEqual(["forwardBackward:importance_sampling", "optimStep", "forwardBackward:importance_sampling"]);
    // The second forward pass ran after the optimizer step, so it saw new weights.
    const lp = (r: Record<string, unknown>) => (r.loss_fn_outputs as { logprobs: { data: number[] } }[])[0]!.logprobs.data[1];
    expect(lp(results[2]!)).not.toBe(lp(results[0]!));
    expect((results[1]!.metrics as Record<string, number>)["grad_norm:mean"]).toBeGreaterThan(0);
  });

  it("answers a repeated request with the same future and a different one with 409", async () => {
    const modelId = await freshModel();
    const body = { model_id: modelId, seq_id: 1, adam_params: {} };
    const once = await call(server, "optim_step", body);
    const again = await call(server, "optim_step", body);
    expect(again.body.request_id).toBe(once.body.request_id);
    const other = await call(server, "optim_step", { ...body, adam_params: { learning_rate: 1 } });
    expect(other).toEqual({
      status: 409,
      body: { detail: `optim_step: seq_id 1 of model ${modelId} was already used by a different request`, code: "seq_conflict" },
    });
    const ahead = await call(server, "optim_step", { ...body, seq_id: 2 });
    await settle(server, ahead.body.request_id);
    const past = await call(server, "optim_step", { ...body, seq_id: 2, adam_params: { learning_rate: 2 } });
    expect(past.body.detail).toMatch(/seq_id 2 of model .* was already used by a different request/);
    await settle(server, once.body.request_id);
  });

  it("refuses a seq_id too far ahead, and fails one whose predecessor never comes", async () => {
    const modelId = await freshModel();
    const far = await call(server, "optim_step", { model_id: modelId, seq_id: 17, adam_params: {} });
    expect(far.body.detail).toBe(`optim_step: seq_id 17 of model ${modelId} is too far ahead: the next expected is 1, and at most 16 requests may wait`);
    const orphan = await call(server, "optim_step", { model_id: modelId, seq_id: 2, adam_params: {} });
    expect(await settle(server, orphan.body.request_id)).toEqual({
      error: `optim_step: seq_id 2 of model ${modelId} waited 300 ms for seq_id 1, which never arrived`,
      category: "user",
    });
    // Once the gap fills, the queue moves past the failed request.
    const late = await call(server, "optim_step", { model_id: modelId, seq_id: 1, adam_params: {} });
    const next = await call(server, "optim_step", { model_id: modelId, seq_id: 3, adam_params: {} });
    expect(await settle(server, late.body.request_id)).toMatchObject({ type: "optim_step" });
    expect(await settle(server, next.body.request_id)).toMatchObject({ type: "optim_step" });
  });

  it("unloads a model: waiting requests fail, later ones name the unknown model", async () => {
    const modelId = await freshModel();
    expect((await call(server, "get_info", { model_id: modelId })).body).toMatchObject({ model_id: modelId, model_name: "table", lora_rank: 0 });
    const waiting = await call(server, "optim_step", { model_id: modelId, seq_id: 2, adam_params: {} });
    const unloaded = await call(server, "unload_model", { model_id: modelId });
    expect(await settle(server, unloaded.body.request_id)).toEqual({ model_id: modelId, type: "unload_model" });
    expect(await settle(server, waiting.body.request_id)).toEqual({ error: `optim_step: model ${modelId} was unloaded`, category: "user" });
    expect((await call(server, "optim_step", { model_id: modelId, seq_id: 1, adam_params: {} })).body.detail).toBe(`unknown model_id "${modelId}"`);
  });

  it("fails a future when the backend refuses the input (category user), and keeps serving", async () => {
    const modelId = await freshModel();
    const outside = { ...datum, model_input: { chunks: [{ type: "encoded_text", tokens: [1, 50] }] } };
    const bad = await call(server, "forward", { model_id: modelId, seq_id: 1, forward_input: { loss_fn: "importance_sampling", data: [outside] } });
    expect(await settle(server, bad.body.request_id)).toEqual({ error: "forward: token 50 is outside the vocabulary (size 8)", category: "user" });
    const good = await call(server, "forward", { model_id: modelId, seq_id: 2, forward_input: { loss_fn: "importance_sampling", data: [datum] } });
    expect((await settle(server, good.body.request_id)).loss_fn_outputs).toHaveLength(1);
  });
});

describe("long polls and sampling", () => {
  it("answers try_again while a slow request runs, then the result", async () => {
    const slow = await startTinkerServer({ backend: new TableBackend(8, 1, { delayMs: 150 }), longPollMs: 20 });
    try {
      const sid = await session(slow);
      const { body } = await call(slow, "create_model", { session_id: sid, model_seq_id: 0, base_model: "any" });
      await settle(slow, body.request_id);
      const second = await call(slow, "create_model", { session_id: sid, model_seq_id: 1, base_model: "any" });
      expect(second.body.detail).toBe(`create_model: this server serves one model at a time; unload ${sid}:train:0 first`);
      const step = await call(slow, "optim_step", { model_id: body.model_id, seq_id: 1, adam_params: {} });
      const poll = await call(slow, "retrieve_future", { request_id: step.body.request_id });
      expect(poll.body).toEqual({ type: "try_again", request_id: step.body.request_id, queue_state: "active" });
      expect(await settle(slow, step.body.request_id)).toMatchObject({ type: "optim_step" });
    } finally {
      await slow.close();
    }
  });

  it("samples from saved sampler weights, by session and by path", async () => {
    const modelId = await freshModel();
    const saved = await call(server, "save_weights_for_sampler", { model_id: modelId, seq_id: 1, path: "step-1" });
    const path = `tinker://${modelId}/sampler_weights/step-1`;
    expect(await settle(server, saved.body.request_id)).toEqual({ path, sampling_session_id: null, type: "save_weights_for_sampler" });
    const sid = modelId.split(":")[0]!;
    const created = await call(server, "create_sampling_session", { session_id: sid, sampling_session_seq_id: 0, model_path: path });
    const samplingSession = created.body.sampling_session_id as string;
    expect((await call(server, `samplers/${encodeURIComponent(samplingSession)}`)).body).toEqual({
      sampler_id: samplingSession,
      base_model: "table",
      model_path: path,
    });
    const request = {
      sampling_session_id: samplingSession,
      seq_id: 0,
      num_samples: 3,
      prompt: { chunks: [{ type: "encoded_text", tokens: [1] }] },
      sampling_params: { max_tokens: 4, seed: 5 },
    };
    const out = await settle(server, (await call(server, "asample", request)).body.request_id);
    const sequences = out.sequences as { tokens: number[]; logprobs: number[]; stop_reason: string }[];
    expect(sequences).toHaveLength(3);
    for (const s of sequences) {
      expect(s.logprobs).toHaveLength(s.tokens.length);
      expect(s.stop_reason === "stop" ? s.tokens.at(-1) === 7 : s.tokens.length === 4).toBe(true);
    }
    const again = await settle(server, (await call(server, "asample", request)).body.request_id);
    expect(again.sequences).toEqual(sequences);
    const byPath = await call(server, "asample", { ...request, sampling_session_id: undefined, model_path: path });
    expect(byPath.status).toBe(200);
    // A stop token id ends a sequence right after its first occurrence, with reason "stop".
    const first = sequences[0]!;
    const stopAt = first.tokens[1] ?? first.tokens[0]!;
    const cut = first.tokens.indexOf(stopAt) + 1;
    const stopped = await settle(
      server,
      (await call(server, "asample", { ...request, num_samples: 1, sampling_params: { max_tokens: 4, seed: 5, stop: [stopAt] } })).body.request_id,
    );
    expect(stopped.sequences).toEqual([{ stop_reason: "stop", tokens: first.tokens.slice(0, cut), logprobs: first.logprobs.slice(0, cut) }]);
    // The table backend's sampler cannot score prompts: a clear refusal the SDK does not retry.
    const scored = await fetch(`${server.url}/api/v1/asample`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...request, prompt_logprobs: true }),
    });
    expect(scored.status).toBe(400);
    expect(scored.headers.get("x-should-retry")).toBe("false");
    expect(((await scored.json()) as { detail: string }).detail).toBe("asample: prompt_logprobs: this server's sampler cannot score prompts");
    const ranked = await fetch(`${server.url}/api/v1/asample`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...request, topk_prompt_logprobs: 2 }),
    });
    expect(ranked.status).toBe(400);
    expect(((await ranked.json()) as { detail: string }).detail).toBe("asample: topk_prompt_logprobs: this server's sampler cannot rank prompt tokens");
  });

  it("requires the API key when it has one", async () => {
    const locked = await startTinkerServer({ backend: new TableBackend(4, 0), apiKey: "tml-secret" });
    try {
      expect((await call(locked, "healthz")).status).toBe(200);
      expect((await call(locked, "create_session", {})).body).toEqual({ detail: "missing or wrong X-API-Key", code: "unauthorized" });
      expect((await call(locked, "create_session", {}, { headers: { "X-API-Key": "tml-secret" } })).status).toBe(200);
    } finally {
      await locked.close();
    }
  });

  it("refuses a body over the size limit", async () => {
    const small = await startTinkerServer({ backend: new TableBackend(4, 0), maxBodyBytes: 64 });
    try {
      const big = await call(small, "create_session", { tags: ["x".repeat(100)] });
      expect(big).toEqual({ status: 413, body: { detail: "create_session: body is larger than 64 bytes", code: "too_large" } });
    } finally {
      await small.close();
    }
  });
});

describe("checkpoints", () => {
  it("saves to a folder per model and name, and loads into a new model as its first request", async () => {
    const root = await mkdtemp(join(tmpdir(), "tinker-checkpoints-"));
    const store = tableCheckpoints(root);
    let seed = 0;
    const saving = await startTinkerServer({ createBackend: () => new TableBackend(8, ++seed), checkpoints: store });
    try {
      const sid = await session(saving);
      const first = await model(saving, sid, 0);
      const logprobs = async (id: string, seq: number) => {
        const r = await call(saving, "forward", { model_id: id, seq_id: seq, forward_input: { loss_fn: "importance_sampling", data: [datum] } });
        return ((await settle(saving, r.body.request_id)).loss_fn_outputs as { logprobs: { data: number[] } }[])[0]!.logprobs.data;
      };
      const before = await logprobs(first, 1);
      const saved = await call(saving, "save_weights", { model_id: first, seq_id: 2, path: "ckpt-1" });
      const path = `tinker://${first}/weights/ckpt-1`;
      expect(await settle(saving, saved.body.request_id)).toEqual({ path, type: "save_weights" });
      expect(JSON.parse(await readFile(join(root, first.replaceAll(":", "_"), "ckpt-1", "weights.json"), "utf8"))).toHaveLength(64);

      // A second model starts from other weights until it loads the checkpoint.
      const second = await model(saving, sid, 1);
      const loaded = await call(saving, "load_weights", { model_id: second, seq_id: 1, path, optimizer: true });
      expect(await settle(saving, loaded.body.request_id)).toEqual({ path, model_id: second, type: "load_weights" });
      expect(await logprobs(second, 2)).toEqual(before);

      const bad = await call(saving, "load_weights", { model_id: await model(saving, sid, 2), seq_id: 1, path: "s3://elsewhere" });
      expect(await refused(saving, bad)).toBe('load_weights: path: "s3://elsewhere" is not a tinker://<model>/weights/<name> path');
      const missing = await call(saving, "load_weights", { model_id: await model(saving, sid, 3), seq_id: 1, path: `tinker://${first}/weights/none` });
      // The reason names the checkpoint by its tinker:// path, never by the server's files.
      expect(await settle(saving, missing.body.request_id)).toEqual({
        error: `load_weights: no checkpoint tinker://${first}/weights/none on this server`,
        category: "user",
      });
    } finally {
      await saving.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
