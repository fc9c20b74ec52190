import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { envace } from "../cli.js";
import { captureConsole } from "../testing/console.js";

const run = (argv: string[]): Promise<number> => envace(["eval", "tau2", ...argv]);

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const shared = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data");
const telecomDir = join(shared, "tau2", "telecom");
const haveData = existsSync(join(telecomDir, "tasks_small.json")) && existsSync(join(shared, "tau2-labels", "telecom.jsonl"));
if (!haveData) console.log("skipping the τ² telecom CLI run: τ² data not found (set ENVACE_DATA to the shared data folder, e.g. ../shared/data)");

/** A copy of the telecom folder (outside the repository) with one file replaced. */
function telecomCopy(file: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "tau2-telecom-"));
  for (const name of readdirSync(telecomDir)) copyFileSync(join(telecomDir, name), join(dir, name));
  writeFileSync(join(dir, file), text);
  return dir;
}

const lines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** The telecom domain on the shared data, limited to the small task set. */
const smallTelecom = ["--domain", "telecom", "--data", join(shared, "tau2"), "--tasks-file", join(telecomDir, "tasks_small.json")];

describe.skipIf(!haveData)("envace eval tau2 --domain telecom", () => {
  it("reproduces upstream's labels in entries.jsonl: every call by requestor, both hashes, every assertion, the DB match", async () => {
    const io = captureConsole();
    const out = mkdtempSync(join(tmpdir(), "tau2-telecom-run-"));
    const args = [...smallTelecom, "--policy", "oracle", "--out", out];
    expect(await run(args)).toBe(0);
    expect(io.out()).toContain("τ² telecom · oracle · 20 tasks × 1 trial");
    expect(io.out()).toContain("scored 20, succeeded 20, average reward 1.0000");
    const entries = new Map(lines(join(out, "entries.jsonl")).map((entry) => [entry.id, entry]));
    const labels = lines(join(shared, "tau2-labels", "telecom.jsonl"));
    expect(labels).toHaveLength(14);
    for (const label of labels) {
      const entry = entries.get(label.id)!;
      expect({
        id: entry.id,
        db_hash: entry.db_hash,
        user_db_hash: entry.user_db_hash,
        calls: entry.calls,
        assertions: entry.assertions,
        db_match: entry.db_match,
      }).toEqual({
        id: label.id,
        db_hash: label.final_db_hash,
        user_db_hash: label.final_user_db_hash,
        calls: (label.calls as Record<string, unknown>[]).map(({ name, requestor, content, error }) => ({ name, requestor, content, error })),
        assertions: (label.assertions as Record<string, unknown>[]).map(({ func_name, env_type, result }) => ({ func_name, env_type, result })),
        db_match: label.db_match,
      });
    }

    // The saved conversations, user tool calls included, re-score to the same entries.
    const rescored = mkdtempSync(join(tmpdir(), "tau2-telecom-rescore-"));
    expect(await run([...smallTelecom, "--rescore", join(out, "simulations.jsonl"), "--out", rescored])).toBe(0);
    const again = lines(join(rescored, "rescored-entries.jsonl"));
    const key = (entry: Record<string, unknown>): string =>
      JSON.stringify([entry.id, entry.reward, entry.db_hash, entry.user_db_hash, entry.db_match, entry.calls, entry.assertions]);
    expect(again.map(key).sort()).toEqual([...entries.values()].map(key).sort());
  });

  it("asks for --tasks-file when the folder has no tasks.json, naming the split it has", async () => {
    const io = captureConsole();
    const out = join(mkdtempSync(join(tmpdir(), "tau2-telecom-run-")), "run");
    expect(await run(["--domain", "telecom", "--data", join(shared, "tau2"), "--policy", "oracle", "--out", out])).toBe(1);
    expect(io.err()).toBe(
      `envace eval tau2: ${join(telecomDir, "tasks.json")}: no such file; pass the telecom tasks with --tasks-file (this folder has tasks_small.json)`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("names the file, line or field of a bad db.toml, user_db.toml or task in one line, and writes nothing", async () => {
    const io = captureConsole();
    const out = join(mkdtempSync(join(tmpdir(), "tau2-telecom-run-")), "run");
    const original = readFileSync(join(telecomDir, "db.toml"), "utf8");
    const cases: [file: string, text: string][] = [
      ["db.toml", original.replace('plan_id = "P1001"\nname = "Basic Plan"', 'plan_id = "P1001"\nname = "Basic Plan')],
      ["db.toml", original.replace("data_limit_gb = 5.0", 'data_limit_gb = "five"')],
      ["user_db.toml", "[device]\nairplane_mode = 3\n"],
      [
        "tasks_small.json",
        '[{"id": "t", "user_scenario": {"instructions": "x"}, "initial_state": {"initialization_actions": [{"env_type": "phone", "func_name": "x", "arguments": {}}]}}]',
      ],
    ];
    for (const [file, text] of cases) {
      const dir = telecomCopy(file, text);
      expect(await run(["--domain", "telecom", "--data", dir, "--tasks-file", join(dir, "tasks_small.json"), "--policy", "oracle", "--out", out])).toBe(1);
    }
    const errors = io.err().split("\n");
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/^envace eval tau2: \S+[/\\]db\.toml:3: not TOML \(control characters are not allowed in strings, column 19\)$/);
    expect(errors[1]).toMatch(/^envace eval tau2: \S+[/\\]db\.toml: plans\[0\]\.data_limit_gb: Input should be a valid number$/);
    expect(errors[2]).toMatch(/^envace eval tau2: \S+[/\\]user_db\.toml: device\.airplane_mode: Invalid input: expected boolean, received bigint$/);
    expect(errors[3]).toMatch(
      /^envace eval tau2: \S+[/\\]tasks_small\.json \(record 0\): initial_state\.initialization_actions\[0\]\.env_type: Invalid option: expected one of "user"\|"assistant"$/,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("runs upstream's solo mode with --solo: no user, all 20 tasks solved; solo conversations re-score, dual ones are refused", async () => {
    const io = captureConsole();
    const data = ["--domain", "telecom", "--data", join(shared, "tau2"), "--tasks-file", join(telecomDir, "tasks_small.json")];
    const out = mkdtempSync(join(tmpdir(), "tau2-telecom-solo-"));
    expect(await run([...data, "--solo", "--policy", "oracle", "--out", out])).toBe(0);
    expect(io.out()).toContain("τ² telecom solo · oracle · 20 tasks × 1 trial");
    expect(io.out()).toContain("scored 20, succeeded 20, average reward 1.0000");
    expect(io.out()).toContain("endings: agent_stop 20");
    const entries = lines(join(out, "entries.jsonl"));
    expect(
      entries.flatMap((entry) => (entry.calls as { requestor: string }[]).map((call) => call.requestor)).every((requestor) => requestor === "assistant"),
    ).toBe(true);

    const rescored = mkdtempSync(join(tmpdir(), "tau2-telecom-solo-rescore-"));
    expect(await run([...data, "--solo", "--rescore", join(out, "simulations.jsonl"), "--out", rescored])).toBe(0);
    expect(lines(join(rescored, "rescored-entries.jsonl")).map((entry) => entry.reward)).toEqual(entries.map(() => 1));

    const dual = mkdtempSync(join(tmpdir(), "tau2-telecom-dual-"));
    expect(await run([...data, "--policy", "oracle", "--out", dual, "--tasks", "[service_issue]airplane_mode_on[PERSONA:None]"])).toBe(0);
    expect(await run([...data, "--solo", "--rescore", join(dual, "simulations.jsonl")])).toBe(1);
    expect(io.err()).toContain("a conversation with user messages cannot be replayed in solo mode");
    expect(await run(["--domain", "retail", "--data", join(shared, "tau2"), "--solo", "--policy", "oracle", "--out", join(out, "retail")])).toBe(1);
    expect(io.err().split("\n").at(-1)).toBe("envace eval tau2: the retail domain has no solo mode (mock and telecom have one)");
    // Two full runs of the 20 tasks and a re-score: minutes on a loaded 2-core machine.
  }, 300_000);
});
