import type { GenerateRequest, WireToolCall } from "@envace/protocol";
import { pyDumps } from "@envace/python-text";
import { ScriptedPolicy } from "@envace/trajectory";
import { beforeAll, describe, expect, it } from "vitest";
import { agentSystemPrompt, DEFAULT_AGENT_INSTRUCTION, FIRST_AGENT_MESSAGE, parseTurn } from "./conversation.js";
import { Tau2Environment } from "./environment.js";
import { loadDomain, loadUserGuidelines, type Tau2Domain, type UserGuidelines } from "./load.js";
import { toProtocolTask } from "./protocol-task.js";
import { simulate } from "./simulate.js";
import type { Tau2Task } from "./task.js";
import { writeMockData } from "./testing/mock-fixture.js";

const toolCall = (id: string, name: string, args: Record<string, unknown>): WireToolCall => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});

describe("a τ² conversation, turn by turn", () => {
  let domain: Tau2Domain;
  let guidelines: UserGuidelines;
  let task: (id: string) => Tau2Task;

  beforeAll(async () => {
    const data = writeMockData();
    domain = await loadDomain("mock", { data });
    guidelines = await loadUserGuidelines(data);
    task = (id) => domain.tasks.find((t) => t.id === id)!;
  });

  it("opens with the agent's greeting, routes tool calls to the environment and ends on the user's stop", async () => {
    const requests: GenerateRequest[] = [];
    const agent = ScriptedPolicy.queues("agent", {
      act: [{ text: "", toolCalls: [toolCall("c1", "update_task_status", { task_id: "task_1", status: "completed" })] }, "Marked completed."],
    });
    const user = ScriptedPolicy.queues("user", {
      user: [
        "Please mark task_1 completed.",
        { text: "", toolCalls: [toolCall("u1", "dismiss_notification", { notification_id: "notif_1" })] },
        "Thanks! ###STOP###",
      ],
    });
    const spy = (policy: ScriptedPolicy) => ({ id: policy.id, generate: (request: GenerateRequest) => (requests.push(request), policy.generate(request)) });
    const environment = new Tau2Environment(domain);
    const simulation = await simulate({ environment, task: task("complete"), agent: spy(agent), user: spy(user), guidelines });

    expect(simulation.termination_reason).toBe("user_stop");
    expect(simulation.messages.map((m) => `${m.role}${m.role === "tool" ? `:${m.requestor}` : ""}`)).toEqual([
      "assistant",
      "user",
      "assistant",
      "tool:assistant",
      "assistant",
      "user",
      "tool:user",
      "user",
    ]);
    expect(simulation.messages[0]).toEqual({ role: "assistant", content: FIRST_AGENT_MESSAGE, tool_calls: null });
    expect(simulation.messages[3]).toMatchObject({
      content: '{"task_id": "task_1", "title": "Write report", "description": "Quarterly", "status": "completed"}',
      error: false,
    });
    expect(simulation.messages[6]).toMatchObject({ content: "Notification notif_1 dismissed", requestor: "user" });
    expect(simulation.db_hash).toBe(environment.dbHash());
    expect(simulation.generations).toHaveLength(5);

    const [firstUser, firstAgent, , secondUser] = requests;
    // The user sees the guidelines for users with tools, its scenario, and its tools.
    expect(firstUser!.role).toBe("user");
    expect(firstUser!.messages[0]!.content).toContain("use your tools");
    expect(firstUser!.messages[0]!.content).toContain("<scenario>\nPersona:\n\tTerse.\nInstructions:\n\tAsk the agent");
    expect(firstUser!.tools.map((t) => t.function.name)).toEqual(["check_notifications", "dismiss_notification"]);
    expect(firstUser!.messages.slice(1)).toEqual([{ role: "user", content: FIRST_AGENT_MESSAGE }]);
    // The agent sees the policy, the conversation and its own tools; never the user's tool traffic.
    expect(firstAgent!.role).toBe("act");
    expect(firstAgent!.messages[0]).toEqual({ role: "system", content: agentSystemPrompt(domain.policy) });
    expect(firstAgent!.tools.map((t) => t.function.name)).toEqual(["create_task", "get_users", "update_task_status", "transfer_to_human_agents"]);
    // Roles are swapped for the user: its own messages are the assistant's.
    expect(secondUser!.messages.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const lastUser = requests[requests.length - 1]!;
    expect(lastUser.messages.slice(-2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "u1", type: "function", function: { name: "dismiss_notification", arguments: '{"notification_id": "notif_1"}' } }],
      },
      { role: "tool", tool_call_id: "u1", content: "Notification notif_1 dismissed" },
    ]);
  });

  it("offers the task to the protocol's side: starting context, tools, gold actions, evaluation metadata", async () => {
    const protocol = toProtocolTask(domain, task("history"));
    expect(protocol.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(protocol.messages[2]).toMatchObject({
      tool_calls: [{ id: "h1", function: { name: "create_task", arguments: '{"user_id": "user_1", "title": "Plan"}' } }],
    });
    expect(protocol.goldActions).toEqual([{ id: "x0", name: "update_task_status", arguments: { task_id: "task_2", status: "completed" } }]);
    expect(protocol.metadata).toMatchObject({
      benchmark: "tau2",
      domain: "mock",
      reward_basis: ["DB"],
      user_scenario: "Instructions:\n\tYou already asked for a task; now say thanks and stop.",
    });
    const environment = new Tau2Environment(domain);
    await environment.reset(protocol);
    expect(environment.dbHash()).toBe(Tau2Environment.forTask(domain, task("history")).dbHash());
    await expect(environment.reset({ ...protocol, id: "unknown" })).rejects.toThrow('task "unknown" is not a mock task');
  });

  it("starts from a task's message history where it left off", async () => {
    const agent = ScriptedPolicy.queues("agent", { act: [] });
    const user = ScriptedPolicy.queues("user", { user: ["Thanks. ###STOP###"] });
    const simulation = await simulate({ environment: new Tau2Environment(domain), task: task("history"), agent, user, guidelines });
    expect(simulation.termination_reason).toBe("user_stop");
    expect(simulation.messages.slice(0, 4)).toEqual(task("history").initial_state!.message_history);
    expect(simulation.messages).toHaveLength(5);
  });

  it("stops after max_steps messages, counting every message", async () => {
    const agent = new ScriptedPolicy("agent", () => "How else can I help?");
    const user = new ScriptedPolicy("user", () => "Tell me more.");
    const simulation = await simulate({ environment: new Tau2Environment(domain), task: task("free"), agent, user, guidelines, maxSteps: 6 });
    expect(simulation.termination_reason).toBe("max_steps");
    expect(simulation.messages).toHaveLength(7);
  });

  it("stops after max_errors failed tool calls, once their results are delivered", async () => {
    const agent = new ScriptedPolicy("agent", () => ({ text: "", toolCalls: [toolCall("x", "delete_everything", {})] }));
    const user = new ScriptedPolicy("user", () => "Go on.");
    const simulation = await simulate({ environment: new Tau2Environment(domain), task: task("free"), agent, user, guidelines, maxErrors: 3 });
    expect(simulation.termination_reason).toBe("too_many_errors");
    const errors = simulation.messages.filter((m) => m.role === "tool" && m.error);
    expect(errors).toHaveLength(3);
    expect(errors[0]).toMatchObject({ content: "Error: Tool 'delete_everything' not found." });
  });

  it("ends with agent_error on malformed output, user_error likewise, and infrastructure_error when a policy fails", async () => {
    const user = new ScriptedPolicy("user", () => "Hello.");
    const badArguments = new ScriptedPolicy("agent", () => ({
      text: "",
      toolCalls: [{ id: "b", type: "function", function: { name: "get_users", arguments: "{oops" } }],
    }));
    const empty = new ScriptedPolicy("agent", () => "<think>hmm</think>");
    const down = new ScriptedPolicy("agent", () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:8000");
    });
    const run = (agent: ScriptedPolicy, userPolicy = user) =>
      simulate({ environment: new Tau2Environment(domain), task: task("free"), agent, user: userPolicy, guidelines });
    expect(await run(badArguments)).toMatchObject({
      termination_reason: "agent_error",
      error: expect.stringMatching(/get_users\): arguments are not JSON/) as unknown,
    });
    expect(await run(empty)).toMatchObject({ termination_reason: "agent_error", error: "empty message: no text and no tool call" });
    expect(await run(down)).toMatchObject({ termination_reason: "infrastructure_error", error: "agent: connect ECONNREFUSED 127.0.0.1:8000" });
    expect(await run(empty, new ScriptedPolicy("user", () => "   "))).toMatchObject({ termination_reason: "user_error" });
  });
});

