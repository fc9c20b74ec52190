// `pnpm bench`: the time to replay every shared VitaBench label (delivery and instore: each task's
// recorded calls on a fresh environment, both DB hashes), checked against the labels as it goes.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonLoads, type PyJson } from "@envace/python-text";
import { VITA_DOMAINS } from "./db.js";
import { replayCalls } from "./environment.js";
import { loadVitaTasks } from "./task.js";
import { sharedData, skipNote } from "./testing/shared-data.js";

const data = sharedData();
if (data === undefined) {
  console.log(skipNote("the VitaBench replay benchmark"));
  process.exit(0);
}

const ms = (start: number): number => performance.now() - start;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const rounds = 3;

for (const domain of VITA_DOMAINS) {
  let start = performance.now();
  const tasks = await loadVitaTasks(join(data, "vita", domain, "tasks_en.json"), domain);
  const loadMs = ms(start);
  const labels = readFileSync(join(data, "vita-labels", `${domain}.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => jsonLoads(line) as Map<string, PyJson>);
  const runs = labels.map((label) => ({
    task: tasks[Number(label.get("index"))]!,
    calls: (label.get("calls") as Map<string, PyJson>[]).map((call) => ({
      name: call.get("name") as string,
      arguments: call.get("arguments")!,
      content: call.get("content"),
      error: call.get("error"),
    })),
    finalHash: label.get("final_db_hash"),
  }));
  const callCount = runs.reduce((sum, run) => sum + run.calls.length, 0);
  const times: number[] = [];
  let agree = 0;
  // Round 0 warms the code paths up and is not counted.
  for (let round = 0; round <= rounds; round++) {
    start = performance.now();
    agree = 0;
    for (const run of runs) {
      const result = replayCalls(run.task, run.calls);
      run.calls.forEach((call, i) => (agree += Number(result.calls[i]!.content === call.content && result.calls[i]!.error === call.error)));
      agree += Number(result.finalHash === run.finalHash);
    }
    if (round > 0) times.push(ms(start));
  }
  const replay = median(times);
  console.log(`VitaBench ${domain}: replay of all ${runs.length} shared labelled tasks, ${callCount} calls (median of ${rounds} rounds)`);
  console.log(`  load tasks_en.json (parse, validate, build every DB once)   ${loadMs.toFixed(0).padStart(6)} ms`);
  console.log(
    `  replay (fresh DB per task, every call, both hashes)         ${replay.toFixed(0).padStart(6)} ms   ${(replay / runs.length).toFixed(1)} ms/task, ${((replay * 1000) / callCount).toFixed(0)} µs/call`,
  );
  console.log(`  agreement with the labels: ${agree}/${callCount + runs.length} (answers and final hashes)`);
}
