import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toJson } from "@envace/python-text";
import { reply, type RecordedRequest, type Reply } from "@envace/scripted-server";
import { ScriptedPolicy, simulateUser, unfold } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Tau2Environment } from "./environment.js";
import { loadDomain } from "./load.js";
import { toProtocolTask } from "./protocol-task.js";
import { readEntries, runTau2 } from "./run.js";
import { renderScenario, type Tau2Task } from "./task.js";
import { onLoopback } from "./testing/loopback.js";
import { readLabels, sharedDataOrSkip } from "./testing/shared-data.js";

const FinalHashes = z.object({ id: z.string(), final_db_hash: z.string(), final_user_db_hash: z.string() });

interface Body {
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
}

/**
 * A scripted model that plays both sides of a telecom ticket. The agent plays the gold actions
 * in order: its own as tool calls, the user's as a request ("Please run toggle_roaming on your
 * phone."). The user simulator names its ticket, runs what it is asked to on its phone (a tool
 * call of its own), reports the first line of the result, and stops when the agent is done.
 */
function playTelecom(tasks: readonly Tau2Task[]): (request: RecordedRequest) => Reply {
  return (request) => {
    const body = request.body as Body;
    const system = body.messages[0]?.content ?? "";
    const last = body.messages[body.messages.length - 1]!;
    if (system.includes("<scenario>")) {
      const task = tasks.find((candidate) => system.includes(renderScenario(candidate.user_scenario)))!;
      if (last.role === "tool") return reply.text(`Done: ${(last.content ?? "").split("\n")[0]!}`);
      if (last.content === "All done.") return reply.text("Thank you. ###STOP###");
      const asked = /^Please run (\w+) on your phone\.$/.exec(last.content ?? "")?.[1];
      const action = task.evaluation_criteria!.actions!.find((candidate) => candidate.requestor === "user" && candidate.name === asked);
      if (action !== undefined)
        return reply.toolCalls([{ id: `user_${action.action_id}`, name: action.name, arguments: toJson(action.arguments) as Record<string, unknown> }]);
      return reply.text(`Ticket ${task.id}: please help.`);
    }
    const ticket = /^Ticket (\S+):/.exec(body.messages.find((m) => m.role === "user")?.content ?? "")?.[1];
    const task = tasks.find((candidate) => candidate.id === ticket)!;
    // The agent sees its own results and what the user says, never the user's tool results.
    const done = body.messages.filter((m) => m.role === "tool" || (m.role === "user" && (m.content ?? "").startsWith("Done: "))).length;
    const next = task.evaluation_criteria!.actions![done];
    if (next === undefined) return reply.text("All done.");
    if (next.requestor === "user") return reply.text(`Please run ${next.name} on your phone.`);
    return reply.toolCalls([{ id: `agent_${next.action_id}`, name: next.name, arguments: toJson(next.arguments) as Record<string, unknown> }]);
  };
}

const data = sharedDataOrSkip("the end-to-end telecom run");
const smallTasks = (): string => join(data!, "tau2", "telecom", "tasks_small.json");

