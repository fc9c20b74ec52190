// `envace eval tau2`: run a policy (or the oracle) on a τ²-bench domain, or re-score saved runs.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeFileAtomically } from "@envace/records";
import {
  formatSummary,
  isSoloTask,
  loadDomain,
  loadSimulations,
  loadUserGuidelines,
  NlJudge,
  rescore,
  runTau2,
  type Participants,
  type UserGuidelines,
} from "@envace/bench-tau2";
import { UsageError } from "../faults.js";
import type { Logger } from "../log.js";
import { ProgressBar } from "../run/progress.js";
import { loadModel, modelSpec, openAiKey } from "./policy.js";

/** The options of `envace eval tau2`, as cli.ts declares them. */
export interface EvalTau2Options {
  domain: string;
  data: string;
  /** Required unless `rescore` is given, as is `out`. */
  policy?: string;
  out?: string;
  rescore?: string;
  user?: string;
  judge?: string;
  trials: number;
  tasks?: string[];
  tasksFile?: string;
  db?: string;
  policyVariant?: string;
  solo?: boolean;
  concurrency?: number;
  maxSteps?: number;
  maxErrors?: number;
  temperature: number;
  userTemperature: number;
  seed?: number;
  agentInstruction?: string;
}

function judgeFrom(spec: string | undefined): NlJudge | undefined {
  if (spec === undefined) return undefined;
  const parsed = modelSpec(spec, "--judge");
  if (parsed.kind !== "openai") throw new UsageError(`--judge must be an openai:<url>#<model> spec, got ${JSON.stringify(spec)}`);
  return NlJudge.fromServer(parsed.baseURL, parsed.model, openAiKey());
}

export async function run(options: EvalTau2Options, log: Logger): Promise<void> {
  const judge = judgeFrom(options.judge);
  const domain = await loadDomain(options.domain, {
    data: resolve(options.data),
    ...(options.tasksFile !== undefined ? { tasks: resolve(options.tasksFile) } : {}),
    ...(options.db !== undefined ? { db: resolve(options.db) } : {}),
    ...(options.policyVariant !== undefined ? { policyVariant: options.policyVariant } : {}),
    ...(options.solo === true ? { solo: true } : {}),
  });
  const started = Date.now();

  if (options.rescore !== undefined) {
    const simulations = await loadSimulations(resolve(options.rescore));
    const result = await rescore(domain, simulations, { ...(judge === undefined ? {} : { judge }), agent: options.rescore });
    console.log(formatSummary(result.summary));
    if (options.out !== undefined) {
      const out = resolve(options.out);
      writeFileAtomically(join(out, "rescored-entries.jsonl"), result.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
      writeFileAtomically(join(out, "rescored-summary.json"), `${JSON.stringify(result.summary, null, 2)}\n`);
      console.log(`\nentries: ${join(out, "rescored-entries.jsonl")}\nsummary: ${join(out, "rescored-summary.json")}`);
    }
    return;
  }

  const oracle = options.policy === "oracle";
  // The oracle's user never reads the guidelines; a model playing the user must.
  let guidelines: UserGuidelines = { plain: "", tools: "" };
  try {
    guidelines = await loadUserGuidelines(resolve(options.data));
  } catch (error) {
    if (!oracle) throw error;
  }
  // Read before any model loads or anything is written, so a missing file stops the run at once.
  const agentInstruction = options.agentInstruction === undefined ? undefined : readFileSync(resolve(options.agentInstruction), "utf8").trim();
  const taskIds = options.tasks;
  if (taskIds?.length === 0) throw new UsageError("--tasks names no task");
  let participants: Participants = "oracle";
  if (!oracle) {
    const agent = (await loadModel(options.policy!)).policy;
    const user = options.user === undefined ? agent : (await loadModel(options.user, "--user")).policy;
    participants = { agent, user };
  }
  const total = (taskIds?.length ?? domain.tasks.filter((task) => !domain.solo || isSoloTask(task)).length) * options.trials;
  log.info({ domain: domain.definition.name, conversations: total, agent: options.policy, out: resolve(options.out!) }, "τ² run started");
  const bar = new ProgressBar(`τ² ${domain.definition.name}`, total);
  let successes = 0;
  let shown = 0;
  const result = await runTau2({
    domain,
    guidelines,
    participants,
    trials: options.trials,
    out: resolve(options.out!),
    concurrency: options.concurrency ?? (oracle ? 1 : 4),
    sampling: { agent: { temperature: options.temperature }, user: { temperature: options.userTemperature } },
    ...(taskIds === undefined ? {} : { taskIds }),
    ...(judge === undefined ? {} : { judge }),
    ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps }),
    ...(options.maxErrors === undefined ? {} : { maxErrors: options.maxErrors }),
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(agentInstruction === undefined ? {} : { agentInstruction }),
    notify: (line) => log.info(line),
    onProgress: ({ done, entry }) => {
      if (entry.success) successes++;
      log.debug({ id: entry.id, trial: entry.trial, success: entry.success }, "conversation scored");
      // A resumed run reports its first new trial after the ones already done.
      bar.tick(`succeeded ${successes} this run`, done - shown);
      shown = done;
    },
  });
  console.log(formatSummary(result.summary));
  console.log(`\n${((Date.now() - started) / 1000).toFixed(1)} s · run directory: ${resolve(options.out!)}`);
}
