import { mkdtempSync, readdirSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GenerateRequest, Policy, Task } from "@envace/protocol";
import { rehearseThenCommit } from "@envace/rehearsal";
import { ScriptedPolicy, singleTurn, unfold } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { McpEnvironment } from "./environment.js";
import { listMcpTools } from "./session.js";
import { alive, stdioServer } from "./testing/spawn.js";

const task: Task = { id: "mcp-task", messages: [{ role: "user", content: "Who are you?" }], tools: [], metadata: {} };
const toolCall = (name: string, args: object = {}): string => `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

/** The processes whose parent is this one (Linux /proc). */
function children(): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        // Fields after the command name (which may hold spaces) in parentheses: state, ppid, …
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === process.pid ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}

/** Acts: asks the server's pid, then `after(pid)`; records the pid it was told. */
function pidAsker(after: (pid: number) => string): Policy & { pid?: number } {
  const state: Policy & { pid?: number } = {
    id: "asker",
    generate: (request: GenerateRequest, signal?: AbortSignal) => {
      const last = request.messages.at(-1);
      if (last?.role === "tool") state.pid = Number(last.content);
      const text = last?.role === "tool" ? after(state.pid!) : toolCall("whoami");
      return new ScriptedPolicy("asker", () => text).generate(request, signal);
    },
  };
  return state;
}

const proc = existsSync("/proc/self/stat") ? describe : describe.skip;

proc("no MCP server process outlives its rollout", { timeout: 120_000 }, () => {
  const before = children();

  it("when the agent stops", async () => {
    const policy = pidAsker(() => "You are talking to a server.");
    const trajectory = await unfold({ task, actor: policy, environment: new McpEnvironment({ server: stdioServer() }), users: singleTurn });
    expect(trajectory.termination).toEqual({ reason: "agent_stop" });
    expect(policy.pid).toBeGreaterThan(0);
    expect(alive(policy.pid!)).toBe(false);
    expect(children()).toEqual(before);
  });

  it("when the policy fails mid-rollout", async () => {
    const policy = pidAsker(() => {
      throw new Error("model server down");
    });
    await expect(unfold({ task, actor: policy, environment: new McpEnvironment({ server: stdioServer() }) })).rejects.toThrow("model server down");
    expect(alive(policy.pid!)).toBe(false);
    expect(children()).toEqual(before);
  });

  it("when the rollout is cancelled while a tool hangs, and when the server crashed", async () => {
    const controller = new AbortController();
    const hanging = pidAsker(() => {
      setTimeout(() => controller.abort(new Error("cancelled")), 50);
      return toolCall("hang");
    });
    const environment = new McpEnvironment({ server: stdioServer(), callTimeoutMs: 500 });
    await expect(unfold({ task, actor: hanging, environment, signal: controller.signal })).rejects.toThrow("cancelled");
    expect(alive(hanging.pid!)).toBe(false);

    let turn = 0;
    const crashing = pidAsker(() => (turn++ === 0 ? toolCall("crash") : "It crashed."));
    const trajectory = await unfold({ task, actor: crashing, environment: new McpEnvironment({ server: stdioServer() }), users: singleTurn });
    const last = trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : [])).at(-1);
    expect(last?.result).toMatchObject({ status: "error", error: { code: "MCP_SERVER_EXITED" } });
    expect(alive(crashing.pid!)).toBe(false);
    expect(children()).toEqual(before);
  });
});

describe("private rehearsal over an MCP-backed task", { timeout: 120_000 }, () => {
  it("makes zero requests to the MCP server while rehearsing; the Rehearse role sees the MCP tool specs", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "mcp-rehearsal-")), "requests.log");
    const mcpTask: Task = { ...task, messages: [{ role: "user", content: "Echo hi." }], tools: await listMcpTools(stdioServer()) };
    const requests: GenerateRequest[] = [];
    const policy = new ScriptedPolicy("p", (request) => {
      requests.push(request);
      switch (request.role) {
        case "act":
          return request.messages.at(-1)?.role === "tool" ? "It said hi." : toolCall("echo", { text: "hi" });
        case "rehearse":
          return '<execution_result>"hi"</execution_result>';
        case "reflect":
          return '<assessment>{"reached_goal": true, "went_wrong": "", "revision": ""}</assessment>';
        default:
          return '<memory>{"plan": "Call echo once.", "lessons": []}</memory>';
      }
    });
    let duringRehearsal: string | undefined = "not called";
    const episode = await rehearseThenCommit({
      task: mcpTask,
      policy,
      environment: new McpEnvironment({ server: stdioServer({ MCP_TEST_LOG: log }) }),
      setting: "parallel:2",
      users: singleTurn,
      rehearsal: { users: singleTurn },
      onRehearsed: () => {
        duringRehearsal = existsSync(log) ? readFileSync(log, "utf8") : undefined;
      },
    });
    // Not one request — not even a started server — until the committed execution.
    expect(duringRehearsal).toBeUndefined();
    expect(episode.rehearsal?.attempts).toHaveLength(2);
    const rehearsed = episode.rehearsal!.attempts.flatMap((a) => a.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : [])));
    expect(rehearsed.map((o) => [o.provenance, o.call.name])).toEqual([
      ["rehearsed", "echo"],
      ["rehearsed", "echo"],
    ]);
    const rehearsePrompt = requests
      .find((r) => r.role === "rehearse")!
      .messages.map((m) => m.content)
      .join("\n");
    expect(rehearsePrompt).toContain('"name":"echo","description":"Repeat a text."');
    expect(
      readFileSync(log, "utf8")
        .split("\n")
        .filter((line) => line.startsWith("tools/call")),
    ).toEqual(["tools/call echo"]);
    const committed = episode.committed.trajectory.steps.flatMap((s) => (s.type === "act" ? s.outcomes : []));
    expect(committed.map((o) => [o.provenance, o.result])).toEqual([["grounded", { status: "ok", callId: "call_1_0", name: "echo", content: "hi" }]]);
  });
});