describe.skipIf(data === undefined)("an end-to-end telecom run (agent, user simulator with tools, evaluator) against a server on loopback", () => {
  const ids = ["[mobile_data_issue]user_abroad_roaming_disabled_off[PERSONA:Hard]", "[service_issue]overdue_bill_suspension[PERSONA:Easy]"];
  const loop = onLoopback(
    "telecom",
    () => ({ data: join(data!, "tau2"), tasks: smallTasks() }),
    (domain) => playTelecom(ids.map((id) => domain.tasks.find((task) => task.id === id)!)),
  );

  it("runs the user's tool calls on the phone, scores ENV_ASSERTION on both sides and reports upstream's DB result", async () => {
    const { domain, guidelines, server, policy } = loop;
    const out = mkdtempSync(join(tmpdir(), "tau2-telecom-e2e-"));
    const run = await runTau2({ domain, guidelines, participants: { agent: policy, user: policy }, taskIds: ids, out });

    const entries = readEntries(join(out, "entries.jsonl"));
    expect(entries.map((entry) => [entry.id, entry.reward, entry.termination])).toEqual(ids.map((id) => [id, 1, "user_stop"]));
    // The calls in the order executed, each on its own side; texts from upstream's labels.
    expect(entries[0]!.calls).toEqual([
      { name: "enable_roaming", requestor: "assistant", content: "Roaming enabled successfully", error: false },
      {
        name: "toggle_roaming",
        requestor: "user",
        content: "Data Roaming is now ON.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%",
        error: false,
      },
    ]);
    expect(entries[1]!.calls.map((call) => `${call.requestor}:${call.name}:${call.error}`)).toEqual([
      "assistant:send_payment_request:false",
      "user:make_payment:false",
      "assistant:resume_line:false",
      "user:reboot_device:false",
    ]);
    expect(entries[1]!.calls[1]!.content).toBe("Payment of 65.0 USD has been made for bill B1234321.");
    expect(entries.map((entry) => entry.assertions.map((assertion) => `${assertion.env_type}:${assertion.func_name}:${assertion.result}`))).toEqual([
      ["user:assert_mobile_data_status:true", "user:assert_internet_speed:true"],
      ["user:assert_service_status:true", "assistant:assert_no_overdue_bill:true"],
    ]);
    // Upstream's gold DB is built without the post-step sync: neither task matches it.
    expect(entries.map((entry) => entry.db_match)).toEqual([false, false]);
    expect(run.summary).toMatchObject({ scored: 2, successes: 2, db_match: { matched: 0, checked: 2 } });

    // The user simulator was offered the phone's 30 tools and the guidelines for users with tools;
    // the agent the 13 agent tools, and it never saw the phone's output.
    const userRequests = server.scripted.filter((request) => ((request.body as Body).messages[0]?.content ?? "").includes("<scenario>"));
    const agentRequests = server.scripted.filter((request) => !userRequests.includes(request));
    expect(new Set(userRequests.map((request) => (request.body as Body).tools?.length))).toEqual(new Set([30]));
    expect((userRequests[0]!.body as Body).messages[0]!.content).toContain("You have some tools to perform the actions on your end");
    expect(new Set(agentRequests.map((request) => (request.body as Body).tools?.length))).toEqual(new Set([13]));
    expect(agentRequests.some((request) => JSON.stringify(request.body).includes("Status Bar:"))).toBe(false);
    expect(userRequests.some((request) => JSON.stringify(request.body).includes("Status Bar:"))).toBe(true);
  });
});

describe.skipIf(data === undefined)("a telecom task in the rollout engine: the simulated user acts on the real phone", () => {
  it("runs the user's calls on the Tau2Environment's user side and ends on upstream's hashes", async () => {
    const domain = await loadDomain("telecom", { data: join(data!, "tau2"), tasks: smallTasks() });
    const task = domain.tasks.find((candidate) => candidate.id === "[mobile_data_issue]user_abroad_roaming_disabled_off[PERSONA:Hard]")!;
    const protocolTask = toProtocolTask(domain, task);
    expect((protocolTask.metadata.user_tools as unknown[]).length).toBe(30);
    const environment = new Tau2Environment(domain);
    const hermes = (name: string, args: object): string => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
    const agent = new ScriptedPolicy("agent", (request) =>
      request.messages.some((m) => m.role === "tool")
        ? "Please turn data roaming on on your phone."
        : hermes("enable_roaming", { customer_id: "C1001", line_id: "L1002" }),
    );
    const user = new ScriptedPolicy("user", (request) =>
      request.messages[request.messages.length - 1]!.role === "tool" ? "It works now. ###STOP###" : hermes("toggle_roaming", {}),
    );
    const trajectory = await unfold({
      task: protocolTask,
      actor: agent,
      environment,
      userEnvironment: environment.user!,
      users: simulateUser({ policy: user }),
    });

    expect(trajectory.termination).toEqual({ reason: "user_stop", marker: "###STOP###" });
    const userStep = trajectory.steps.find((step) => step.type === "user")!;
    expect(userStep.actions?.[0]?.outcomes.map((o) => [o.provenance, o.result])).toEqual([
      [
        "grounded",
        {
          status: "ok",
          callId: expect.any(String) as unknown,
          name: "toggle_roaming",
          content: "Data Roaming is now ON.\nStatus Bar: 📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%",
        },
      ],
    ]);
    // The labels' final hashes for this task (enable_roaming, then toggle_roaming on the phone).
    const label = readLabels(data!, "telecom", FinalHashes).find((candidate) => candidate.id === task.id)!;
    expect([environment.dbHash(), environment.userDbHash()]).toEqual([label.final_db_hash, label.final_user_db_hash]);
  });
});
