import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { Sampler } from "@envace/protocol";
import { defaultAdamParams, InProcessBackend, type Datum, type ForwardBackwardResult, type TrainingBackend } from "@envace/training";
import { defaultPolicyLossConfig } from "@envace/grpo";
import { TinkerService } from "./client.js";
import { toWireDatum } from "./datum.js";
import { decodeForwardBackwardRequest, encodeForwardBackwardRequest } from "./proto/codec.js";
import { referenceDecodeForwardBackwardRequest, referenceEncodeForwardBackwardRequest } from "./proto/reference.js";
import { createHash } from "node:crypto";
import { datumsOf, fingerprint, lossOf, parseBody } from "./server/requests.js";
import { startTinkerServer } from "./server/server.js";
import { ForwardBackwardRequest } from "./wire.js";

// What the protocol costs: one GRPO training step (forward_backward + optim_step) called directly
// and through the client and a loopback server, in the same run. First with a backend that does
// no work (the pure cost of JSON, HTTP and futures), then with the in-process tiny model.

const ROWS = 16;
const LENGTH = 128;
const STEPS = 10;
const WARMUP = 3;

function batch(vocab: number): Datum[] {
  return Array.from({ length: ROWS }, (_, r) => {
    const tokens = Array.from({ length: LENGTH }, (_, t) => (r * 31 + t * 7) % vocab);
    const mask = tokens.map((_, t) => (t >= LENGTH / 4 ? 1 : 0));
    return {
      tokens,
      targetTokens: tokens.map((_, t) => (r * 31 + (t + 1) * 7) % vocab),
      logprobs: mask.map((m) => -m * Math.log(vocab)),
      advantages: mask.map((m) => m * (r % 2 ? 0.5 : -0.5)),
      mask,
    };
  });
}

/** Answers instantly with zeros: what is left is the protocol. */
class NoWorkBackend implements TrainingBackend {
  forwardBackward(data: Datum[]): Promise<ForwardBackwardResult> {
    return Promise.resolve({ logprobs: data.map((d) => d.tokens.map(() => -1)), loss: 0, metrics: {} });
  }
  forward(data: Datum[]): Promise<number[][]> {
    return Promise.resolve(data.map((d) => d.tokens.map(() => -1)));
  }
  optimStep(): Promise<Record<string, number>> {
    return Promise.resolve({});
  }
  saveWeightsForSampler(): Promise<Sampler> {
    return Promise.reject(new Error("not used here"));
  }
}

async function perStep(backend: TrainingBackend, data: Datum[]): Promise<number> {
  const loss = { type: "grpo" as const, config: defaultPolicyLossConfig };
  for (let i = 0; i < WARMUP; i++) {
    await backend.forwardBackward(data, loss);
    await backend.optimStep(defaultAdamParams);
  }
  const start = performance.now();
  for (let i = 0; i < STEPS; i++) {
    await backend.forwardBackward(data, loss);
    await backend.optimStep(defaultAdamParams);
  }
  return (performance.now() - start) / STEPS;
}

/** Direct and remote alternately, twice each; the faster run of each counts (the machine is shared). */
async function compare(label: string, make: () => Promise<TrainingBackend>, vocab: number): Promise<void> {
  const data = batch(vocab);
  const server = await startTinkerServer({ createBackend: make });
  const service = await TinkerService.connect({ baseUrl: server.url, heartbeatIntervalMs: 0 });
  try {
    const direct: number[] = [];
    const remote: number[] = [];
    for (let round = 0; round < 2; round++) {
      direct.push(await perStep(await make(), data));
      remote.push(await perStep(await service.createTrainingClient({ baseModel: "bench", calibrateReduction: false }), data));
    }
    const d = Math.min(...direct);
    const r = Math.min(...remote);
    console.log(
      `${label.padEnd(38)} direct ${d.toFixed(1).padStart(7)} ms/step   via HTTP ${r.toFixed(1).padStart(7)} ms/step   ` +
        `difference ${(r - d).toFixed(1)} ms (runs: direct ${direct.map((x) => x.toFixed(1)).join(", ")}; HTTP ${remote.map((x) => x.toFixed(1)).join(", ")})`,
    );
  } finally {
    service.close();
    await server.close();
  }
}

