import type { TrainingRow } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import type { ScoredRow } from "./advantages.js";
import { SequenceError, toSequence, toSequences } from "./sequences.js";

const row: TrainingRow = {
  taskId: "t",
  trajectoryId: "t/0",
  rollout: 0,
  index: 3,
  role: "act",
  promptTokens: [10, 11, 12],
  outputTokens: [20, 21, 99],
  logprobs: [-0.3, -1.2, -0.01],
  invalid: false,
};

const scored = (r: TrainingRow, advantage: number): ScoredRow => ({ row: r, reward: 1, score: 1, advantage, groupRole: r.role });

describe("toSequence", () => {
  it("lays a row out position by position, advantage only on the output", () => {
    // prompt p0 p1 p2, output a b EOS, A = 0.5:
    //  position       0    1    2     3     4
    //  tokens         p0   p1   p2    a     b
    //  targetTokens   p1   p2   a     b     EOS
    //  mask           0    0    1     1     1
    //  logprobs       0    0    q_a   q_b   q_EOS
    //  advantages     0    0    0.5   0.5   0.5
    expect(toSequence(row, 0.5)).toEqual({
      tokens: [10, 11, 12, 20, 21],
      targetTokens: [11, 12, 20, 21, 99],
      mask: [0, 0, 1, 1, 1],
      logprobs: [0, 0, -0.3, -1.2, -0.01],
      advantages: [0, 0, 0.5, 0.5, 0.5],
    });
  });

  it("refuses rows it cannot train on, naming them", () => {
    expect(() => toSequence({ ...row, logprobs: null }, 1)).toThrow(
      new SequenceError('row 3 (act) of trajectory "t/0": the sampler returned no log-probabilities, so it cannot be trained on'),
    );
    expect(() => toSequence({ ...row, logprobs: [-1] }, 1)).toThrow(/1 log-probabilities for 3 output tokens/);
    expect(() => toSequence({ ...row, promptTokens: [] }, 1)).toThrow(/empty prompt/);
  });
});

describe("toSequences", () => {
  it("skips empty outputs and roles that are not trained, keeping rows and sequences aligned", () => {
    const rehearse = { ...row, index: 4, role: "rehearse" as const };
    const empty = { ...row, index: 5, outputTokens: [], logprobs: [] };
    const batch = toSequences([scored(row, 1), scored(rehearse, -1), scored(empty, 0)], { roles: ["act"] });
    expect(batch.sequences).toHaveLength(1);
    expect(batch.rows.map((r) => r.row.index)).toEqual([3]);
    expect(batch.skipped.map((s) => [s.row.row.index, s.reason])).toEqual([
      [4, "role-not-trained"],
      [5, "empty-output"],
    ]);
    expect(toSequences([scored(row, 1), scored(rehearse, -1)]).sequences[1]!.advantages).toEqual([0, 0, -1, -1, -1]);
  });
});
