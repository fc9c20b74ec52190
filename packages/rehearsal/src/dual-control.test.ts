import type { Environment, GenerateRequest, Task, ToolCall, ToolResult, ToolSpec } from "@envace/protocol";
import { ScriptedPolicy, simulateUser } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { renderAttempt } from "./attempt.js";
import { rehearseThenCommit } from "./commit.js";

// Dual control (τ²-Bench telecom): the user acts on their own phone. Private rehearsal imagines
// the phone's answers as well as the agent's tools, so neither real side sees a call until the
// committed execution.

const tool = (name: string): ToolSpec => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });
const task: Task = {
  id: "no-service",
  messages: [
    { role: "system", content: "You are a phone company's support agent." },
    { role: "user", content: "My phone shows No Service." },
  ],
  tools: [tool("check_line")],
  metadata: { user_tools: [tool("toggle_airplane_mode")], user_scenario: "Your phone is in airplane mode without you knowing." },
};

type Log = string[];

/** A real side that records each call in the shared log. */
function recordingSide(name: string, log: Log, content: string): Environment & { calls: ToolCall[] } {
  const calls: ToolCall[] = [];
  return {
    calls,
    reset: () => Promise.resolve(),
    tools: () => (name === "agent" ? task.tools : [tool("toggle_airplane_mode")]),
    state: () => Promise.resolve(null),
    call: (call) => {
      calls.push(call);
      log.push(`${name}-env:${call.name}`);
      const result: ToolResult = { status: "ok", callId: call.id, name: call.name, content };
      return Promise.resolve(result);
    },
  };
}

const hermes = (name: string): string => `<tool_call>{"name": "${name}", "arguments": {}}</tool_call>`;

/** One policy in every role: the agent checks the line and asks for airplane mode off; the user toggles it and stops. */
function script(log: Log): (request: GenerateRequest) => string {
  return (request) => {
    log.push(`policy:${request.role}`);
    const last = request.messages[request.messages.length - 1]!;
    switch (request.role) {
      case "act":
        return last.role === "tool" ? "Please turn airplane mode off on your phone." : hermes("check_line");
      case "user":
        return last.role === "tool" ? "It works now. ###STOP###" : hermes("toggle_airplane_mode");
      case "rehearse":
        return '<execution_result>{"ok": true}</execution_result>';
      case "reflect":
        return '<assessment>{"reached_goal": true, "went_wrong": "", "revision": ""}</assessment>';
      default:
        return '<memory>{"plan": "Check the line, then ask the user to turn airplane mode off.", "lessons": []}</memory>';
    }
  };
}

describe("private rehearsal with a user who acts on their own side", () => {
  it("imagines the user's device answers: no call reaches either real side before the committed execution", async () => {
    const log: Log = [];
    const agentSide = recordingSide("agent", log, "line active");
    const userSide = recordingSide("user", log, "Airplane Mode is now OFF.");
    const policy = new ScriptedPolicy("p", script(log));
    const rehearsed: GenerateRequest[] = [];
    const watched = new ScriptedPolicy("p", (request) => {
      if (request.role === "rehearse") rehearsed.push(request);
      return script(log)(request);
    });

    const episode = await rehearseThenCommit({
      task,
      policy: watched,
      environment: agentSide,
      userEnvironment: userSide,
      setting: "parallel:2",
      users: simulateUser({ policy }),
      rehearsal: { users: simulateUser({ policy }) },
      limits: { maxTurns: 4 },
    });

    // Each attempt: the agent's call and the user's phone call were both answered by the policy.
    const attempts = episode.rehearsal!.attempts;
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      const userStep = attempt.trajectory.steps.find((step) => step.type === "user")!;
      expect(userStep.actions?.flatMap((action) => action.outcomes.map((o) => [o.provenance, o.call.name, o.result.status, "generation" in o]))).toEqual([
        ["rehearsed", "toggle_airplane_mode", "ok", true],
      ]);
      expect(attempt.trajectory.termination).toEqual({ reason: "user_stop", marker: "###STOP###" });
      // What reflection and the memory read: the imagined phone call, on the user's side.
      expect(renderAttempt(attempt.digest).split("\n")).toEqual([
        '1. check_line {} → {"ok":true}',
        "2. reply: Please turn airplane mode off on your phone.",
        '3. user, on their own device: toggle_airplane_mode {} → {"ok":true}',
        "4. user: It works now. ###STOP###",
        "ended: the user ended the conversation",
      ]);
    }
    // The phone's call was rehearsed against the user's tools, not the agent's.
    const prompts = rehearsed.map((request) => request.messages[request.messages.length - 1]!.content ?? "");
    const phonePrompts = prompts.filter((text) => text.split("## Tool call to simulate")[1]!.includes("toggle_airplane_mode"));
    expect(phonePrompts).toHaveLength(2);
    for (const text of phonePrompts) {
      const available = text.split("## Available tools")[1]!.split("## ")[0]!;
      expect([available.includes("toggle_airplane_mode"), available.includes("check_line")]).toEqual([true, false]);
    }

    // Neither real side was touched until the rehearsal was over (its summary written).
    const firstReal = log.findIndex((entry) => entry.endsWith(":check_line") || entry.endsWith(":toggle_airplane_mode"));
    expect(firstReal).toBeGreaterThan(log.lastIndexOf("policy:summarize"));
    expect(log.slice(firstReal).filter((entry) => entry.includes("-env:"))).toEqual(["agent-env:check_line", "user-env:toggle_airplane_mode"]);

    // The committed execution ran the user's call on the real phone, grounded, and the agent saw only the user's words.
    const committed = episode.committed.trajectory;
    const userStep = committed.steps.find((step) => step.type === "user")!;
    expect(userStep.actions?.[0]?.outcomes.map((o) => [o.provenance, o.result])).toEqual([
      ["grounded", { status: "ok", callId: userSide.calls[0]!.id, name: "toggle_airplane_mode", content: "Airplane Mode is now OFF." }],
    ]);
    expect(agentSide.calls.map((call) => call.name)).toEqual(["check_line"]);
    expect(userSide.calls.map((call) => call.name)).toEqual(["toggle_airplane_mode"]);
  });
});
