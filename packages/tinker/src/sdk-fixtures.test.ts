import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decompress } from "fzstd";
import { describe, expect, it } from "vitest";
import { toWireDatum } from "./datum.js";
import { decodeForwardBackwardRequest, encodeForwardBackwardRequest } from "./proto/codec.js";
import { startTinkerServer } from "./server/server.js";
import { sdkFixtureServerOptions } from "./testing/sdk-fixture-server.js";

/**
 * The exchanges of the real Tinker Python SDK (0.24.1 and 0.25.0) with this package's server, as
 * `fixtures/sdk/drive_sdk.py` made them (see `fixtures/sdk/README.md`).
 */
interface Exchange {
  method: string;
  path: string;
  request: { headers: Record<string, string>; json?: unknown; base64?: string };
  response: { status: number; headers: Record<string, string>; json?: unknown; base64?: string };
}

const FIXTURES = new URL("../fixtures/sdk/", import.meta.url);

function load(name: string): Exchange[] {
  return readFileSync(new URL(name, FIXTURES), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Exchange);
}

const RECORDINGS = [
  { name: "sdk-0.24.1.jsonl", version: "0.24.1", zstd: false },
  { name: "sdk-0.25.0.jsonl", version: "0.25.0", zstd: false },
  { name: "sdk-0.25.0-zstd.jsonl", version: "0.25.0", zstd: true },
];

/** The protobuf `forward_backward` bodies of a recording, decompressed where the SDK compressed them. */
function protobufBodies(exchanges: Exchange[]): Uint8Array[] {
  return exchanges
    .filter((x) => x.path === "/api/v1/forward_backward" && x.request.headers["content-type"] === "application/x-protobuf")
    .map((x) => {
      const raw = Buffer.from(x.request.base64!, "base64");
      return x.request.headers["content-encoding"] === "zstd" ? decompress(raw) : raw;
    });
}

// What drive_sdk.py sends: one SFT datum and one RL datum over tokens 1 2 3 4.
const TOKENS = [1, 2, 3, 4];
const TARGETS = [2, 3, 4, 5];
const WEIGHTS = [0, 1, 1, 1];
const SAMPLER_LOGPROBS = [0, -2.5, -2.75, -3];
const ADVANTAGES = [0, 1, 1, 1];

