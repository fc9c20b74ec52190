import type { Datum } from "@envace/training";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SDK_WIRE_VERSION, TinkerService } from "./client.js";
import { TinkerReductionError } from "./errors.js";
import type { TinkerServer } from "./server/options.js";
import { startTinkerServer } from "./server/server.js";
import { startProxy } from "./testing/proxy.js";
import { TableBackend } from "./testing/table-backend.js";

let server: TinkerServer;
let seed = 0;

beforeAll(async () => {
  server = await startTinkerServer({ createBackend: () => new TableBackend(8, ++seed, { eos: 7 }) });
});

afterAll(async () => {
  await server.close();
});

/** "Predict 2 after 1, then 3 after 2", the prompt position carrying no loss. */
const data: Datum[] = [{ tokens: [1, 2], targetTokens: [2, 3], logprobs: [0, -1.5], advantages: [0, 1], mask: [0, 1] }];

describe("the loss reduction", () => {
  it("is never guessed: against a server that does not declare it (SkyRL tx's client/config), unmeasured, training is refused until the config names it", async () => {
    const skyrl = await startProxy(server.url, { clientConfig: { pjwt_auth_enabled: false } });
    const warnings: string[] = [];
    const service = await TinkerService.connect({ baseUrl: skyrl.url, heartbeatIntervalMs: 0, onWarning: (m) => warnings.push(m) });
    try {
      const blind = await service.createTrainingClient({ baseModel: "table", calibrateReduction: false });
      await expect(blind.forwardBackward(data, { type: "cross_entropy" })).rejects.toThrow(TinkerReductionError);
      await expect(blind.forwardBackward(data, { type: "importance_sampling" })).rejects.toThrow(
        `${skyrl.url} does not say how it reduces losses, so gradients would be scaled blindly: set the training client's reduction to "sum" (hosted Tinker; SkyRL tx with the skyrl_train backend) or "datum-token-mean" (SkyRL tx with the JAX backend)`,
      );
      expect(skyrl.seen.filter((s) => s.path === "forward_backward")).toEqual([]);
      // Scoring needs no reduction, and the refused calls took no sequence number.
      expect(await blind.forward(data)).toHaveLength(1);

      const named = await service.createTrainingClient({ baseModel: "table", reduction: "sum", calibrateReduction: false });
      const step = await named.forwardBackward(data, { type: "cross_entropy" });
      expect(step.logprobs[0]).toHaveLength(2);
      expect(warnings).toEqual([]);
    } finally {
      service.close();
      await skyrl.close();
    }
  });

  it("is read from a server that declares it", async () => {
    const service = await TinkerService.connect({ baseUrl: server.url, heartbeatIntervalMs: 0 });
    try {
      expect(service.clientConfig.envace_loss_reduction).toBe("sum");
      const client = await service.createTrainingClient({ baseModel: "table", useServerExtensions: false });
      expect((await client.forwardBackward(data, { type: "cross_entropy" })).logprobs[0]).toHaveLength(2);
    } finally {
      service.close();
    }
  });
});

describe("the wire", () => {
  it("is protobuf to a server that takes it, results included, and announces the SDK version it speaks", async () => {
    const proxy = await startProxy(server.url);
    const service = await TinkerService.connect({ baseUrl: proxy.url, heartbeatIntervalMs: 0 });
    try {
      const client = await service.createTrainingClient({ baseModel: "table", useServerExtensions: false, calibrateReduction: false });
      await client.forwardBackward(data, { type: "cross_entropy" });
      await client.forward(data);
      const sampler = await client.saveWeightsForSampler();
      await sampler.sample([1], { maxTokens: 3, temperature: 1, topP: 1, topK: 0, stop: [], seed: 1 });
      expect(SDK_WIRE_VERSION).toBe("0.25.0");
      expect(proxy.seen.find((s) => s.path === "client/config")!.json).toEqual({ sdk_version: "0.25.0" });
      expect(proxy.seen.filter((s) => s.path === "forward_backward").map((s) => s.contentType)).toEqual(["application/x-protobuf", "application/x-protobuf"]);
      expect(proxy.seen.some((s) => s.path === "forward")).toBe(false);
      // Three results with a protobuf form: forward_backward, forward, sample.
      expect(proxy.seen.filter((s) => s.path === "retrieve_future" && s.replyType === "application/x-protobuf")).toHaveLength(3);
    } finally {
      service.close();
      await proxy.close();
    }
  });

  it("falls back to JSON for the session once a server refuses protobuf, resending the same request", async () => {
    const old = await startProxy(server.url, { refuseProtobuf: 422 });
    const warnings: string[] = [];
    const service = await TinkerService.connect({ baseUrl: old.url, heartbeatIntervalMs: 0, onWarning: (m) => warnings.push(m) });
    try {
      const client = await service.createTrainingClient({ baseModel: "table", useServerExtensions: false, calibrateReduction: false });
      const first = await client.forwardBackward(data, { type: "cross_entropy" });
      await client.forwardBackward(data, { type: "cross_entropy" });
      await client.forward(data);
      expect(first.logprobs[0]).toHaveLength(2);
      expect(old.seen.filter((s) => s.path === "forward_backward" || s.path === "forward").map((s) => [s.path, s.contentType, s.status])).toEqual([
        ["forward_backward", "application/x-protobuf", 422],
        ["forward_backward", "application/json", 200],
        ["forward_backward", "application/json", 200],
        ["forward", "application/json", 200],
      ]);
      expect((old.seen.find((s) => s.path === "forward_backward" && s.status === 200)!.json as { seq_id: number }).seq_id).toBe(1);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^the server refused a protobuf forward_backward \(HTTP 422: .*\); sending JSON from now on$/);
    } finally {
      service.close();
      await old.close();
    }
  });
});
