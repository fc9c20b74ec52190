import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GenerateRequest, Policy } from "@envace/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Tau2Environment } from "./environment.js";
import { loadDomain, type Tau2Domain } from "./load.js";
import { scriptedGeneration } from "./oracle.js";
import { runTau2 } from "./run.js";
import { simulate } from "./simulate.js";
import { isSoloTask, soloOracle } from "./solo.js";
import { readLabels, sharedDataOrSkip } from "./testing/shared-data.js";

// Upstream's solo mode (tau2-bench a2c024725189: telecom's `get_environment(solo_mode=True)`,
// `LLMSoloAgent`, the orchestrator with a `DummyUser`), checked against its files and labels.

// Upstream's `AGENT_SOLO_INSTRUCTION` with `{stop_function_name}` filled in as `LLMSoloAgent` does.
const UPSTREAM_SOLO_INSTRUCTION = `You are a customer service agent that helps the user according to the <policy> provided below.
You will be provided with a ticket that contains the user's request.
You will need to plan and call the appropriate tools to solve the ticket.

You cannot communicate with the user, only make tool calls.
Stop when you consider that you have solved the ticket.
To do so, send a message containing a single tool call to the \`done\` tool. Do not include any other tool calls in this last message.

Always follow the policy. Always make sure you generate valid JSON only.`;

const Label = z.object({
  id: z.string(),
  calls: z.array(z.object({ name: z.string(), requestor: z.enum(["assistant", "user"]), content: z.string(), error: z.boolean() })),
  final_db_hash: z.string(),
  final_user_db_hash: z.string(),
  db_match: z.boolean(),
});

/** A policy that remembers every request it is sent and answers with `inner`. */
function recording(inner: (request: GenerateRequest) => Policy): Policy & { requests: GenerateRequest[] } {
  const requests: GenerateRequest[] = [];
  return { id: "recording", requests, generate: (request, signal) => (requests.push(request), inner(request).generate(request, signal)) };
}

const data = sharedDataOrSkip("telecom's solo mode");

