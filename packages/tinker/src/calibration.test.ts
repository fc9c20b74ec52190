import { defaultAdamParams, type Datum } from "@envace/training";
import { describe, expect, it } from "vitest";
import { lossCandidates, matchGradientRatio, matchLoss, PROBE, resolveReduction } from "./calibration.js";
import { TinkerService } from "./client.js";
import { TinkerReductionError } from "./errors.js";
import { startTinkerServer } from "./server/server.js";
import { startProxy } from "./testing/proxy.js";
import { TableBackend } from "./testing/table-backend.js";

describe("the probe's arithmetic", () => {
  it("gives each reduction its own loss: −1.2 per scored token summed (5 tokens), per datum over its length (4 and 5), over all 9 tokens", () => {
    const learner = PROBE.map((p) => p.tokens.map((_, t) => -1 - 0.1 * t));
    const sampler = learner.map((row, i) => row.map((lp, t) => (PROBE[i]!.mask[t]! > 0 ? lp - Math.LN2 : lp)));
    const c = lossCandidates(learner, sampler);
    expect(c.sum).toBeCloseTo(-6, 12);
    expect(c["datum-token-mean"]).toBeCloseTo(-1.2 * (2 / 4 + 3 / 5), 12);
    expect(c["token-mean"]).toBeCloseTo(-6 / 9, 12);
    expect(matchLoss(-6.0001, c).reduction).toBe("sum");
    expect(matchLoss(-1.32, c).reduction).toBe("datum-token-mean");
    expect(matchLoss(-3, c)).toEqual({ evidence: expect.stringMatching(/reported loss:sum -3\.0000 .*: none matches$/) as unknown });
  });

  it("reads the gradient-norm ratio of the two rounds", () => {
    expect(matchGradientRatio(0.5, 2).reduction).toBe("sum");
    expect(matchGradientRatio(0.5, 1).reduction).toBe("sum");
    expect(matchGradientRatio(0.3, 0.2).reduction).toBe("datum-token-mean");
    expect(matchGradientRatio(0.3, 0.3).reduction).toBe("token-mean");
    expect(matchGradientRatio(0.3, 0.45).reduction).toBeUndefined();
    expect(matchGradientRatio(0, 0).reduction).toBeUndefined();
  });

  it("refuses a configured or declared reduction that the probe contradicts, in one line naming both", () => {
    const measured = { reduction: "datum-token-mean" as const, evidence: "E" };
    expect(() => resolveReduction("http://x", measured, "sum", undefined)).toThrow(
      new TinkerReductionError(
        'reduction "sum" is configured, but http://x reduces losses by "datum-token-mean" (E); set reduction to "datum-token-mean" or leave it unset',
      ),
    );
    expect(() => resolveReduction("http://x", measured, undefined, "sum")).toThrow(
      'http://x declares the reduction "sum" but reduces losses by "datum-token-mean" (E)',
    );
    expect(() => resolveReduction("http://x", { reduction: "token-mean", evidence: "E" }, undefined, undefined)).toThrow(/token mean over the whole batch/);
    expect(resolveReduction("http://x", measured, "datum-token-mean", undefined)).toBe("datum-token-mean");
    expect(resolveReduction("http://x", { evidence: "E" }, undefined, "sum")).toBe("sum");
    expect(resolveReduction("http://x", { evidence: "E" }, undefined, undefined)).toBeUndefined();
  });
});

const data: Datum[] = [{ tokens: [1, 2, 3], targetTokens: [2, 3, 4], logprobs: [0, -1.5, -2], advantages: [0, 1, 1], mask: [0, 1, 1] }];
const adam = { ...defaultAdamParams, learningRate: 0.1 };

