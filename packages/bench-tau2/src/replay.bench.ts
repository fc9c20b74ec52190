// `pnpm bench`: the time to oracle-replay and score every shared retail and telecom task, next to the
// same work done naively (a deep copy of the database per environment and a full
// `json.dumps(sort_keys=True)` per hash), measured in the same run.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { pyDeepCopy, pyDumps, type PyModel, type PyValue } from "@envace/python-text";
import { loadDomain, loadUserGuidelines, type Tau2Domain } from "./load.js";
import { runTau2, type Tau2Summary } from "./run.js";
import { sharedDataOrSkip } from "./testing/shared-data.js";

const data = sharedDataOrSkip("the τ² replay benchmark");
if (data === undefined) process.exit(0);

const ms = (start: number): number => performance.now() - start;
const fmt = (value: number): string => `${value.toFixed(0).padStart(6)} ms`;

let start = performance.now();
const domain = await loadDomain("retail", { data: join(data, "tau2") });
const guidelines = await loadUserGuidelines(join(data, "tau2"));
const loadMs = ms(start);

// The first pass (below, untimed) compiles the code paths and fills the shared-entity caches,
// as the first tasks of any run do.

const rounds = 3;
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The oracle's run of every task, untimed once, then timed `rounds` times: the median time and the last summary. */
async function timeOracleRuns(target: Tau2Domain): Promise<{ summary: Tau2Summary; median: number }> {
  let summary = (await runTau2({ domain: target, guidelines, participants: "oracle" })).summary;
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const begin = performance.now();
    summary = (await runTau2({ domain: target, guidelines, participants: "oracle" })).summary;
    times.push(ms(begin));
  }
  return { summary, median: median(times) };
}

const { summary, median: replay } = await timeOracleRuns(domain);

// The naive baseline: per task, three environments (the run, the replay, the gold actions),
// each a deep copy of the database hashed by serialising all of it.
function naiveEnvironmentHash(): string {
  const copy: PyModel = {};
  for (const [name, table] of Object.entries(domain.db)) copy[name] = pyDeepCopy(table as unknown as PyValue);
  return createHash("sha256")
    .update(pyDumps(copy, { sortKeys: true }))
    .digest("hex");
}
// Slow by design, so measured on the first few tasks' worth of environments only.
const naiveTasks = 5;
start = performance.now();
for (let task = 0; task < naiveTasks; task++) for (let env = 0; env < 3; env++) naiveEnvironmentHash();
const naivePerTask = ms(start) / naiveTasks;

const perTask = replay / domain.tasks.length;
console.log(`τ² retail: oracle replay and scoring of all ${domain.tasks.length} shared tasks (median of ${rounds} rounds)`);
console.log(`  load db.json + tasks.json (parse, validate, freeze)     ${fmt(loadMs)}`);
console.log(`  replay + score all tasks                                ${fmt(replay)}   ${perTask.toFixed(1)} ms/task`);
console.log(`    DB matches ${summary.db_match.matched}/${summary.db_match.checked} scored; ${summary.masked} masked (NL_ASSERTION without a judge)`);
console.log(`  naive environments alone (3 deep copies + full hashes)             ${naivePerTask.toFixed(1)} ms/task (${naiveTasks} tasks)`);
console.log(`  per task, this package vs the naive copies and hashes alone: ${(naivePerTask / perTask).toFixed(1)}× faster`);

// Telecom (dual control): both databases, the post-step sync after every call, and the env
// assertions on both sides. The split ships as tasks_small.json.
start = performance.now();
const telecom = await loadDomain("telecom", { data: join(data, "tau2"), tasks: join(data, "tau2", "telecom", "tasks_small.json") });
const telecomLoadMs = ms(start);
const { summary: telecomSummary, median: telecomReplay } = await timeOracleRuns(telecom);
console.log(`τ² telecom: oracle replay and scoring of all ${telecom.tasks.length} shared tasks (median of ${rounds} rounds)`);
console.log(`  load db.toml + user_db.toml + tasks_small.json         ${fmt(telecomLoadMs)}`);
console.log(`  replay + score all tasks                                ${fmt(telecomReplay)}   ${(telecomReplay / telecom.tasks.length).toFixed(2)} ms/task`);
console.log(
  `    succeeded ${telecomSummary.successes}/${telecomSummary.scored}; DB match ${telecomSummary.db_match.matched}/${telecomSummary.db_match.checked} (upstream's gold DB skips the sync)`,
);

// Telecom in solo mode: the agent plays every gold action itself, then `done`; no user turns.
const telecomSolo = await loadDomain("telecom", { data: join(data, "tau2"), tasks: join(data, "tau2", "telecom", "tasks_small.json"), solo: true });
const { summary: soloSummary, median: soloReplay } = await timeOracleRuns(telecomSolo);
console.log(`τ² telecom solo: oracle replay and scoring of all ${soloSummary.tasks} tasks upstream's solo agent accepts (median of ${rounds} rounds)`);
console.log(`  replay + score all tasks                                ${fmt(soloReplay)}   ${(soloReplay / soloSummary.tasks).toFixed(2)} ms/task`);
console.log(`    succeeded ${soloSummary.successes}/${soloSummary.scored}; DB match ${soloSummary.db_match.matched}/${soloSummary.db_match.checked}`);
