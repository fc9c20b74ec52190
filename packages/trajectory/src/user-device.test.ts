import type { GenerateRequest, Task, ToolSpec, Trajectory } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { unfoldGroup } from "./group.js";
import { rehearsal } from "./rehearsal-environment.js";
import { ScriptedEnvironment } from "./scripted-environment.js";
import { ScriptedPolicy } from "./scripted-policy.js";
import { unfold } from "./unfold.js";
import { userToolsOf } from "./user-device.js";
import { simulateUser } from "./user-turns.js";

const tool = (name: string): ToolSpec => ({ type: "function", function: { name, parameters: { type: "object", properties: {} } } });
const phoneTools = [tool("check_status_bar"), tool("toggle_airplane_mode")];
const task: Task = {
  id: "airplane",
  messages: [{ role: "user", content: "My phone shows No Service." }],
  tools: [tool("check_line")],
  metadata: { user_tools: phoneTools, user_scenario: "Your phone is in airplane mode." },
};

/** A side that answers as the user's phone does; with the task's tools it stands for the agent's side, which no user call may reach. */
function phone(tools: readonly ToolSpec[] = phoneTools): ScriptedEnvironment {
  return new ScriptedEnvironment(tools, (call) => (call.name === "toggle_airplane_mode" ? "Airplane Mode is now OFF." : "Status Bar: ✈️ Airplane Mode"));
}

const hermes = (name: string): string => `<tool_call>{"name": "${name}", "arguments": {}}</tool_call>`;

/** The agent asks once; the user checks the status bar, toggles airplane mode, then says so and stops. */
function players(requests: GenerateRequest[]): { agent: ScriptedPolicy; user: ScriptedPolicy } {
  const agent = new ScriptedPolicy("agent", (request) => {
    requests.push(request);
    return "Please check your phone and turn airplane mode off.";
  });
  const user = new ScriptedPolicy("user", (request) => {
    requests.push(request);
    const tools = request.messages.filter((m) => m.role === "tool").length;
    return tools === 0 ? hermes("check_status_bar") : tools === 1 ? hermes("toggle_airplane_mode") : "Done, it works. ###STOP###";
  });
  return { agent, user };
}

describe("a simulated user with a side of its own (dual control)", () => {
  it("runs the user's calls on the user's side, records them on the user step, and keeps them from the agent", async () => {
    const requests: GenerateRequest[] = [];
    const { agent, user } = players(requests);
    const device = phone();
    const agentSide = phone(task.tools);
    const trajectory = await unfold({ task, actor: agent, environment: agentSide, userEnvironment: device, users: simulateUser({ policy: user }) });

    expect(trajectory.termination).toEqual({ reason: "user_stop", marker: "###STOP###" });
    expect(device.calls.map((call) => call.name)).toEqual(["check_status_bar", "toggle_airplane_mode"]);
    expect(agentSide.calls).toEqual([]);
    const step = trajectory.steps[1]!;
    expect(step.type).toBe("user");
    if (step.type !== "user") return;
    expect(step.message).toEqual({ role: "user", content: "Done, it works. ###STOP###" });
    expect(step.actions?.map((action) => action.outcomes.map((o) => [o.provenance, o.call.name, o.result.status === "ok" ? o.result.content : null]))).toEqual([
      [["grounded", "check_status_bar", "Status Bar: ✈️ Airplane Mode"]],
      [["grounded", "toggle_airplane_mode", "Airplane Mode is now OFF."]],
    ]);
    // The user simulator was offered the phone's tools and read their results; the agent never saw them.
    const userRequests = requests.filter((request) => request.role === "user");
    expect(userRequests.map((request) => request.tools.map((t) => t.function.name))).toEqual([
      phoneTools.map((t) => t.function.name),
      phoneTools.map((t) => t.function.name),
      phoneTools.map((t) => t.function.name),
    ]);
    expect(userRequests[2]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "Status Bar: ✈️ Airplane Mode",
      "Airplane Mode is now OFF.",
    ]);
    const agentRequests = requests.filter((request) => request.role === "act");
    expect(agentRequests.some((request) => JSON.stringify(request.messages).includes("Airplane Mode is now OFF."))).toBe(false);
  });

  it("lets the policy imagine the device's answers in a rehearsal, reaching no real side", async () => {
    const requests: GenerateRequest[] = [];
    const { agent, user } = players(requests);
    const rehearser = new ScriptedPolicy("rehearser", (request) => {
      requests.push(request);
      return '<execution_result>{"imagined": true}</execution_result>';
    });
    const trajectory = await unfold({
      task,
      actor: agent,
      environment: rehearsal(rehearser),
      userEnvironment: rehearsal(rehearser),
      users: simulateUser({ policy: user }),
    });
    const step = trajectory.steps[1]!;
    expect(
      step.type === "user" &&
        step.actions?.map((action) =>
          action.outcomes.map((o) => [o.provenance, o.call.name, o.result.status === "ok" ? o.result.content : null, "generation" in o]),
        ),
    ).toEqual([[["rehearsed", "check_status_bar", { imagined: true }, true]], [["rehearsed", "toggle_airplane_mode", { imagined: true }, true]]]);
    expect(requests.filter((request) => request.role === "rehearse")).toHaveLength(2);
  });

  it("stops the user's tool rounds at maxToolRounds and reads the last generation as its message", async () => {
    const device = phone();
    const agent = new ScriptedPolicy("agent", () => "Please check.");
    const user = new ScriptedPolicy("user", () => hermes("check_status_bar"));
    const trajectory = await unfold({
      task,
      actor: agent,
      environment: phone(task.tools),
      userEnvironment: device,
      users: simulateUser({ policy: user, maxToolRounds: 2 }),
      limits: { maxTurns: 1 },
    });
    expect(device.calls).toHaveLength(2);
    const step = trajectory.steps[1]!;
    expect(step.type === "user" && [step.actions?.length, step.message.content]).toEqual([2, hermes("check_status_bar")]);
  });

  it("finds a task's user tools in its metadata, and none when they are absent or malformed", () => {
    expect(userToolsOf(task).map((t) => t.function.name)).toEqual(["check_status_bar", "toggle_airplane_mode"]);
    expect(userToolsOf({ ...task, metadata: {} })).toEqual([]);
    expect(userToolsOf({ ...task, metadata: { user_tools: [{ name: "x" }] } })).toEqual([]);
  });
});

