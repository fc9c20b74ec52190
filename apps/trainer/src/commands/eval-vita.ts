// `envace eval vita`: VitaBench delivery and instore, with upstream-exact tools: replay recorded
// calls, or run a policy against a simulated user and score it with upstream's judge.
import { resolve } from "node:path";
import { loadVitaTasks, openAiJudge, replayFile, resolveTasksFile, runVita, type VitaDomain } from "@envace/bench-vita";
import { UsageError } from "../faults.js";
import type { Logger } from "../log.js";
import { loadModel, modelSpec, openAiKey } from "./policy.js";
import { rehearsalOption } from "./rehearsal-option.js";

/** The options of `envace eval vita`, as cli.ts declares them. */
export interface EvalVitaOptions {
  domain: VitaDomain;
  data: string;
  out: string;
  replay?: string;
  policy?: string;
  user?: string;
  judge?: string;
  trials: number;
  rehearsal?: string;
  tasks?: string[];
  concurrency: number;
}

export async function run(options: EvalVitaOptions, log: Logger): Promise<void> {
  const started = Date.now();
  if (options.replay !== undefined) {
    const summary = await replayFile({
      domain: options.domain,
      data: resolve(options.data),
      replay: resolve(options.replay),
      out: resolve(options.out),
      notify: (line) => log.info(line),
    });
    const kept = summary.kept > 0 ? ` (${summary.kept} already in the run directory, kept)` : "";
    console.log(
      `VitaBench ${options.domain} · replayed ${summary.tasks - summary.kept} of ${summary.tasks} tasks${kept}: ${summary.calls} calls, ${summary.errors} answered with an error`,
    );
    console.log(`${((Date.now() - started) / 1000).toFixed(1)} s · entries: ${summary.entries}`);
    return;
  }
  if (options.judge === undefined) throw new UsageError("--judge is required to score a policy (upstream scores every conversation with an LLM judge)");
  const judgeSpec = modelSpec(options.judge, "--judge");
  if (judgeSpec.kind !== "openai") throw new UsageError(`--judge must be an openai:<url>#<model> spec, got ${JSON.stringify(options.judge)}`);
  const rehearsal = rehearsalOption(options.rehearsal ?? "none");
  // Tasks are read before any model loads or anything is written, so a bad file stops the run at once.
  let tasks = await loadVitaTasks(resolveTasksFile(options.data, options.domain), options.domain);
  if (options.tasks !== undefined) {
    const unknown = options.tasks.filter((id) => !tasks.some((task) => task.id === id));
    if (unknown.length > 0) throw new UsageError(`--tasks: no ${options.domain} task ${unknown.join(", ")}`);
    tasks = tasks.filter((task) => options.tasks!.includes(task.id));
  }
  const policy = (await loadModel(options.policy!)).policy;
  const user = options.user === undefined ? policy : (await loadModel(options.user, "--user")).policy;
  const summary = await runVita({
    tasks,
    policy,
    user,
    judge: openAiJudge(judgeSpec.baseURL, judgeSpec.model, openAiKey()),
    trials: options.trials,
    out: resolve(options.out),
    rehearsal,
    concurrency: options.concurrency,
    notify: (line) => log.info(line),
    onEntry: (entry) =>
      log.info({ id: entry.id, trial: entry.trial, reward: entry.reward, ...(entry.masked === undefined ? {} : { masked: entry.masked }) }, "trial scored"),
  });
  const pct = (x: number | undefined): string => (x === undefined ? "-" : `${(100 * x).toFixed(1)}%`);
  console.log(`VitaBench ${options.domain} · ${summary.tasks} tasks × ${summary.trials} trials · rehearsal ${summary.rehearsal}`);
  console.log(`  scored ${summary.scored}, masked ${summary.masked} (judge failures), average reward ${summary.avgReward.toFixed(4)}`);
  for (let k = 1; k <= summary.trials; k++)
    console.log(`  pass^${k} ${pct(summary.passHatK[k])}  pass@${k} ${pct(summary.passAtK[k])}  avg@${k} ${pct(summary.avgAtK[k])}`);
  if (summary.rehearsal !== "none") console.log(`  real environment calls during rehearsal: ${summary.realCallsDuringRehearsal}`);
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s · run directory: ${resolve(options.out)}`);
}