describe("reading a generation", () => {
  const generation = (text: string, toolCalls?: WireToolCall[]) => ({
    role: "act" as const,
    text,
    ...(toolCalls === undefined ? {} : { toolCalls }),
    promptTokens: [],
    outputTokens: [],
    logprobs: null,
    finishReason: "stop" as const,
  });
  const ids = (index: number) => `call_${index}`;

  it("keeps Python's view of the arguments: 2.0 stays a float, key order stays", () => {
    const parsed = parseTurn(
      generation(
        "",
        [toolCall("c", "send_certificate", {})].map((c) => ({ ...c, function: { ...c.function, arguments: '{"user_id": "u", "amount": 2.0}' } })),
      ),
      "assistant",
      ids,
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(pyDumps(parsed.message.tool_calls![0]!.arguments)).toBe('{"user_id": "u", "amount": 2.0}');
  });

  it("reads Hermes <tool_call> blocks when there are no native calls, and separates reasoning", () => {
    const parsed = parseTurn(generation('<think>check</think>Looking.<tool_call>{"name": "get_users", "arguments": {}}</tool_call>'), "assistant", ids);
    expect(parsed).toEqual({
      ok: true,
      reasoning: "check",
      message: { role: "assistant", content: "Looking.", tool_calls: [{ id: "call_0", name: "get_users", arguments: new Map(), requestor: "assistant" }] },
    });
  });

  it("gives calls without ids (or with repeated ids) fresh ones", () => {
    const parsed = parseTurn(generation("", [toolCall("same", "a", {}), toolCall("same", "b", {})]), "user", ids);
    expect(parsed.ok && parsed.message.tool_calls!.map((call) => [call.id, call.requestor])).toEqual([
      ["same", "user"],
      ["call_1", "user"],
    ]);
  });

  it("wraps the policy with paraphrased instructions that a user can replace", () => {
    expect(agentSystemPrompt("POLICY")).toBe(`<instructions>\n${DEFAULT_AGENT_INSTRUCTION}\n</instructions>\n<policy>\nPOLICY\n</policy>`);
    expect(agentSystemPrompt("POLICY", "Upstream's text.")).toBe("<instructions>\nUpstream's text.\n</instructions>\n<policy>\nPOLICY\n</policy>");
  });
});