describe("a group of dual-control rollouts (unfoldGroup)", () => {
  /** An agent side that records its calls and carries its own phone, as a τ² telecom environment does. */
  function paired(): ScriptedEnvironment & { user: ScriptedEnvironment } {
    return Object.assign(phone(task.tools), { user: phone() });
  }
  const outcomes = (steps: Trajectory["steps"]) =>
    steps.flatMap((step) =>
      step.type === "user" ? (step.actions ?? []).flatMap((action) => action.outcomes.map((o) => `${o.provenance}:${o.call.name}`)) : [],
    );

  it("runs each rollout's user calls on that rollout's own user side, never on the agent's", async () => {
    const { agent, user } = players([]);
    const sides: ReturnType<typeof paired>[] = [];
    const trajectories = await unfoldGroup({
      task,
      size: 2,
      actor: agent,
      environment: () => {
        sides.push(paired());
        return sides[sides.length - 1]!;
      },
      userEnvironment: (_rollout, environment) => (environment as ReturnType<typeof paired>).user,
      users: () => simulateUser({ policy: user }),
    });
    expect(sides.map((side) => [side.calls.length, side.user.calls.map((call) => call.name)])).toEqual([
      [0, ["check_status_bar", "toggle_airplane_mode"]],
      [0, ["check_status_bar", "toggle_airplane_mode"]],
    ]);
    expect(trajectories.map((trajectory) => outcomes(trajectory.steps))).toEqual([
      ["grounded:check_status_bar", "grounded:toggle_airplane_mode"],
      ["grounded:check_status_bar", "grounded:toggle_airplane_mode"],
    ]);
  });

  it("self-unfolded, imagines the user side's answers in every rollout from a group-wide rehearsal side", async () => {
    const { agent, user } = players([]);
    const rehearsed: string[] = [];
    const rehearser = new ScriptedPolicy("rehearser", (request) => {
      rehearsed.push(request.role);
      return '<execution_result>{"imagined": true}</execution_result>';
    });
    const trajectories = await unfoldGroup({
      task,
      size: 2,
      actor: agent,
      environment: rehearsal(rehearser),
      userEnvironment: rehearsal(rehearser),
      users: () => simulateUser({ policy: user }),
    });
    expect(rehearsed).toEqual(["rehearse", "rehearse", "rehearse", "rehearse"]);
    expect(trajectories.map((trajectory) => outcomes(trajectory.steps))).toEqual([
      ["rehearsed:check_status_bar", "rehearsed:toggle_airplane_mode"],
      ["rehearsed:check_status_bar", "rehearsed:toggle_airplane_mode"],
    ]);
  });
});
