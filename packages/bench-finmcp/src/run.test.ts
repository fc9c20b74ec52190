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
  it("drops a line cut short by a killed run, runs that sample again, and scores only this invocation's samples", async () => {
    const samples = (await loadSamples(fixture("samples.jsonl"))).slice(0, 2);
    const out = mkdtempSync(join(tmpdir(), "finmcp-resume-"));
    const entries = join(out, "entries.jsonl");
    writeFileSync(entries, `${JSON.stringify({ id: "s1", predicted: ["get_stock_quote"] })}\n{"id": "s2", "predic`);
    const asked: string[] = [];
    const policy = new ScriptedPolicy("p", (request: GenerateRequest) => {
      asked.push(request.messages.findLast((m) => m.role === "user")!.content);
      return "No tools needed.";
    });

    const { entries: ran, summary } = await runFinMcp({ samples, policy, environment: inProcess, out, resume: true });
    expect(ran.map((e) => [e.id, e.predicted])).toEqual([["s2", []]]);
    expect(asked).toEqual(["What was MSFT's 2023 revenue, and what is its price now?"]);
    // s1 exact (F1 1); s2 predicted nothing for two gold calls (F1 0).
    expect(summary).toMatchObject({ samples: 2, exactMatch: 0.5, macro: { f1: 0.5 } });
    // The torn line was cut off the file; the redone entry took its place.
    const lines = readFileSync(entries, "utf8").split("\n");
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[1]!)).toMatchObject({ id: "s2", predicted: [] });

    // Resumed with fewer samples: the summary covers those alone.
    const fewer = await runFinMcp({ samples: samples.slice(0, 1), policy, environment: inProcess, out, resume: true });
    expect(fewer.summary).toMatchObject({ samples: 1, exactMatch: 1 });

    // A line that is JSON but not an entry is the user's to see.
    appendFileSync(entries, `${JSON.stringify({ id: "s3" })}\n`);
    await expect(runFinMcp({ samples, policy, environment: inProcess, out, resume: true })).rejects.toThrow(`${entries}:3: predicted: needs predicted`);
  });
});
