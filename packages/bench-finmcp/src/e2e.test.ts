import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpEnvironment } from "@envace/mcp";
import { OpenAIChatPolicy } from "@envace/models";
import { reply, startScriptedServer, type RecordedRequest, type Reply, type ScriptedServer, type ScriptedToolCall } from "@envace/scripted-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inferSample } from "./inference.js";
import { runFinMcp } from "./run.js";
import { loadSamples, type FinMcpSample } from "./sample.js";
import { financeServer, fixture } from "./testing/spawn.js";

interface Body {
  messages: { role: string; content: string | null; tool_calls?: { function: { name: string } }[] }[];
  tools?: { function: { name: string } }[];
}

const quote = (symbol: string): ScriptedToolCall => ({ name: "get_stock_quote", arguments: { symbol } });
// What the scripted model does for each user message: its tool calls round by round, then an answer.
const plans: Record<string, ScriptedToolCall[][]> = {
  "What is AAPL trading at?": [[quote("AAPL")]],
  "What was MSFT's 2023 revenue, and what is its price now?": [
    [quote("MSFT")],
    [{ name: "get_financial_statement", arguments: { symbol: "MSFT", year: 2023 } }],
  ],
  "USD to CNY rate?": [],
  "NAV of fund 110011?": [[{ name: "get_fund_nav", arguments: { fund_code: "110011" } }]],
  "And in USD? Use the USD/CNY rate.": [[{ name: "get_exchange_rate", arguments: { base: "USD", quote: "CNY" } }]],
  "Any semiconductor news? Then quote AAPL and MSFT.": [[{ name: "search_news", arguments: { keyword: "semiconductor" } }, quote("AAPL")], [quote("NOPE")]],
  "EUR/USD?": [[quote("EUR")]],
};

function model(request: RecordedRequest): Reply {
  const { messages } = request.body as Body;
  const user = messages.map((m) => m.role).lastIndexOf("user");
  const rounds = messages.slice(user + 1).filter((m) => m.role === "assistant").length;
  const plan = plans[messages[user]!.content ?? ""];
  if (plan === undefined) throw new Error(`unscripted user message ${messages[user]!.content}`);
  return rounds < plan.length ? reply.toolCalls(plan[rounds]!) : reply.text(`answer after ${rounds} rounds`);
}