/** A server whose `client/config` says nothing of its reduction (as SkyRL tx's), optionally hiding what the probes read. */
async function undeclared(options: { hideLoss?: boolean; hideGradNorm?: boolean } = {}) {
  const backend = new TableBackend(8, 5);
  const server = await startTinkerServer({ backend });
  const proxy = await startProxy(server.url, {
    clientConfig: { pjwt_auth_enabled: false },
    ...(options.hideLoss || options.hideGradNorm
      ? {
          rewriteJson: (_path: string, reply: unknown) => {
            const r = reply as { metrics?: Record<string, number> | null };
            if (!r.metrics) return reply;
            const metrics = Object.fromEntries(
              Object.entries(r.metrics).filter(([k]) => !(options.hideLoss && k === "loss:sum") && !(options.hideGradNorm && k.includes("grad_norm"))),
            );
            return { ...r, metrics };
          },
        }
      : {}),
  });
  const warnings: string[] = [];
  const service = await TinkerService.connect({ baseUrl: proxy.url, heartbeatIntervalMs: 0, onWarning: (m) => warnings.push(m) });
  const created = () => proxy.seen.filter((s) => s.path === "create_model").length;
  const close = async () => {
    service.close();
    await proxy.close();
    await server.close();
  };
  return { backend, proxy, service, warnings, created, close };
}

describe("calibration against this project's server (it sums)", () => {
  it("measures sum from the reported loss, on a scratch model it unloads, and leaves the weights as they were", async () => {
    const s = await undeclared();
    try {
      const client = await s.service.createTrainingClient({ baseModel: "table", useServerExtensions: false });
      expect(client.reduction).toBe("sum");
      expect(client.calibration?.evidence).toMatch(/^a zero-gradient ppo probe reported loss:sum -6\.0000 /);
      expect(s.proxy.seen.map((x) => x.path).filter((p) => p === "create_model" || p === "unload_model")).toEqual([
        "create_model",
        "unload_model",
        "create_model",
      ]);
      // One backend serves both models: the probe's gradient was exactly zero, so a step now equals a step on a fresh backend.
      const fresh = new TableBackend(8, 5);
      expect(s.backend.exportWeights()).toEqual(fresh.exportWeights());
      const viaClient = await client.forwardBackward(data, { type: "importance_sampling" });
      await client.optimStep(adam);
      const direct = await fresh.forwardBackward(data, { type: "importance_sampling" });
      await fresh.optimStep(adam);
      expect(viaClient.loss).toBeCloseTo(direct.loss, 6);
      s.backend.exportWeights().forEach((w, i) => expect(w).toBeCloseTo(fresh.exportWeights()[i]!, 6));
      expect(s.warnings).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("measures sum from gradient norms where the server reports no reduced loss", async () => {
    const s = await undeclared({ hideLoss: true });
    try {
      const client = await s.service.createTrainingClient({ baseModel: "table", useServerExtensions: false });
      expect(client.reduction).toBe("sum");
      expect(client.calibration?.evidence).toMatch(/^gradient norms of the probe rounds .* \(ratio (4|2)\.0000;/);
    } finally {
      await s.close();
    }
  });

  it("refuses a configured reduction the server contradicts, before creating the model", async () => {
    const s = await undeclared();
    try {
      await expect(s.service.createTrainingClient({ baseModel: "table", reduction: "datum-token-mean" })).rejects.toThrow(
        new RegExp(`^reduction "datum-token-mean" is configured, but ${s.proxy.url} reduces losses by "sum" \\(a zero-gradient ppo probe`),
      );
      expect(s.created()).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("with nothing to measure, uses the configured reduction with a warning, and without one refuses before creating the model", async () => {
    const s = await undeclared({ hideLoss: true, hideGradNorm: true });
    try {
      await expect(s.service.createTrainingClient({ baseModel: "table", requireReduction: true })).rejects.toThrow(
        /does not say how it reduces losses and the probe could not tell \(the server reports neither a reduced loss \(loss:sum\) nor a gradient norm\)/,
      );
      expect(s.created()).toBe(1);
      const named = await s.service.createTrainingClient({ baseModel: "table", reduction: "sum", requireReduction: true });
      expect(named.reduction).toBe("sum");
      expect(s.warnings.every((w) => w.includes("the reduction probe was inconclusive"))).toBe(true);
    } finally {
      await s.close();
    }
  });
});
