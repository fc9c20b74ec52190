import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonLoads, type PyJson } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { VITA_DOMAINS } from "./db.js";
import { replayCalls } from "./environment.js";
import { loadVitaTasks } from "./task.js";
import { sharedData, skipNote } from "./testing/shared-data.js";

const data = sharedData();
if (data === undefined) console.log(skipNote("VitaBench conformance labels"));

interface Label {
  id: string;
  index: number;
  initialHash: string;
  finalHash: string;
  calls: { name: string; arguments: PyJson; content: string; error: boolean }[];
}

/** The labels, read as Python reads them: an argument given as 3000.0 stays a float. */
function labels(domain: string): Label[] {
  return readFileSync(join(data!, "vita-labels", `${domain}.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const record = jsonLoads(line) as Map<string, PyJson>;
      const calls = (record.get("calls") as Map<string, PyJson>[]).map((call) => ({
        name: call.get("name") as string,
        arguments: call.get("arguments")!,
        content: call.get("content") as string,
        error: call.get("error") as boolean,
      }));
      return {
        id: record.get("id") as string,
        index: Number(record.get("index")),
        initialHash: record.get("initial_db_hash") as string,
        finalHash: record.get("final_db_hash") as string,
        calls,
      };
    });
}

describe.skipIf(data === undefined).each(VITA_DOMAINS)("the upstream %s environment's answers, reproduced", (domain) => {
  it("gives every labelled call's content and error flag, and both DB hashes, exactly", async () => {
    const tasks = await loadVitaTasks(join(data!, "vita", domain, "tasks_en.json"), domain);
    const all = labels(domain);
    expect(all.length).toBe(70);
    const mismatches: string[] = [];
    let calls = 0;
    for (const label of all) {
      const task = tasks[label.index]!;
      expect(task.id).toBe(label.id);
      const result = replayCalls(task, label.calls);
      if (result.initialHash !== label.initialHash) mismatches.push(`${label.id}: initial DB hash`);
      // Calls share state, so the first wrong answer of a task is the one to read.
      const first = label.calls.findIndex((call, i) => result.calls[i]!.content !== call.content || result.calls[i]!.error !== call.error);
      if (first >= 0) {
        const want = label.calls[first]!;
        const got = result.calls[first]!;
        mismatches.push(
          `${label.id} call ${first} ${want.name}: want ${JSON.stringify([want.error, want.content])}, got ${JSON.stringify([got.error, got.content])}`,
        );
      }
      if (result.finalHash !== label.finalHash) mismatches.push(`${label.id}: final DB hash`);
      calls += label.calls.length;
    }
    expect(mismatches).toEqual([]);
    expect(calls).toBe(domain === "delivery" ? 3350 : 3852);
  }, 120_000);
});