// One Node MCP server per sample: several seconds each on a loaded machine.
describe("FinMCP end to end: a scripted OpenAI-compatible model and the fixture finance server over stdio", { timeout: 180_000 }, () => {
  let server: ScriptedServer;
  let samples: FinMcpSample[];
  beforeAll(async () => {
    server = await startScriptedServer({ script: model });
    samples = await loadSamples(fixture("samples.jsonl"));
  });
  afterAll(() => server.close());

  it("runs every sample turn by turn from the ground-truth prefix, executes calls through MCP, scores and resumes", async () => {
    const out = mkdtempSync(join(tmpdir(), "finmcp-run-"));
    const policy = new OpenAIChatPolicy({ baseURL: server.baseURL, model: "scripted-model", tokenData: "off" });
    const environments: McpEnvironment[] = [];
    const environment = (sample: FinMcpSample): McpEnvironment => {
      const env = new McpEnvironment({ server: financeServer(), allow: () => sample.toolNames });
      environments.push(env);
      return env;
    };
    const { entries, summary } = await runFinMcp({ samples, policy, environment, out, concurrency: 2 });

    expect(entries.map((e) => [e.id, e.predicted])).toEqual([
      ["s1", ["get_stock_quote"]],
      ["s2", ["get_stock_quote", "get_financial_statement"]],
      ["s3", []],
      ["s4", ["get_fund_nav", "get_exchange_rate"]],
      ["s5", ["search_news", "get_stock_quote", "get_stock_quote"]],
      ["s6", ["get_stock_quote"]],
    ]);
    // Real answers from the server; a failing tool and a tool off the sample's list are typed errors.
    const s1 = entries[0]!.turns[0]!;
    expect(s1).toEqual({
      user: 1,
      calls: [{ name: "get_stock_quote", arguments: { symbol: "AAPL" }, status: "ok" }],
      answer: "answer after 1 rounds",
      rounds: 2,
    });
    expect(entries[4]!.turns[0]!.calls.map((c) => c.code ?? c.status)).toEqual(["ok", "ok", "MCP_TOOL_ERROR"]);
    expect(entries[5]!.turns[0]!.calls[0]).toMatchObject({ name: "get_stock_quote", status: "error", code: "TOOL_NOT_AVAILABLE" });
    expect(entries[3]!.turns.map((t) => t.user)).toEqual([1, 5]);

    // Scores by hand: F1 1, 1, 0, 1, 1, 0; exact s1, s4, s5; Σ TP 8, FP 1 (s6), FN 2 (s3, s6).
    expect(summary.samples).toBe(6);
    expect(summary.macro.f1).toBeCloseTo(4 / 6, 12);
    expect(summary.exactMatch).toBe(0.5);
    expect(summary.micro).toMatchObject({ tp: 8, fp: 1, fn: 2 });
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))).toEqual(summary);

    // The second turn of s4 starts from the reference dialogue, not from what the model did.
    const second = server.scripted.map((r) => r.body as Body).find((b) => b.messages.at(-1)?.content === "And in USD? Use the USD/CNY rate.")!;
    expect(second.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    expect(second.messages[3]!.content).toBe('{"nav": 2.3571}');
    // Offered: the server's specs of the sample's tools (its tool_list holds names), in the server's order.
    expect(second.tools?.map((t) => t.function.name)).toEqual(["get_stock_quote", "get_exchange_rate", "get_fund_nav"]);
    // Every sample's server was stopped.
    expect(environments.map((env) => env.pid)).toEqual(environments.map(() => null));

    // Resuming finds nothing left to run and asks the model nothing.
    const asked = server.requests.length;
    const notices: string[] = [];
    const resumed = await runFinMcp({ samples, policy, environment, out, notify: (line) => notices.push(line) });
    expect(notices).toEqual([`${out} already holds the 6 entries asked for: nothing left to run; the summary is made again from them`]);
    expect(resumed.entries).toEqual([]);
    expect(resumed.summary).toEqual(summary);
    expect(server.requests.length).toBe(asked);
    await expect(runFinMcp({ samples, policy, environment, out, maxRounds: 5 })).rejects.toThrow(
      `${out} holds a run with other options (maxRounds: (none) → 5)`,
    );
  });

  it("stops a turn after maxRounds model calls that all call tools", async () => {
    const looping = await startScriptedServer({ script: () => reply.toolCalls([{ name: "get_exchange_rate", arguments: { base: "USD", quote: "CNY" } }]) });
    try {
      const policy = new OpenAIChatPolicy({ baseURL: looping.baseURL, model: "scripted-model", tokenData: "off" });
      const sample = samples.find((s) => s.id === "s3")!;
      const turns = await inferSample({
        sample,
        policy,
        environment: new McpEnvironment({ server: financeServer(), allow: () => sample.toolNames }),
        maxRounds: 3,
      });
      expect(turns).toHaveLength(1);
      expect(turns[0]).toMatchObject({ rounds: 3, answer: null });
      expect(turns[0]!.calls.map((c) => c.status)).toEqual(["ok", "ok", "ok"]);
      expect(looping.scripted.length).toBe(3);
    } finally {
      await looping.close();
    }
  });

  it("rehearses privately before each user turn: the memory conditions the turn, the tool server is not called while rehearsing", async () => {
    const seen: Body[] = [];
    const roleOf = (body: Body): string => {
      const text = body.messages.map((m) => m.content ?? "").join("\n");
      if (text.includes("## Tool call to simulate")) return "rehearse";
      if (text.startsWith("You review one private rehearsal")) return "reflect";
      if (text.startsWith("You condense the private rehearsals")) return "summarize";
      return "act";
    };
    const rehearsing = await startScriptedServer({
      script: (request) => {
        const body = request.body as Body;
        seen.push(body);
        switch (roleOf(body)) {
          case "rehearse":
            return reply.text('<execution_result>{"rate": 7.1}</execution_result>');
          case "reflect":
            return reply.text('<assessment>{"reached_goal": true, "went_wrong": "", "revision": ""}</assessment>');
          case "summarize":
            return reply.text('<memory>{"plan": "Ask get_exchange_rate for USD/CNY once.", "lessons": []}</memory>');
          default:
            return model(request);
        }
      },
    });
    try {
      const policy = new OpenAIChatPolicy({ baseURL: rehearsing.baseURL, model: "scripted-model", tokenData: "off" });
      const sample = samples.find((s) => s.id === "s4")!;
      const turns = await inferSample({
        sample,
        policy,
        environment: new McpEnvironment({ server: financeServer(), allow: () => sample.toolNames }),
        rehearsal: "parallel:2",
      });
      expect(turns.map((t) => t.calls.map((c) => [c.name, c.status]))).toEqual([[["get_fund_nav", "ok"]], [["get_exchange_rate", "ok"]]]);
      expect(turns.map((t) => [t.rehearsal?.attempts, t.rehearsal?.environmentCalls])).toEqual([
        [2, 0],
        [2, 0],
      ]);
      expect(turns[1]!.rehearsal!.memory).toContain("Ask get_exchange_rate for USD/CNY once.");
      // Each turn: two attempts (an Act call, a rehearsed result, a final Act), two reflections, one summary; then the real turn.
      expect(seen.map(roleOf).filter((r) => r !== "act")).toEqual([
        "rehearse",
        "rehearse",
        "reflect",
        "reflect",
        "summarize",
        "rehearse",
        "rehearse",
        "reflect",
        "reflect",
        "summarize",
      ]);
      // The real turn's requests carry the memory in the system message.
      const real = seen.filter((b) => roleOf(b) === "act" && b.messages[0]!.content!.includes("Ask get_exchange_rate for USD/CNY once."));
      expect(real.length).toBeGreaterThan(0);
    } finally {
      await rehearsing.close();
    }
  });
});
