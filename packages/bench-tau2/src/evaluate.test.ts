import type { PyValue } from "@envace/python-text";
import { beforeAll, describe, expect, it } from "vitest";
import { actionMatches, communicated, isSuccess, Tau2Evaluator, type NlAssertionJudge } from "./evaluate.js";
import { loadDomain, type Tau2Domain } from "./load.js";
import type { Action, Tau2Message, Tau2Task } from "./task.js";
import { writeMockData } from "./testing/mock-fixture.js";

const call = (id: string, name: string, args: [string, PyValue][], requestor: "assistant" | "user" = "assistant"): Tau2Message => ({
  role: requestor,
  content: null,
  tool_calls: [{ id, name, arguments: new Map(args), requestor }],
});
const result = (id: string, content: string, requestor: "assistant" | "user" = "assistant", error = false): Tau2Message => ({
  role: "tool",
  id,
  content,
  requestor,
  error,
});
const say = (content: string): Tau2Message => ({ role: "assistant", content, tool_calls: null });
const action = (name: string, args: [string, PyValue][], compare?: string[]): Action => ({
  action_id: "a",
  requestor: "assistant",
  name,
  arguments: new Map(args),
  info: null,
  compare_args: compare ?? null,
});

describe("the evaluator's rules", () => {
  let domain: Tau2Domain;
  let task: (id: string) => Tau2Task;
  const completed = '{"task_id": "task_1", "title": "Write report", "description": "Quarterly", "status": "completed"}';

  beforeAll(async () => {
    domain = await loadDomain("mock", { data: writeMockData() });
    task = (id) => domain.tasks.find((t) => t.id === id)!;
  });

  it("scores 0 unless the agent or the user ended the conversation", async () => {
    const evaluator = new Tau2Evaluator(domain);
    for (const termination of ["max_steps", "too_many_errors", "agent_error", "user_error"]) {
      const reward = await evaluator.evaluate(task("complete"), [], termination);
      expect(reward).toMatchObject({ reward: 0, note: `terminated prematurely: ${termination}` });
    }
  });

  it("gives 1 to a task without evaluation criteria", async () => {
    expect((await new Tau2Evaluator(domain).evaluate(task("free"), [], "user_stop")).reward).toBe(1);
  });

  it("multiplies the components the task's reward basis names, and only those", async () => {
    const evaluator = new Tau2Evaluator(domain);
    const done = [
      call("1", "update_task_status", [
        ["task_id", "task_1"],
        ["status", "completed"],
      ]),
      result("1", completed),
    ];
    const dismissed = [call("2", "dismiss_notification", [["notification_id", "notif_1"]], "user"), result("2", "Notification notif_1 dismissed", "user")];

    const all = await evaluator.evaluate(task("complete"), [...done, ...dismissed, say("Task_1 is COMPLETED.")], "user_stop");
    expect(all.breakdown).toEqual({ DB: 1, ENV_ASSERTION: 1, COMMUNICATE: 1 });
    expect(all.reward).toBe(1);
    // nl_assertions exist but NL_ASSERTION is not in the basis: no judge is needed.
    expect(all.nlAssertions).toBeUndefined();

    const silent = await evaluator.evaluate(task("complete"), [...done, ...dismissed, say("Done.")], "user_stop");
    expect(silent.breakdown).toEqual({ DB: 1, ENV_ASSERTION: 1, COMMUNICATE: 0 });
    expect(silent.reward).toBe(0);

    const undismissed = await evaluator.evaluate(task("complete"), [...done, say("completed")], "agent_stop");
    expect(undismissed.breakdown).toEqual({ DB: 0, ENV_ASSERTION: 0, COMMUNICATE: 1 });
    expect(undismissed.envAssertions.map((check) => check.met)).toEqual([true, false]);
  });

  it("compares both sides' databases by hash after replaying only the writes", async () => {
    const evaluator = new Tau2Evaluator(domain, { strictReplay: true });
    const messages = [
      call("r", "get_users", []),
      // Reads are not replayed, so even strict replay ignores what this one recorded.
      result("r", "whatever the read said"),
      call("w", "update_task_status", [
        ["task_id", "task_1"],
        ["status", "completed"],
      ]),
      result("w", completed),
      call("u", "no_such_tool", []),
      result("u", "Error: Tool 'no_such_tool' not found.", "assistant", true),
    ];
    const agentOnly = await evaluator.evaluate(task("complete"), messages, "user_stop");
    // The agent's database matches, the user's does not (the gold actions dismiss notif_1).
    expect(agentOnly.db).toMatchObject({ match: false, reward: 0, predictedHash: evaluator.gold(task("complete")).agent });
    const both = await evaluator.evaluate(
      task("complete"),
      [...messages, call("d", "dismiss_notification", [["notification_id", "notif_1"]], "user"), result("d", "Notification notif_1 dismissed", "user")],
      "user_stop",
    );
    expect(both.db).toMatchObject({ match: true, reward: 1 });
  });

  it("refuses a strict replay whose write answers differently than recorded", async () => {
    const evaluator = new Tau2Evaluator(domain, { strictReplay: true });
    const messages = [
      call("w", "update_task_status", [
        ["task_id", "task_1"],
        ["status", "completed"],
      ]),
      result("w", '{"status": "other"}'),
    ];
    await expect(evaluator.evaluate(task("complete"), messages, "user_stop")).rejects.toThrow(/replaying update_task_status \(call w\)/);
    expect((await new Tau2Evaluator(domain).evaluate(task("complete"), messages, "user_stop")).db?.predictedHash).toBe(evaluator.gold(task("complete")).agent);
  });

  it("replays a task's message history before the conversation's own calls", async () => {
    const evaluator = new Tau2Evaluator(domain);
    const history = task("history").initial_state!.message_history!;
    const finish = [
      call("x", "update_task_status", [
        ["task_id", "task_2"],
        ["status", "completed"],
      ]),
      result("x", "{}"),
    ];
    expect((await evaluator.evaluate(task("history"), [...history, ...finish], "user_stop")).reward).toBe(1);
    expect((await evaluator.evaluate(task("history"), [...history], "user_stop")).reward).toBe(0);
  });

  it("matches gold actions as upstream's compare_with_tool_call does", () => {
    const call = (args: [string, PyValue][]) => ({ id: "c", name: "create_task", arguments: new Map(args), requestor: "assistant" as const });
    const gold = action("create_task", [
      ["user_id", "user_1"],
      ["title", "Plan"],
      ["n", 1n],
    ]);
    // Without compare_args, only the arguments the call passed are compared.
    expect(actionMatches(gold, call([["title", "Plan"]]))).toBe(true);
    expect(
      actionMatches(
        gold,
        call([
          ["title", "Plan"],
          ["n", 1],
        ]),
      ),
    ).toBe(true);
    expect(
      actionMatches(
        gold,
        call([
          ["title", "Plan"],
          ["extra", 1n],
        ]),
      ),
    ).toBe(false);
    expect(actionMatches(gold, call([["title", "plan"]]))).toBe(false);
    expect(
      actionMatches(
        action("create_task", [["title", "Plan"]], ["title"]),
        call([
          ["user_id", "x"],
          ["title", "Plan"],
        ]),
      ),
    ).toBe(true);
    expect(actionMatches(action("create_task", [["title", "Plan"]], ["title"]), call([["user_id", "x"]]))).toBe(false);
    expect(actionMatches(action("create_task", [], []), call([["anything", 1n]]))).toBe(true);
    expect(actionMatches(action("get_users", []), call([]))).toBe(false);
  });

  it("finds communicated facts case-insensitively in agent messages with commas removed", () => {
    const messages: Tau2Message[] = [say("The refund is $1,234.50."), { role: "user", content: "It was 99", tool_calls: null }];
    expect(communicated(messages, "$1234.50")).toBe(true);
    expect(communicated(messages, "THE REFUND")).toBe(true);
    expect(communicated(messages, "1,234")).toBe(false);
    expect(communicated(messages, "99")).toBe(false);
  });

  it("asks the judge only for NL_ASSERTION in the basis, and masks the rollout when the judge fails", async () => {
    const asked: string[][] = [];
    const judge = (met: boolean): NlAssertionJudge => ({
      judge: (_conversation, assertions) => {
        asked.push([...assertions]);
        return Promise.resolve(assertions.map((assertion) => ({ assertion, met, justification: "" })));
      },
    });
    const created = [
      call("1", "create_task", [
        ["user_id", "user_1"],
        ["title", "Plan"],
      ]),
      result("1", "{}"),
    ];
    const pass = await new Tau2Evaluator(domain, { judge: judge(true) }).evaluate(task("create"), created, "user_stop");
    expect(pass.breakdown).toEqual({ DB: 1, ACTION: 1, NL_ASSERTION: 1 });
    expect(asked).toEqual([["The agent says the task exists."]]);
    const fail = await new Tau2Evaluator(domain, { judge: judge(false) }).evaluate(task("create"), created, "user_stop");
    expect(fail.reward).toBe(0);

    const broken: NlAssertionJudge = { judge: () => Promise.reject(new Error("judge HTTP 503 after 5 attempts")) };
    const masked = await new Tau2Evaluator(domain, { judge: broken }).evaluate(task("create"), created, "user_stop");
    expect(masked.masked).toBe("NL_ASSERTION judge failed: judge HTTP 503 after 5 attempts");
    const unjudged = await new Tau2Evaluator(domain).evaluate(task("create"), created, "user_stop");
    expect(unjudged.masked).toMatch(/needs a judge/);
  });

  it("counts a reward within 1e-6 of 1 as a success", () => {
    expect(isSuccess(1)).toBe(true);
    expect(isSuccess(1 - 1e-7)).toBe(true);
    expect(isSuccess(1 - 1e-5)).toBe(false);
    expect(isSuccess(0)).toBe(false);
  });
});