/** One importance_sampling forward_backward body of the batch, as JSON (SDK ≤ 0.24) and as protobuf (0.25): size and encode/decode time. */
function wireCost(): void {
  const data = batch(256).map((d) => toWireDatum(d.tokens, { target_tokens: d.targetTokens, logprobs: d.logprobs, advantages: d.advantages }));
  const body = { model_id: "bench", seq_id: 1, data, loss_fn: "importance_sampling" };
  const time = (run: () => unknown) => {
    for (let i = 0; i < 5; i++) run();
    const start = performance.now();
    for (let i = 0; i < 50; i++) run();
    return (performance.now() - start) / 50;
  };
  const json = JSON.stringify({ model_id: "bench", seq_id: 1, forward_backward_input: { data, loss_fn: "importance_sampling" } });
  const proto = encodeForwardBackwardRequest(body);
  console.log(
    `forward_backward body: JSON ${(json.length / 1024).toFixed(0)} KiB (encode ${time(() => JSON.stringify(body)).toFixed(2)} ms, decode ${time(() => JSON.parse(json)).toFixed(2)} ms); ` +
      `protobuf ${(proto.length / 1024).toFixed(0)} KiB (encode ${time(() => encodeForwardBackwardRequest(body)).toFixed(2)} ms, decode ${time(() => decodeForwardBackwardRequest(proto)).toFixed(2)} ms)`,
  );
}

/**
 * The paper's batch: 16 tasks × 4 rollouts of 20 480 tokens (1.3 M tokens) in one importance-sampling
 * forward_backward, side by side: JSON (the SDK ≤ 0.24 wire), protobuf through protobufjs's generic
 * writer (this package before the packed writer), protobuf as written now, and — where
 * TINKER_SDK_PYTHON names an interpreter with the `tinker` package — the Python SDK's own request
 * building for the same datums. Each time is the best of 3 (the machine is shared).
 */
function scaleWireCost(): void {
  const rows = 64;
  const length = 20_480;
  const vocab = 151_936;
  const data = Array.from({ length: rows }, (_, r) => {
    const prompt = length / 4;
    const at = (t: number) => (t < prompt ? 0 : 1);
    return {
      tokens: Array.from({ length }, (_, t) => (r * 31 + t * 7) % vocab),
      targets: Array.from({ length }, (_, t) => (r * 31 + (t + 1) * 7) % vocab),
      logprobs: Array.from({ length }, (_, t) => (at(t) ? -(((r * 1000003 + t * 7919) % 100000) / 20000) : 0)),
      advantages: Array.from({ length }, (_, t) => at(t) * (r % 2 ? 0.5 : -0.5)),
    };
  });
  // The fastest of seven runs, the first a warm-up like any other: each path gets the same chances
  // to be compiled and to miss a collection.
  const best = <T>(run: () => T): [T, number] => {
    let out: T | undefined;
    let fastest = Infinity;
    for (let i = 0; i < 7; i++) {
      const start = performance.now();
      out = run();
      fastest = Math.min(fastest, performance.now() - start);
    }
    return [out!, fastest];
  };
  const [wire, wireMs] = best(() => data.map((d) => toWireDatum(d.tokens, { target_tokens: d.targets, logprobs: d.logprobs, advantages: d.advantages })));
  const body = { model_id: "bench", seq_id: 1, data: wire, loss_fn: "importance_sampling" };
  const [json, jsonEncode] = best(() =>
    JSON.stringify({ model_id: "bench", seq_id: 1, forward_backward_input: { data: wire, loss_fn: "importance_sampling" }, type: "forward_backward" }),
  );
  const [, jsonDecode] = best(() => JSON.parse(json) as unknown);
  const [before, beforeEncode] = best(() => referenceEncodeForwardBackwardRequest(body));
  const [, beforeDecode] = best(() => referenceDecodeForwardBackwardRequest(before));
  const [after, afterEncode] = best(() => encodeForwardBackwardRequest(body));
  const [, afterDecode] = best(() => decodeForwardBackwardRequest(after));
  const [, numberDecode] = best(() => asNumberArrays(decodeForwardBackwardRequest(after).body));
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  const json_ = jsonEncode + jsonDecode;
  const row = (label: string, size: number, encode: number, decode: number) =>
    console.log(
      `  ${label.padEnd(46)} ${mb(size).padStart(9)}  encode ${encode.toFixed(0).padStart(5)} ms  decode ${decode.toFixed(0).padStart(5)} ms  ` +
        `both ${(encode + decode).toFixed(0).padStart(5)} ms  (JSON / this: ${(json_ / (encode + decode)).toFixed(1)}×)`,
    );
  console.log(
    `forward_backward of ${rows} datums × ${length} tokens (${((rows * length) / 1e6).toFixed(2)} M tokens); building the wire datums: ${wireMs.toFixed(0)} ms`,
  );
  row("JSON (SDK ≤ 0.24 wire)", Buffer.byteLength(json), jsonEncode, jsonDecode);
  row("protobuf, protobufjs writer and reader", before.length, beforeEncode, beforeDecode);
  row("protobuf, packed, decoded to number[] (before)", after.length, afterEncode, numberDecode);
  row("protobuf, packed, typed arrays (now)", after.length, afterEncode, afterDecode);
  // What the server does with the body before its backend sees it: decode, fingerprint (for retries), validate, make Datums.
  const serve = (decoded: unknown, print: (b: unknown) => string) => {
    print(decoded);
    const input = parseBody(ForwardBackwardRequest, decoded, "forward_backward").forward_backward_input;
    return datumsOf(input, lossOf(input, "forward_backward_input"), "forward_backward_input");
  };
  const [, jsonServe] = best(() => serve(JSON.parse(json) as unknown, fingerprint));
  const [, beforeServe] = best(() => serve(asNumberArrays(decodeForwardBackwardRequest(after).body), jsonFingerprint));
  const [, afterServe] = best(() => serve(decodeForwardBackwardRequest(after).body, fingerprint));
  console.log(
    `  body to the backend's Datum[] on the server (decode, fingerprint, validate, Datums): JSON ${jsonServe.toFixed(0)} ms; ` +
      `protobuf before ${beforeServe.toFixed(0)} ms, now ${afterServe.toFixed(0)} ms (JSON / now: ${(jsonServe / afterServe).toFixed(1)}×)`,
  );
  const python = process.env.TINKER_SDK_PYTHON;
  const script = fileURLToPath(new URL("../bench/sdk_request_build.py", import.meta.url));
  if (!python || !existsSync(python)) {
    console.log("  Python SDK: not measured (set TINKER_SDK_PYTHON to an interpreter with the tinker package)");
    return;
  }
  const sdk = JSON.parse(execFileSync(python, [script, String(rows), String(length), String(vocab)], { encoding: "utf8", maxBuffer: 1 << 20 })) as Record<
    string,
    number
  >;
  console.log(
    `  Python SDK ${execFileSync(python, ["-c", "import tinker; print(tinker.__version__)"], { encoding: "utf8" }).trim()}: Datum objects from lists ${sdk.datums_ms!.toFixed(0)} ms; ` +
      `request to protobuf bytes ${sdk.build_ms!.toFixed(0)} ms (${mb(sdk.bytes!)}); zstd (level 3, as the SDK compresses) ${sdk.zstd_ms!.toFixed(0)} ms to ${mb(sdk.zstd_bytes!)}`,
  );
  console.log(
    `  packed writer encode + decode against the SDK's request building: ${(sdk.build_ms! / (afterEncode + afterDecode)).toFixed(2)}× (above 1: faster)`,
  );
}

