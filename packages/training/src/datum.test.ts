import type { TrainingRow } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { datumFromRow } from "./datum.js";

const row: TrainingRow = {
  taskId: "t",
  trajectoryId: "t/0",
  rollout: 0,
  index: 0,
  role: "act",
  promptTokens: [10, 11, 12],
  outputTokens: [20, 21],
  logprobs: [-0.5, -1.5],
  invalid: false,
};

describe("datumFromRow", () => {
  it("applies the Tinker shift and zeroes prompt positions", () => {
    expect(datumFromRow(row, [0.25, -0.75])).toEqual({
      tokens: [10, 11, 12, 20],
      targetTokens: [11, 12, 20, 21],
      logprobs: [0, 0, -0.5, -1.5],
      advantages: [0, 0, 0.25, -0.75],
      mask: [0, 0, 1, 1],
    });
  });

  it("spreads one advantage over every output token and keeps reference log-probabilities", () => {
    const d = datumFromRow(row, 2, [-1, -2, -3, -4]);
    expect(d.advantages).toEqual([0, 0, 2, 2]);
    expect(d.refLogprobs).toEqual([-1, -2, -3, -4]);
  });

  it("refuses rows it cannot train on, saying which", () => {
    expect(() => datumFromRow({ ...row, logprobs: null }, 1)).toThrow(/row 0 \(act\) of trajectory "t\/0": the sampler returned no log-probabilities/);
    expect(() => datumFromRow(row, [1])).toThrow(/1 advantages for 2 output tokens/);
    expect(() => datumFromRow(row, [1, Number.NaN])).toThrow(/advantages must be finite/);
    expect(() => datumFromRow(row, 1, [0])).toThrow(/1 reference log-probabilities for 4 positions/);
  });
});
