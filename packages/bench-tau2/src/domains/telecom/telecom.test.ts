import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonLoads, type PyDict } from "@envace/python-text";
import { beforeAll, describe, expect, it } from "vitest";
import { Tau2Environment } from "../../environment.js";
import { loadDomain, type Tau2Domain } from "../../load.js";
import type { Requestor } from "../../task.js";
import { sharedDataOrSkip } from "../../testing/shared-data.js";

// Upstream's own responses and both hashes (τ²-bench a2c024725189, its TelecomEnvironment's
// get_response, sync included) for 79 calls that reach every agent and phone tool, errors and
// odd arguments included, after each task's initial state. The calls are the fixture's. Made
// with pydantic 2.13; its error links are rewritten to 2.12, the version upstream pins.
interface UpstreamCall {
  name: string;
  requestor: Requestor;
  arguments: PyDict;
  content: string;
  error: boolean;
  db_hash: string;
  user_db_hash: string;
}

const sequences = (jsonLoads(readFileSync(new URL("../../testing/telecom-upstream.json", import.meta.url), "utf8")) as PyDict[]).map((sequence) => ({
  taskId: sequence.get("task_id") as string,
  calls: (sequence.get("calls") as PyDict[]).map((call) => Object.fromEntries(call) as unknown as UpstreamCall),
}));

const data = sharedDataOrSkip("the telecom tool sequences");

describe.skipIf(data === undefined)("telecom tools against upstream's answers", () => {
  let domain: Tau2Domain;
  beforeAll(async () => {
    domain = await loadDomain("telecom", { data: join(data!, "tau2"), tasks: join(data!, "tau2", "telecom", "tasks_small.json") });
  });

  it("covers every tool of both sides", () => {
    const names = new Set(sequences.flatMap((sequence) => sequence.calls.map((call) => call.name)));
    const tools = [...domain.definition.agent.toolkit.tools, ...domain.definition.user!.toolkit.tools].map((tool) => tool.name);
    expect(tools).toHaveLength(43);
    expect(tools.filter((name) => !names.has(name))).toEqual([]);
  });

  for (const sequence of sequences) {
    it(`answers ${sequence.taskId}'s ${sequence.calls.length} calls as upstream does, both hashes after each`, () => {
      const environment = Tau2Environment.forTask(
        domain,
        domain.tasks.find((task) => task.id === sequence.taskId)!,
      );
      sequence.calls.forEach((call, index) => {
        const response = environment.respond({ id: `c${index}`, name: call.name, arguments: call.arguments, requestor: call.requestor });
        expect({ index, name: call.name, content: response.content, error: response.error, db: environment.dbHash(), user: environment.userDbHash() }).toEqual({
          index,
          name: call.name,
          content: call.content,
          error: call.error,
          db: call.db_hash,
          user: call.user_db_hash,
        });
      });
    });
  }

  it("composes the policy as upstream does: the main policy and the manual, or the workflow", async () => {
    const dir = join(data!, "tau2", "telecom");
    const read = (file: string): string => readFileSync(join(dir, file), "utf8");
    const compose = (tech: string): string =>
      `<main_policy>\n${read("main_policy.md")}\n</main_policy>\n<tech_support_policy>\n${read(tech)}\n</tech_support_policy>`;
    expect(domain.policy).toBe(compose("tech_support_manual.md"));
    const workflow = await loadDomain("telecom", { data: dir, tasks: join(dir, "tasks_small.json"), policyVariant: "workflow" });
    expect(workflow.policy).toBe(compose("tech_support_workflow.md"));
    await expect(loadDomain("telecom", { data: dir, tasks: join(dir, "tasks_small.json"), policyVariant: "solo" })).rejects.toThrow(
      'policy variant "solo": known: manual, workflow',
    );
    await expect(loadDomain("mock", { data: join(data!, "tau2"), policyVariant: "workflow" })).rejects.toThrow(
      'policy variant "workflow": this domain has one policy',
    );
  });

  it("reconnects a VPN that break_vpn degraded with the same poor details, as upstream's shared object does", () => {
    const vpn = sequences.find((sequence) => sequence.taskId.includes("bad_vpn"))!;
    expect(vpn.calls.filter((call) => call.name === "check_vpn_status").map((call) => call.content)).toEqual([
      "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', 'server_performance': <PerformanceLevel.POOR: 'poor'>}",
      "VPN is ON and connected. Details: {'server_address': '192.168.1.1', 'protocol': 'OpenVPN', 'server_performance': <PerformanceLevel.POOR: 'poor'>}",
    ]);
  });
});
