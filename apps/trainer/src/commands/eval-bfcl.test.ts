import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { reply, startScriptedServer } from "@envace/scripted-server";
import { describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";
import { captureConsole, itRefuses, stderrWritten } from "../testing/console.js";

const run = (argv: string[]): Promise<number> => envace(["eval", "bfcl", ...argv]);

const repoRoot = resolve(import.meta.dirname, "../../../..");
const dataDir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data", "bfcl");
const hasData = existsSync(dataDir);
if (!hasData) console.warn(`skipping envace eval bfcl: benchmark data not found at ${dataDir} (set ENVACE_DATA)`);

describe("envace eval bfcl", () => {
  describe("explains its arguments when they are wrong", () => {
    itRefuses(run, [
      [["--out", "x", "--policy", "oracle"], 2, "envace eval bfcl: required option '--data <dir>' not specified"],
      [["--data", "x", "--out", "x", "--policy", "oracle", "--category", "simple_cobol"], 2, 'unknown BFCL category "simple_cobol"'],
    ]);
  });

  it("needs exactly one of --policy and --results", async () => {
    const output = captureConsole();
    expect(await run(["--data", "x", "--out", "x"])).toBe(2);
    expect(await run(["--data", "x", "--out", "x", "--policy", "oracle", "--results", "r.jsonl"])).toBe(2);
    expect(output.err().split("\n")).toEqual([
      "envace eval bfcl: give exactly one of --policy and --results",
      "(see envace eval bfcl --help)",
      "envace eval bfcl: option '--results <file>' cannot be used with option '--policy <spec>'",
      "(see envace eval bfcl --help)",
    ]);
  });

  it("refuses a data folder without the categories asked for: one line, no run directory, exit 1", async () => {
    const output = captureConsole();
    const empty = mkdtempSync(join(tmpdir(), "bfcl-empty-"));
    const out = join(empty, "run");
    expect(await run(["--data", empty, "--category", "simple_python", "--policy", "oracle", "--out", out])).toBe(1);
    expect(await run(["--data", empty, "--category", "web_search", "--policy", "oracle", "--out", out])).toBe(1);
    expect(output.err().split("\n")).toEqual([
      `envace eval bfcl: ${empty}: no BFCL question files for simple_python (expected BFCL_v4_simple_python.json)`,
      "envace eval bfcl: nothing to run: agentic categories (web search, memory) need live backends and are not run (asked for web_search_base, web_search_no_snippet)",
    ]);
    expect(output.out()).toBe("");
    expect(existsSync(out)).toBe(false);
  });

  it.skipIf(!hasData)("refuses saved results with no entry of the categories asked for, and writes nothing", async () => {
    const output = captureConsole();
    const dir = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
    const results = join(dir, "results.jsonl");
    writeFileSync(results, '{"id": "parallel_0", "result": "[f(x=1)]"}\n');
    expect(await run(["--data", dataDir, "--category", "simple_python", "--results", results, "--out", join(dir, "run")])).toBe(1);
    expect(output.err()).toBe(`envace eval bfcl: ${results}: no results for simple_python`);
    expect(existsSync(join(dir, "run"))).toBe(false);
  });

  it.skipIf(!hasData)("prints accuracy per category as a percentage and writes the run directory", async () => {
    const output = captureConsole();
    const out = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
    expect(await run(["--data", dataDir, "--category", "simple_python,multi_turn_base", "--policy", "oracle", "--out", out, "--limit", "5"])).toBe(0);
    expect(output.out()).toMatch(/simple_python\s+100\.00%\s+\(5\/5\)/);
    expect(output.out()).toMatch(/multi_turn_base\s+100\.00%\s+\(5\/5\)/);
    expect(readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n")).toHaveLength(10);
    expect(readFileSync(join(out, "summary.md"), "utf8")).toContain("| multi_turn_base | 5 | 5 | 100.00% |");
  });

  it.skipIf(!hasData)("a killed run resumes to the summary of an uninterrupted one; --resume is a deprecated no-op", async () => {
    const output = captureConsole();
    const argv = ["--data", dataDir, "--category", "simple_python,multi_turn_base", "--policy", "oracle", "--limit", "4"];
    const whole = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
    expect(await run([...argv, "--out", whole])).toBe(0);
    const out = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
    expect(await run([...argv, "--out", out])).toBe(0);
    // Killed while writing the 7th verdict's line, before the summaries.
    const lines = readFileSync(join(out, "entries.jsonl"), "utf8").split("\n");
    writeFileSync(join(out, "entries.jsonl"), `${lines.slice(0, 6).join("\n")}\n${lines[6]!.slice(0, 12)}`);
    rmSync(join(out, "summary.json"));
    rmSync(join(out, "summary.md"));
    expect(await run([...argv, "--out", out, "--resume"])).toBe(0);
    for (const file of ["summary.json", "summary.md", "entries.jsonl"])
      expect(readFileSync(join(out, file), "utf8")).toBe(readFileSync(join(whole, file), "utf8"));
    const logged = stderrWritten();
    expect(logged).toContain("--resume is deprecated and does nothing: a run directory with the same options resumes by itself");
    expect(logged).toContain(`resuming ${out}: 6 of 8 entries already done, 2 to run`);
    expect(await run([...argv, "--out", out, "--underscore-to-dot"])).toBe(2);
    expect(output.err()).toContain(
      `envace eval bfcl: ${out} holds a run with other options (astOptions: (none) → {"underscoreToDot":true}); use another --out, or the same options to resume it`,
    );
  });

  it.skipIf(!hasData)(
    "with --log-format json, stderr holds JSON lines only, a progress record per finished category",
    async () => {
      const output = captureConsole();
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
      const out = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
      expect(
        await envace([
          "--log-format",
          "json",
          "eval",
          "bfcl",
          "--data",
          dataDir,
          "--category",
          "simple_python,multi_turn_base",
          "--policy",
          "oracle",
          "--out",
          out,
          "--limit",
          "3",
        ]),
      ).toBe(0);
      const records = stderr.mock.calls.map(([chunk]) => JSON.parse(String(chunk)) as Record<string, unknown>);
      // The categories run side by side, so either may finish first.
      const progress = records.filter((record) => record.msg === "entries scored");
      expect(progress).toHaveLength(2);
      expect(progress).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ level: 30, category: "simple_python", done: 3, total: 3 }),
          expect.objectContaining({ level: 30, category: "multi_turn_base", done: 3, total: 3 }),
        ]),
      );
      // The results a person reads stay on stdout.
      expect(output.out()).toMatch(/simple_python\s+100\.00%\s+\(3\/3\)/);
    },
    120_000,
  );

  it.skipIf(!hasData)("asks a model served over HTTP and writes its raw outputs for re-scoring", async () => {
    // A stand-in model on loopback: the right call for the first entry, a wrong one for the second.
    const server = await startScriptedServer({
      script: (request) => {
        const body = request.body as { messages: { role: string; content: string }[] };
        const question = body.messages.at(-1)!.content;
        return reply.text(question.includes("triangle") ? "[calculate_triangle_area(base=10, height=5)]" : "[math.factorial(number=6)]");
      },
    });
    try {
      const output = captureConsole();
      const out = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
      const policy = `openai:${server.baseURL}#scripted-model,server=vllm`;
      expect(await run(["--data", dataDir, "--category", "simple_python", "--policy", policy, "--out", out, "--limit", "2", "--concurrency", "1"])).toBe(0);
      expect(output.out()).toMatch(/simple_python\s+50\.00%\s+\(1\/2\)/);
      const system = (server.scripted[0]!.body as { messages: { role: string; content: string }[] }).messages[0]!;
      expect(system.role).toBe("system");
      expect(system.content).toContain("Note that the provided function is in Python 3 syntax.");
      expect(readFileSync(join(out, "results.jsonl"), "utf8")).toBe(
        '{"id": "simple_python_0", "result": "[calculate_triangle_area(base=10, height=5)]"}\n{"id": "simple_python_1", "result": "[math.factorial(number=6)]"}\n',
      );
      const rescored = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
      expect(await run(["--data", dataDir, "--category", "simple_python", "--results", join(out, "results.jsonl"), "--out", rescored])).toBe(0);
      expect(output.out()).toMatch(/simple_python\s+0\.25%\s+\(1\/400\)/);
    } finally {
      await server.close();
    }
  });
});
