import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { reply, startScriptedServer, type RecordedRequest } from "@envace/scripted-server";
import { describe, expect, it } from "vitest";
import { envace } from "../cli.js";
import { captureConsole, itRefuses, stderrWritten } from "../testing/console.js";

const run = (argv: string[]): Promise<number> => envace(["eval", "finmcp", ...argv]);
const fixtures = fileURLToPath(new URL("../../../../packages/bench-finmcp/src/testing/", import.meta.url));
const samples = join(fixtures, "fixtures", "samples.jsonl");
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("envace eval finmcp", { timeout: 120_000 }, () => {
  describe("explains what is missing (exit 2)", () => {
    itRefuses(run, [
      [["--data", samples], 2, "give --policy (or --predictions to score recorded predictions)"],
      [["--data", samples, "--policy", "openai:http://127.0.0.1:1/v1#m", "--out", "x"], 2, "--mcp is required to run a policy (the samples' tool server)"],
      [
        ["--data", samples, "--policy", "openai:http://127.0.0.1:1/v1#m", "--mcp", "server", "--out", "x", "--rehearsal", "parallel:0"],
        2,
        'envace eval finmcp: --rehearsal: rehearsal setting "parallel:0": expected none, parallel:N or sequential:N with N ≥ 1',
      ],
    ]);
  });

  it("scores recorded predictions offline, and keeps an earlier summary", async () => {
    const io = captureConsole();
    const out = join(mkdtempSync(join(tmpdir(), "finmcp-cli-")), "scores");
    expect(await run(["--data", samples, "--predictions", join(fixtures, "fixtures", "predictions.jsonl"), "--out", out])).toBe(0);
    expect(io.out()).toContain("overall      n    5  macro P  66.67 R  63.33 F1  64.00  micro F1  70.59  EM  20.00");
    expect(io.out()).toContain("dropped (error): 1");
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8"))).toMatchObject({ samples: 5, dropped: 1, exactMatch: 0.2 });
    expect(await run(["--data", samples, "--predictions", join(fixtures, "fixtures", "predictions.jsonl"), "--out", out])).toBe(1);
    expect(io.err()).toContain(`${join(out, "summary.json")} exists already: choose another --out`);
  });

  it("refuses predictions with a malformed line, even the last one, naming file and line, and scores nothing", async () => {
    const io = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "finmcp-cli-"));
    const predictions = join(dir, "predictions.jsonl");
    // s1 right; s2 cut short but ending in a newline: not a torn append, a bad user line.
    writeFileSync(predictions, '{"id": "s1", "predicted": ["get_stock_quote"]}\n{"id": "s2", "predicted": ["get_stock_quote"\n');
    const out = join(dir, "scores");
    expect(await run(["--data", samples, "--limit", "2", "--predictions", predictions, "--out", out])).toBe(1);
    expect(io.err().split("\n")).toEqual([expect.stringMatching(new RegExp(`^envace eval finmcp: ${escape(predictions)}:2: not JSON \\(`))]);
    expect(io.out()).toBe("");
    expect(existsSync(out)).toBe(false);
    // Without its final newline, the same line is refused too: the user's file is not an append the project made.
    writeFileSync(predictions, '{"id": "s1", "predicted": ["get_stock_quote"]}\n{"id": "s2", "predicted": ["get_stock_quote"');
    expect(await run(["--data", samples, "--limit", "2", "--predictions", predictions])).toBe(1);
    expect(io.err()).toContain(`${predictions}:2: not JSON (`);
    // JSON of the wrong shape names the field.
    writeFileSync(predictions, '{"id": "s1", "predicted": ["get_stock_quote"]}\n{"id": "s2", "predicted": "get_stock_quote"}\n');
    expect(await run(["--data", samples, "--limit", "2", "--predictions", predictions])).toBe(1);
    expect(io.err()).toContain(`${predictions}:2: predicted: `);
    expect(io.out()).toBe("");
  });

  it("stops at a tool server that cannot start, naming it, and writes nothing", async () => {
    const io = captureConsole();
    const out = join(mkdtempSync(join(tmpdir(), "finmcp-cli-")), "run");
    expect(await run(["--data", samples, "--mcp", "/nonexistent/finance-server --port 1", "--policy", "openai:http://127.0.0.1:1/v1#m", "--out", out])).toBe(1);
    expect(io.err()).toMatch(/^envace eval finmcp: MCP server \/nonexistent\/finance-server --port 1: .*ENOENT/);
    expect(existsSync(out)).toBe(false);
    expect(await run(["--data", samples, "--mcp", "https://finance.example.com/mcp", "--policy", "openai:http://127.0.0.1:1/v1#m", "--out", out])).toBe(1);
    // No resolver answers for that name here; one that did would give a non-loopback address. Either way it is refused.
    expect(io.err()).toMatch(
      /MCP server https:\/\/finance\.example\.com\/mcp(: finance\.example\.com cannot be resolved \(\w+\), so it cannot be shown to be on loopback| \(finance\.example\.com resolves to [^)]+\) is neither a local process \(stdio\) nor on loopback)/,
    );
  });

  it("runs a model on the first samples with the fixture server over stdio", async () => {
    const model = await startScriptedServer({
      script: (request: RecordedRequest) => {
        const { messages } = request.body as { messages: { role: string }[] };
        return messages.at(-1)?.role === "tool" ? reply.text("Done.") : reply.toolCalls([{ name: "get_stock_quote", arguments: { symbol: "AAPL" } }]);
      },
    });
    try {
      const io = captureConsole();
      const out = join(mkdtempSync(join(tmpdir(), "finmcp-cli-")), "run");
      const mcp = `${process.execPath} --import tsx ${join(fixtures, "finance-server.ts")}`;
      expect(await run(["--data", samples, "--mcp", mcp, "--policy", `openai:${model.baseURL}#scripted-model`, "--out", out, "--limit", "2"])).toBe(0);
      // s1 wants [quote]: exact; s2 wants [statement, quote]: TP 1, FN 1, so P 1, R 1/2, F1 2/3.
      expect(io.out()).toContain("overall      n    2  macro P 100.00 R  75.00 F1  83.33");
      const entries = readFileSync(join(out, "entries.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { id: string; predicted: string[] });
      expect(entries.map((e) => [e.id, e.predicted]).sort()).toEqual([
        ["s1", ["get_stock_quote"]],
        ["s2", ["get_stock_quote"]],
      ]);
    } finally {
      await model.close();
    }
  });

  it("a killed run resumes to the summary of an uninterrupted one; --resume is a deprecated no-op", async () => {
    const model = await startScriptedServer({
      script: (request: RecordedRequest) => {
        const { messages } = request.body as { messages: { role: string }[] };
        return messages.at(-1)?.role === "tool" ? reply.text("Done.") : reply.toolCalls([{ name: "get_stock_quote", arguments: { symbol: "AAPL" } }]);
      },
    });
    try {
      captureConsole();
      const dir = mkdtempSync(join(tmpdir(), "finmcp-cli-"));
      const mcp = `${process.execPath} --import tsx ${join(fixtures, "finance-server.ts")}`;
      const argv = ["--data", samples, "--mcp", mcp, "--policy", `openai:${model.baseURL}#scripted-model`, "--limit", "2", "--concurrency", "1"];
      const out = join(dir, "killed");
      expect(await run([...argv, "--out", out])).toBe(0);
      // What the uninterrupted run wrote, then the same run as if killed mid-line and before its summary.
      const whole = readFileSync(join(out, "summary.json"), "utf8");
      const text = readFileSync(join(out, "entries.jsonl"), "utf8");
      writeFileSync(join(out, "entries.jsonl"), text.slice(0, text.length - 15));
      rmSync(join(out, "summary.json"));
      const asked = model.requests.length;
      expect(await run([...argv, "--out", out, "--resume"])).toBe(0);
      expect(model.requests.length).toBeGreaterThan(asked);
      expect(readFileSync(join(out, "summary.json"), "utf8")).toBe(whole);
      expect(JSON.parse(whole)).toMatchObject({ samples: 2, exactMatch: 0.5 });
      const logged = stderrWritten();
      expect(logged).toContain("--resume is deprecated and does nothing: a run directory with the same options resumes by itself");
      expect(logged).toContain(`resuming ${out}: 1 of 2 entries already done, 1 to run`);
    } finally {
      await model.close();
    }
  });
});
