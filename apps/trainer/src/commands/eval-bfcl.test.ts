import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { reply, startScriptedServer } from "@envace/scripted-server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "./eval-bfcl.js";

const repoRoot = resolve(import.meta.dirname, "../../../..");
const dataDir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data", "bfcl");
const hasData = existsSync(dataDir);
if (!hasData) console.warn(`skipping envace eval bfcl: benchmark data not found at ${dataDir} (set ENVACE_DATA)`);

function captured(): { out: () => string; err: () => string } {
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
  const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
  vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  return { out: () => log.mock.calls.map((c) => c.join(" ")).join("\n"), err: () => error.mock.calls.map((c) => c.join(" ")).join("\n") };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("envace eval bfcl", () => {
  it("explains its arguments when they are wrong", async () => {
    const output = captured();
    expect(await run(["--out", "x", "--policy", "oracle"])).toBe(2);
    expect(output.err()).toContain("--data is required");
    expect(await run(["--data", "x", "--out", "x", "--policy", "oracle", "--category", "simple_cobol"])).toBe(2);
    expect(output.err()).toContain('unknown BFCL category "simple_cobol"');
  });

  it.skipIf(!hasData)("prints accuracy per category as a percentage and writes the run directory", async () => {
    const output = captured();
    const out = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
    expect(await run(["--data", dataDir, "--category", "simple_python,multi_turn_base", "--policy", "oracle", "--out", out, "--limit", "5"])).toBe(0);
    expect(output.out()).toMatch(/simple_python\s+100\.00%\s+\(5\/5\)/);
    expect(output.out()).toMatch(/multi_turn_base\s+100\.00%\s+\(5\/5\)/);
    expect(readFileSync(join(out, "entries.jsonl"), "utf8").trim().split("\n")).toHaveLength(10);
    expect(readFileSync(join(out, "summary.md"), "utf8")).toContain("| multi_turn_base | 5 | 5 | 100.00% |");
  });

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
      const output = captured();
      const out = mkdtempSync(join(tmpdir(), "bfcl-cli-"));
      const policy = `openai:${server.baseURL}#scripted-model,server=vllm`;
      expect(await run(["--data", dataDir, "--category", "simple_python", "--policy", policy, "--out", out, "--limit", "2", "--concurrency", "1"])).toBe(0);
      expect(output.out()).toMatch(/simple_python\s+50\.00%\s+\(1\/2\)/);
      const system = (server.requests[0]!.body as { messages: { role: string; content: string }[] }).messages[0]!;
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