describe("recorded SDK requests", () => {
  it("were made by the versions they are named for, on the wire each version speaks", () => {
    for (const { name, version, zstd } of RECORDINGS) {
      const exchanges = load(name);
      expect(new Set(exchanges.map((x) => x.request.headers["x-stainless-package-version"]))).toEqual(new Set([version]));
      const bodies = exchanges
        .filter((x) => x.path === "/api/v1/forward_backward")
        .map((x) => [x.request.headers["content-type"], x.request.headers["content-encoding"]]);
      if (version === "0.24.1") expect(new Set(bodies.map(([type]) => type))).toEqual(new Set(["application/json"]));
      else expect(bodies.every(([type, encoding]) => type === "application/x-protobuf" && encoding === (zstd ? "zstd" : undefined))).toBe(true);
    }
  });

  it("decode to what the SDK was asked to send", () => {
    const bodies = protobufBodies(load("sdk-0.25.0.jsonl")).map(decodeForwardBackwardRequest);
    // drive_sdk.py: cross_entropy, ppo with clip thresholds, forward (forward_only), dro (refused), cross_entropy again; then forward on the resumed model.
    expect(
      bodies.map(({ body, forwardOnly }) => [
        (body as { seq_id: number }).seq_id,
        (body as { forward_backward_input: { loss_fn: string } }).forward_backward_input.loss_fn,
        forwardOnly,
      ]),
    ).toEqual([
      [1, "cross_entropy", false],
      [2, "ppo", false],
      [4, "cross_entropy", true],
      [5, "dro", false],
      [6, "cross_entropy", false],
      [2, "cross_entropy", true],
    ]);
    const ppo = bodies[1]!.body as {
      forward_backward_input: { loss_fn_config: Record<string, number>; data: { loss_fn_inputs: Record<string, { data: number[]; dtype: string }> }[] };
    };
    expect(ppo.forward_backward_input.loss_fn_config).toEqual({ clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
    const inputs = ppo.forward_backward_input.data[0]!.loss_fn_inputs;
    const plain = (t: { data: ArrayLike<number>; dtype: string }) => ({ ...t, data: Array.from(t.data) });
    expect(plain(inputs.target_tokens!)).toEqual({ data: TARGETS, dtype: "int64", shape: [4] });
    expect(plain(inputs.logprobs!)).toEqual({ data: SAMPLER_LOGPROBS, dtype: "float32", shape: [4] });
    expect(plain(inputs.advantages!)).toEqual({ data: ADVANTAGES, dtype: "float32", shape: [4] });
  });
});

/** Every order of `keys` (the SDK's protobuf runtime, upb, writes map entries in a per-process hash order). */
function orders(keys: readonly string[]): string[][] {
  if (keys.length <= 1) return [[...keys]];
  return keys.flatMap((key, i) => orders([...keys.slice(0, i), ...keys.slice(i + 1)]).map((rest) => [key, ...rest]));
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("the client's protobuf encoder", () => {
  it("writes the SDK's bytes, byte for byte, up to the order of map entries", () => {
    for (const { name, version } of RECORDINGS) {
      if (version !== "0.25.0") continue;
      const exchanges = load(name);
      const session = (exchanges.find((x) => x.path === "/api/v1/create_session")!.response.json as { session_id: string }).session_id;
      const model = `${session}:train:0`;
      const resumed = `${session}:train:1`;
      const sft = { target_tokens: TARGETS, weights: WEIGHTS };
      const rl = { target_tokens: TARGETS, logprobs: SAMPLER_LOGPROBS, advantages: ADVANTAGES };
      const requests = [
        { model_id: model, seq_id: 1, inputs: sft, loss_fn: "cross_entropy" },
        { model_id: model, seq_id: 2, inputs: rl, loss_fn: "ppo", loss_fn_config: { clip_low_threshold: 0.8, clip_high_threshold: 1.2 } },
        { model_id: model, seq_id: 4, inputs: sft, loss_fn: "cross_entropy", forward_only: true },
        { model_id: model, seq_id: 5, inputs: rl, loss_fn: "dro" },
        { model_id: model, seq_id: 6, inputs: sft, loss_fn: "cross_entropy" },
        { model_id: resumed, seq_id: 2, inputs: sft, loss_fn: "cross_entropy", forward_only: true },
      ];
      const bodies = protobufBodies(exchanges).map(hex);
      expect(bodies).toHaveLength(requests.length);
      requests.forEach(({ inputs, ...request }, i) => {
        const config = request.loss_fn_config ?? {};
        const candidates = orders(Object.keys(inputs)).flatMap((order) =>
          orders(Object.keys(config)).map((configOrder) => {
            const datum = toWireDatum(TOKENS, Object.fromEntries(order.map((key) => [key, inputs[key as keyof typeof inputs]])));
            const loss_fn_config = Object.fromEntries(configOrder.map((key) => [key, config[key as keyof typeof config]]));
            return hex(encodeForwardBackwardRequest({ ...request, loss_fn_config, data: [datum] }));
          }),
        );
        expect(candidates, `${name} request ${i}`).toContain(bodies[i]);
      });
    }
  });
});

/**
 * Answers that changed on purpose since the recording: the server took no `dro` then; now it does,
 * and refuses the recorded one (the SDK sent no `beta`, which Tinker's docs give no default).
 */
const SINCE_RECORDED = new Map([
  [
    JSON.stringify({
      error:
        'forward_backward: forward_backward_input.loss_fn: "dro" is not supported by this server (supported: cross_entropy, importance_sampling, ppo, envace_grpo)',
      category: "user",
    }),
    { error: "forward_backward: forward_backward_input.loss_fn_config: beta: Invalid input: expected number, received undefined", category: "user" },
  ],
]);

describe("the server against the recorded SDK requests", () => {
  for (const { name, zstd } of RECORDINGS) {
    it(`answers ${name} as it answered the SDK`, async () => {
      const root = await mkdtemp(join(tmpdir(), "tinker-replay-"));
      const exchanges = load(name);
      const session = (exchanges.find((x) => x.path === "/api/v1/create_session")!.response.json as { session_id: string }).session_id;
      // The same session id as recorded, so the recorded bodies (model ids included) apply as they are.
      const server = await startTinkerServer({ ...sdkFixtureServerOptions(root, { zstd }), longPollMs: 2_000, sessionIds: () => session });
      try {
        for (const x of exchanges) {
          const body =
            x.request.base64 !== undefined
              ? Buffer.from(x.request.base64, "base64")
              : x.request.json !== undefined
                ? JSON.stringify(x.request.json)
                : undefined;
          const headers = Object.fromEntries(Object.entries(x.request.headers).filter(([key]) => ["content-type", "content-encoding", "accept"].includes(key)));
          const response = await fetch(`${server.url}${x.path}`, { method: x.method, headers, ...(body !== undefined ? { body } : {}) });
          const label = `${x.method} ${x.path}`;
          expect(response.status, label).toBe(x.response.status);
          expect(response.headers.get("content-type"), label).toBe(x.response.headers["content-type"]);
          const reply = Buffer.from(await response.arrayBuffer());
          const recorded = x.response.json as { type?: string } | undefined;
          // Telemetry answers carry nothing; a poll that had to wait may or may not wait again.
          if (x.path === "/api/v1/telemetry" || recorded?.type === "try_again") continue;
          if (x.response.base64 !== undefined) expect(reply.toString("base64"), label).toBe(x.response.base64);
          else expect(JSON.parse(reply.toString("utf8")), label).toEqual(SINCE_RECORDED.get(JSON.stringify(recorded)) ?? recorded);
        }
      } finally {
        await server.close();
        await rm(root, { recursive: true, force: true });
      }
    }, 60_000);
  }
});