describe.skipIf(data === undefined)("telecom in upstream's solo mode", () => {
  let dir: string;
  let tasksFile: string;
  let solo: Tau2Domain;
  const read = (file: string): string => readFileSync(join(dir, file), "utf8");

  beforeAll(async () => {
    dir = join(data!, "tau2", "telecom");
    tasksFile = join(dir, "tasks_small.json");
    solo = await loadDomain("telecom", { data: join(data!, "tau2"), tasks: tasksFile, solo: true });
  });

  it("composes the solo policy from main_policy_solo.md and the manual, as upstream", () => {
    expect(solo.policy).toBe(
      `<main_policy>\n${read("main_policy_solo.md")}\n</main_policy>\n<tech_support_policy>\n${read("tech_support_manual.md")}\n</tech_support_policy>`,
    );
  });

  it("composes the solo workflow policy from tech_support_workflow_solo.md, and names that file when it is missing", async () => {
    await expect(loadDomain("telecom", { data: dir, tasks: tasksFile, solo: true, policyVariant: "workflow" })).rejects.toThrow(
      `${join(dir, "tech_support_workflow_solo.md")}: no such file`,
    );
    const copy = mkdtempSync(join(tmpdir(), "tau2-telecom-solo-"));
    cpSync(dir, copy, { recursive: true });
    writeFileSync(join(copy, "tech_support_workflow_solo.md"), "Solo workflow.\n");
    const workflow = await loadDomain("telecom", { data: copy, tasks: tasksFile, solo: true, policyVariant: "workflow" });
    expect(workflow.policy).toBe(
      `<main_policy>\n${read("main_policy_solo.md")}\n</main_policy>\n<tech_support_policy>\nSolo workflow.\n\n</tech_support_policy>`,
    );
  });

  it("refuses solo mode for domains upstream refuses it for, and mock's solo policy is policy_solo.md", async () => {
    await expect(loadDomain("retail", { data: join(data!, "tau2"), solo: true })).rejects.toThrow(
      "the retail domain has no solo mode (mock and telecom have one)",
    );
    const mock = await loadDomain("mock", { data: join(data!, "tau2"), solo: true });
    expect(mock.policy).toBe(readFileSync(join(data!, "tau2", "mock", "policy_solo.md"), "utf8"));
  });

  it("accepts the tasks upstream's solo agent accepts: every telecom task; 7 of the 10 mock tasks", async () => {
    expect(solo.tasks.filter(isSoloTask)).toHaveLength(20);
    const mock = await loadDomain("mock", { data: join(data!, "tau2") });
    // By hand from mock/tasks.json: no gold action (nl_eval), or a user message in the history.
    expect(mock.tasks.filter((task) => !isSoloTask(task)).map((task) => task.id)).toEqual([
      "create_task_1_nl_eval",
      "update_task_with_message_history",
      "update_task_with_history_and_env_assertions",
    ]);
  });

  it("shows the agent upstream's solo prompt with the ticket, the tools of both sides and done, and never a user", async () => {
    const task = solo.tasks[0]!;
    const agent = recording(() => soloOracle(task));
    const user = recording(() => soloOracle(task));
    await runTau2({
      domain: solo,
      guidelines: { plain: "", tools: "" },
      participants: { agent, user },
      taskIds: [task.id],
      agentInstruction: UPSTREAM_SOLO_INSTRUCTION,
    });

    const upstream = `<instructions>\n${UPSTREAM_SOLO_INSTRUCTION}\n</instructions>\n<policy>\n<main_policy>\n${read("main_policy_solo.md")}\n</main_policy>\n<tech_support_policy>\n${read("tech_support_manual.md")}\n</tech_support_policy>\n</policy>\n<ticket>\n${task.ticket!}\n</ticket>`;
    expect(agent.requests[0]!.messages).toEqual([{ role: "system", content: upstream }]);
    const tools = agent.requests[0]!.tools.map((tool) => tool.function.name);
    expect(tools).toHaveLength(13 + 30 + 1);
    expect(tools.slice(0, 13)).toEqual(solo.definition.agent.toolkit.tools.map((tool) => tool.name));
    expect(tools.slice(13, 43)).toEqual(solo.definition.user!.toolkit.tools.map((tool) => tool.name));
    expect(tools[43]).toBe("done");
    expect(user.requests).toEqual([]);
  });

  it("replays every task's gold actions as the agent's own calls: upstream's answers and hashes, reward 1, agent_stop", async () => {
    const out = mkdtempSync(join(tmpdir(), "tau2-telecom-solo-run-"));
    const run = await runTau2({ domain: solo, guidelines: { plain: "", tools: "" }, participants: "oracle", out });
    expect(run.entries.map((entry) => [entry.id, entry.reward, entry.termination])).toEqual(solo.tasks.map((task) => [task.id, 1, "agent_stop"]));
    expect(run.summary).toMatchObject({ domain: "telecom solo", tasks: 20, successes: 20 });

    // Upstream routes a solo agent's call to a phone tool to the phone, synced as in a dual run:
    // the labels' answers and final hashes, every call now the agent's.
    const labels = readLabels(data!, "telecom", Label);
    for (const label of labels) {
      const entry = run.entries.find((candidate) => candidate.id === label.id)!;
      expect({ id: label.id, calls: entry.calls, db: entry.db_hash, user: entry.user_db_hash, match: entry.db_match }).toEqual({
        id: label.id,
        calls: label.calls.map((call) => ({ ...call, requestor: "assistant" })),
        db: label.final_db_hash,
        user: label.final_user_db_hash,
        match: label.db_match,
      });
    }
    expect(readFileSync(join(out, "simulations.jsonl"), "utf8")).not.toContain('"role": "user"');
  });

  it("refuses the user's own calls in solo mode, as upstream's make_tool_call", () => {
    const environment = Tau2Environment.forTask(solo, solo.tasks[0]!);
    const response = environment.respond({ id: "c1", name: "toggle_roaming", arguments: new Map(), requestor: "user" });
    expect([response.content, response.error]).toEqual(["Error: User tool calls are not allowed in solo mode", true]);
  });

  it("ends on done, dropping the calls sent with it, and calls a text message an agent error", async () => {
    const task = solo.tasks.find((candidate) => candidate.id === "[service_issue]airplane_mode_on[PERSONA:None]")!;
    const call = (name: string, id: string) => ({ id, type: "function" as const, function: { name, arguments: "{}" } });
    const both: Policy = {
      id: "both",
      generate: (request) => Promise.resolve(scriptedGeneration(request, "", [call("toggle_airplane_mode", "a"), call("done", "b")])),
    };
    const stopped = await simulate({ environment: new Tau2Environment(solo), task, agent: both, user: both, guidelines: { plain: "", tools: "" } });
    expect(stopped.termination_reason).toBe("agent_stop");
    expect(stopped.messages).toEqual([{ role: "assistant", content: "###STOP###", tool_calls: null }]);

    const chatty: Policy = { id: "chatty", generate: (request) => Promise.resolve(scriptedGeneration(request, "How can I help?")) };
    const failed = await simulate({ environment: new Tau2Environment(solo), task, agent: chatty, user: chatty, guidelines: { plain: "", tools: "" } });
    expect([failed.termination_reason, failed.error]).toEqual(["agent_error", "solo mode: the agent may only call tools"]);
  });
});
