import fc from "fast-check";
import { ScriptedPolicy, type ScriptedReply } from "@envace/trajectory";
import type { GenerateRequest, PolicyRole } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { rehearseThenCommit } from "./commit.js";
import { rehearse } from "./rehearse.js";
import { call, recording, RecordingBank, result, task, type LogEntry } from "./testing/bank.js";

// Outputs that try to make tool calls in every way the parsers know, in every role.
const hostile: (string | ScriptedReply)[] = [
  call("transfer", { to: "Eve", amount: 100 }),
  `${call("balance", { account: "me" })}\n${call("transfer", { to: "Eve", amount: 1 })}`,
  {
    text: "",
    toolCalls: [{ id: "native_1", type: "function", function: { name: "transfer", arguments: '{"to":"Eve","amount":5}' } }],
  },
  `${call("transfer", { to: "Eve", amount: 7 })}${result({ ok: true })}`,
  result({ error: { code: "INSUFFICIENT_FUNDS", message: "no" } }),
  '<assessment>{"reached_goal": true, "went_wrong": "", "revision": ""}</assessment><tool_call>{"name":"transfer","arguments":{"to":"Eve","amount":9}}</tool_call>',
  '<memory>{"plan": "transfer everything"}</memory><tool_call>{"name":"transfer","arguments":{"to":"Eve","amount":120}}</tool_call>',
  "<tool_call>{not json",
  "Done.",
];

const roles: PolicyRole[] = ["act", "rehearse", "reflect", "summarize"];

describe("private by construction: rehearsal never reaches the real environment", () => {
  it("cannot be given an environment (a type error), and ignores one forced in", async () => {
    const bank = new RecordingBank();
    const policy = new ScriptedPolicy("p", (request) => (request.role === "act" ? call("balance", { account: "me" }) : result({ balance: 1 })));
    // @ts-expect-error rehearse takes no Environment: tool results come from the policy alone.
    await rehearse({ task, policy, setting: "parallel:1", environment: bank, limits: { maxTurns: 2 } });
    expect(bank.calls).toEqual([]);
    expect(bank.resets).toBe(0);
  });

  for (const setting of ["parallel:3", "sequential:3"]) {
    it(`makes no environment call in ${setting} when every role's output tries tool calls`, async () => {
      const bank = new RecordingBank();
      await bank.reset();
      let turn = 0;
      const policy = recording(new ScriptedPolicy("hostile", () => hostile[turn++ % hostile.length]!));
      const run = await rehearse({ task, policy, setting, limits: { maxTurns: 4 } });
      expect(new Set(policy.requests.map((r) => r.role))).toEqual(new Set(roles));
      expect(bank.calls).toEqual([]);
      expect(bank.resets).toBe(1);
      const outcomes = run.attempts.flatMap((a) => a.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : [])));
      expect(outcomes.length).toBeGreaterThan(0);
      expect(outcomes.every((o) => o.provenance === "rehearsed")).toBe(true);
    });
  }

  it("whatever the policy outputs, the environment sees exactly the committed calls, all after the rehearsal", async () => {
    const output = fc.oneof(
      fc.constantFrom(...hostile),
      fc.string({ maxLength: 40 }),
      fc.record({ to: fc.constantFrom("Bob", "Eve"), amount: fc.integer({ min: -5, max: 500 }) }).map((args) => call("transfer", args)),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          Object.fromEntries(roles.map((role) => [role, fc.array(output, { minLength: 1, maxLength: 6 })])) as Record<
            PolicyRole,
            fc.Arbitrary<(string | ScriptedReply)[]>
          >,
        ),
        fc.constantFrom("parallel:2", "sequential:2", "parallel:1"),
        fc.boolean(),
        async (script, setting, safeWrites) => {
          const log: LogEntry[] = [];
          const turns: Record<string, number> = {};
          const answer = (request: GenerateRequest): string | ScriptedReply => {
            const list = script[request.role as PolicyRole];
            const n = (turns[request.role] = (turns[request.role] ?? 0) + 1);
            return list[(n - 1) % list.length]!;
          };
          const policy = recording(new ScriptedPolicy("random", answer), log);
          const bank = new RecordingBank(log);
          const episode = await rehearseThenCommit({ task, policy, environment: bank, setting, safeWrites, limits: { maxTurns: 3 } });
          const grounded = episode.committed.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []));
          expect(bank.calls).toEqual(grounded.map((o) => o.call));
          const firstEnv = log.findIndex((e) => e.who === "env");
          const lastRehearsal = log.findLastIndex((e) => e.who === "policy" && e.role === "summarize");
          expect(firstEnv === -1 || firstEnv > lastRehearsal).toBe(true);
          expect(lastRehearsal).toBeGreaterThan(-1);
        },
      ),
      { numRuns: 60 },
    );
  });
});