/** The body as the decoder gave it before typed arrays: every packed field read into a number[] through a DataView. */
function asNumberArrays(value: unknown): unknown {
  if (ArrayBuffer.isView(value)) {
    const typed = value as Float32Array | Float64Array | Int32Array;
    const v = new DataView(typed.buffer, typed.byteOffset, typed.byteLength);
    const out = new Array<number>(typed.length);
    const width = typed.BYTES_PER_ELEMENT;
    for (let i = 0; i < out.length; i++)
      out[i] = width === 8 ? v.getFloat64(i * 8, true) : typed instanceof Int32Array ? v.getInt32(i * 4, true) : v.getFloat32(i * 4, true);
    return out;
  }
  if (Array.isArray(value)) return value.map(asNumberArrays);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asNumberArrays(v)]));
  return value;
}

/** The fingerprint as it was: a hash of the body's JSON. */
function jsonFingerprint(body: unknown): string {
  return createHash("sha256").update(JSON.stringify(body)).digest("hex");
}

wireCost();
scaleWireCost();
const bytes = JSON.stringify(batch(256)).length;
console.log(
  `GRPO step (forward_backward + optim_step) on ${ROWS} rows × ${LENGTH} tokens (about ${(bytes / 1024).toFixed(0)} KiB of datums as JSON), mean of ${STEPS} steps after ${WARMUP} warm-up steps`,
);
await compare("no-work backend (protocol only)", () => Promise.resolve(new NoWorkBackend()), 256);
const tiny = { vocabSize: 256, hiddenSize: 64, intermediateSize: 128, numLayers: 2, numHeads: 4, maxPositionEmbeddings: 256 };
await compare("in-process tiny model (0.1 M params)", () => InProcessBackend.create(tiny, { seed: 1 }), 256);
