import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Environment, GenerateRequest } from "@envace/protocol";
import { ScriptedPolicy } from "@envace/trajectory";
import { describe, expect, it } from "vitest";
import { runFinMcp } from "./run.js";
import { loadSamples } from "./sample.js";
import { fixture } from "./testing/spawn.js";

/** A tool server in this process that answers every call with {}. */
const inProcess = (): Environment => ({
  reset: () => Promise.resolve(),
  tools: () => [],
  call: (call) => Promise.resolve({ status: "ok", callId: call.id, name: call.name, content: {} }),
  state: () => Promise.resolve(null),
});

describe("runFinMcp resuming a run directory", () => {
  it("a killed run resumes to the summary of an uninterrupted one, running only the sample whose line was cut short", async () => {
    const samples = (await loadSamples(fixture("samples.jsonl"))).slice(0, 2);
    const asked: string[] = [];
    const policy = new ScriptedPolicy("p", (request: GenerateRequest) => {
      asked.push(request.messages.findLast((m) => m.role === "user")!.content);
      return "No tools needed.";
    });
    const whole = await runFinMcp({ samples, policy, environment: inProcess, out: mkdtempSync(join(tmpdir(), "finmcp-whole-")), concurrency: 1 });
    // s1 wants [quote], s2 [statement, quote]; predicting nothing scores F1 0 and no exact match on both.
    expect(whole.summary).toMatchObject({ samples: 2, exactMatch: 0, macro: { f1: 0 } });

    const out = mkdtempSync(join(tmpdir(), "finmcp-resume-"));
    const notices: string[] = [];
    await runFinMcp({ samples, policy, environment: inProcess, out, concurrency: 1 });
    const entries = join(out, "entries.jsonl");
    // Killed while writing s2's line: it is cut short, without its newline.
    const text = readFileSync(entries, "utf8");
    writeFileSync(entries, text.slice(0, text.indexOf("\n") + 20));
    asked.length = 0;
    const { entries: ran, summary } = await runFinMcp({ samples, policy, environment: inProcess, out, notify: (line) => notices.push(line) });
    expect(ran.map((e) => [e.id, e.predicted])).toEqual([["s2", []]]);
    expect(asked).toEqual(["What was MSFT's 2023 revenue, and what is its price now?"]);
    expect(summary).toEqual(whole.summary);
    expect(notices).toEqual([
      `${entries}:2: dropped a last line cut short by an interrupted write; its entry runs again`,
      `resuming ${out}: 1 of 2 entries already done, 1 to run`,
    ]);
    // The torn line was cut off the file; the redone entry took its place.
    const lines = readFileSync(entries, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1]!)).toMatchObject({ id: "s2", predicted: [] });

    // Resumed with fewer samples: nothing runs, and the summary covers those alone.
    asked.length = 0;
    notices.length = 0;
    const fewer = await runFinMcp({ samples: samples.slice(0, 1), policy, environment: inProcess, out, notify: (line) => notices.push(line) });
    expect(notices).toEqual([`${out} already holds the 1 entry asked for: nothing left to run; the summary is made again from them`]);
    expect(fewer.summary).toMatchObject({ samples: 1, exactMatch: 0 });
    expect(asked).toEqual([]);

    // Other options are refused, naming them.
    await expect(runFinMcp({ samples, policy, environment: inProcess, out, maxRounds: 3 })).rejects.toThrow(
      `${out} holds a run with other options (maxRounds: (none) → 3); use another --out`,
    );

    // A line that is JSON but not an entry is the user's to see.
    appendFileSync(entries, `${JSON.stringify({ id: "s3" })}\n`);
    await expect(runFinMcp({ samples, policy, environment: inProcess, out })).rejects.toThrow(`${entries}:3: predicted: needs predicted`);
  });
});
