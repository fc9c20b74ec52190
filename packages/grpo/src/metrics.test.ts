import type { PolicyRole, TrainingRow } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { computeAdvantages } from "./advantages.js";
import { advantageMetrics, roleMetrics } from "./metrics.js";
import { policiesOf, policyFor, routeByPolicy, sharedPolicy } from "./policies.js";

function row(rollout: number, index: number, role: PolicyRole, outputTokens: number[], invalid = false): TrainingRow {
  return { taskId: "t", trajectoryId: `t/${rollout}`, rollout, index, role, promptTokens: [1], outputTokens, logprobs: outputTokens.map(() => -1), invalid };
}

// Rollout 0 (reward 1): act [2 tokens], rehearse [1 token]. Rollout 1 (reward 0): act [3 tokens, invalid].
// Rollout 2 is masked.
const rows = [row(0, 0, "act", [5, 6]), row(0, 1, "rehearse", [7]), row(1, 0, "act", [5, 6, 7], true), row(2, 0, "act", [5])];
const verdicts = new Map([
  ["t/0", { status: "scored" as const, value: 1 }],
  ["t/1", { status: "scored" as const, value: 0 }],
  ["t/2", { status: "masked" as const, reason: "judge failed" }],
]);

describe("per-role metrics", () => {
  it("summarise rewards, advantages and counts per role", () => {
    const batch = computeAdvantages(rows, verdicts, { groupSize: 3 });
    // act scores 1 and 0 − 0.1 = −0.1: baseline 0.45, advantages 0.55 and −0.55 (mean 0, population std 0.55).
    // rehearse: one row, advantage 0 (a group of one has nothing to compare).
    const [act, rehearse] = roleMetrics(batch);
    expect(act).toMatchObject({ role: "act", rows: 2, rollouts: 2, groups: 1, zeroAdvantageGroups: 0, invalidRows: 1, outputTokens: 5, rewardMean: 0.5 });
    expect(act!.scoreMean).toBeCloseTo(0.45, 12);
    expect(act!.advantageMean).toBeCloseTo(0, 12);
    expect(act!.advantageStd).toBeCloseTo(0.55, 12);
    expect(act!.advantageMin).toBeCloseTo(-0.55, 12);
    expect(act!.advantageMax).toBeCloseTo(0.55, 12);
    expect(rehearse).toMatchObject({ role: "rehearse", rows: 1, rollouts: 1, zeroAdvantageGroups: 1, rewardMean: 1 });
    expect(advantageMetrics(batch)).toMatchObject({
      "batch/masked_rollouts": 1,
      "batch/uneven_tasks": 1,
      "batch/zero_advantage_groups": 1,
      "act/invalid_rows": 1,
      "rehearse/advantage_max": 0,
    });
  });
});

describe("per-role policies", () => {
  it("route every row to the policy that plays its role", () => {
    const batch = computeAdvantages(rows, verdicts);
    const routed = routeByPolicy(batch.rows, { act: "caller", rehearse: "simulator" });
    expect([...routed.keys()]).toEqual(["caller", "simulator"]);
    expect(routed.get("caller")!.map((r) => r.row.trajectoryId)).toEqual(["t/0", "t/1"]);
    expect(routed.get("simulator")!.map((r) => r.row.role)).toEqual(["rehearse"]);
  });

  it("share one policy in the paper's setting", () => {
    const routing = sharedPolicy("qwen");
    expect(policiesOf(routing)).toEqual(["qwen"]);
    expect(policyFor(routing, "summarize")).toBe("qwen");
  });

  it("name a role that no policy plays", () => {
    expect(() => policyFor({ act: "caller" }, "rehearse")).toThrow('no policy plays the role "rehearse" (routes: act→caller)');
  });
});
