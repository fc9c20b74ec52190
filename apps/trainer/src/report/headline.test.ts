import { describe, expect, it } from "vitest";
import { headlineTable } from "./headline.js";

describe("headlineTable", () => {
  const records = [
    { kind: "sft", step: 1, loss: 2 },
    { kind: "eval", step: 0, rehearsal: "none", success_rate: 0.5, tasks: 4, outcomes: "1100" },
    { kind: "eval", step: 0, rehearsal: "parallel:2", success_rate: 0, tasks: 4, outcomes: "0000" },
    { kind: "train", step: 1, env_calls: 0 },
    { kind: "train", step: 2, env_calls: 0 },
    { kind: "eval", step: 2, rehearsal: "none", success_rate: 0.75, tasks: 4, outcomes: "1110" },
    { kind: "eval", step: 2, rehearsal: "parallel:2", success_rate: 0.25, tasks: 4, outcomes: "0001" },
  ];

  it("prints start and end per setting with Wilson intervals, the paired change, and the calls made", () => {
    const lines = headlineTable(records, "envace");
    expect(lines[0]).toBe("held-out success on 4 tasks (95% intervals: Wilson; change: paired bootstrap over tasks)");
    expect(lines[1]).toMatch(/^ +start of RL \(step 0\) +after 2 envace steps +change, same tasks$/);
    // Wilson by hand: 2/4 → [0.150, 0.850], 3/4 → [0.301, 0.954], 0/4 → [0, 0.490], 1/4 → [0.046, 0.699].
    expect(lines[2]).toMatch(/^rehearsal none +0\.500 \[0\.150, 0\.850\] +0\.750 \[0\.301, 0\.954\] +\+0\.250 \[/);
    expect(lines[3]).toMatch(/^rehearsal parallel:2 +0\.000 \[0\.000, 0\.490\] +0\.250 \[0\.046, 0\.699\] +\+0\.250 \[/);
    expect(lines[4]).toBe("real-environment calls during training: 0");
  });

  it("says so when nothing was evaluated, and leaves the change out of a run without RL steps", () => {
    expect(headlineTable([{ kind: "train", step: 1 }], "envace")).toEqual(["no held-out evaluation ran"]);
    const start = headlineTable(
      records.filter((r) => r.step === 0 || r.kind === "sft"),
      "envace",
    );
    expect(start[2]).toMatch(/^rehearsal none +0\.500 \[0\.150, 0\.850\] +0\.500 \[0\.150, 0\.850\] +–$/);
  });
});
