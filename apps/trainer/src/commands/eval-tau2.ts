// `envace eval tau2`: run a policy (or the oracle) on a τ²-bench domain, or re-score saved runs.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  formatSummary,
  loadDomain,
  loadSimulations,
  loadUserGuidelines,
  NlJudge,
  rescore,
  runTau2,
  type Participants,
  type UserGuidelines,
} from "@envace/bench-tau2";
import { parseModelSpec, policyFromSpec } from "@envace/models";
import { ProgressBar } from "../run/progress.js";
import { fail, nonNegative, parseCommandLine, positiveInteger } from "./command-line.js";

const USAGE = `usage: envace eval tau2 --domain <retail|airline|mock> --data <dir> --policy <spec|oracle> --out <run dir> [options]
       envace eval tau2 --domain <name> --data <dir> --rescore <file> [--out <dir>] [--judge <spec>]

  --domain <name>        retail, airline or mock
  --data <dir>           the τ² data folder (holding <domain>/ and user_simulator/), or the domain folder itself
  --policy <spec>        oracle (plays the gold actions: a self-test), or the agent's model:
                         openai:<url>#<model>, onnx:<dir>, tiny:<dir>
  --user <spec>          the user simulator's model (default: the --policy model)
  --judge <spec>         openai:<url>#<model> judging NL_ASSERTION (tasks that need it are masked without one)
  --trials <k>           trials per task (default 1); the summary reports pass^1 … pass^k
  --out <dir>            run directory: config.json, entries.jsonl, simulations.jsonl, summary.json;
                         an interrupted run resumes from what is there
  --tasks <ids>          only these task ids, comma-separated
  --tasks-file <file>    another tasks.json (a split, or your own tasks)
  --db <file>            another database file (e.g. upstream's airline db.json)
  --concurrency <n>      conversations in flight at once (default 4)
  --max-steps <n>        messages per conversation before it is cut (default 200)
  --max-errors <n>       tool errors per conversation before it is cut (default 10)
  --temperature <t>      the agent's sampling temperature (default 0, as upstream)
  --user-temperature <t> the user simulator's temperature (default 0, as upstream)
  --seed <n>             trial t samples with seed n + t
  --agent-instruction <file>  replace the agent instructions wrapped around the policy
  --rescore <file>       score saved conversations (simulations.jsonl, or upstream's results.json)`;

const LINE = { command: "eval tau2", usage: USAGE };



function judgeFrom(spec: string | undefined): NlJudge | undefined {
  if (spec === undefined) return undefined;
  const parsed = parseModelSpec(spec);
  if (parsed.kind !== "openai") throw new Error(`--judge must be an openai:<url>#<model> spec, got ${JSON.stringify(spec)}`);
  return NlJudge.fromServer(parsed.baseURL, parsed.model);
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(LINE, argv, {
    domain: { type: "string" },
    data: { type: "string" },
    policy: { type: "string" },
    user: { type: "string" },
    judge: { type: "string" },
    trials: { type: "string" },
    out: { type: "string" },
    tasks: { type: "string" },
    "tasks-file": { type: "string" },
    db: { type: "string" },
    concurrency: { type: "string" },
    "max-steps": { type: "string" },
    "max-errors": { type: "string" },
    temperature: { type: "string" },
    "user-temperature": { type: "string" },
    seed: { type: "string" },
    "agent-instruction": { type: "string" },
    rescore: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if ("exit" in parsed) return parsed.exit;
  const { values } = parsed;
  if (values.domain === undefined) return fail(LINE, "--domain is required");
  if (values.data === undefined) return fail(LINE, "--data is required");
  if (values.rescore === undefined && values.policy === undefined) return fail(LINE, "give --policy (or --rescore to score saved conversations)");
  if (values.rescore === undefined && values.out === undefined) return fail(LINE, "--out is required");

  try {
    const domain = await loadDomain(values.domain, {
      data: resolve(values.data),
      ...(values["tasks-file"] !== undefined ? { tasks: resolve(values["tasks-file"]) } : {}),
      ...(values.db !== undefined ? { db: resolve(values.db) } : {}),
    });
    const judge = judgeFrom(values.judge);
    const started = Date.now();

    if (values.rescore !== undefined) {
      const simulations = await loadSimulations(resolve(values.rescore));
      const result = await rescore(domain, simulations, { ...(judge === undefined ? {} : { judge }), agent: values.rescore });
      console.log(formatSummary(result.summary));
      if (values.out !== undefined) {
        const out = resolve(values.out);
        mkdirSync(out, { recursive: true });
        writeFileSync(join(out, "rescored-entries.jsonl"), result.entries.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
        writeFileSync(join(out, "rescored-summary.json"), `${JSON.stringify(result.summary, null, 2)}\n`);
        console.log(`\nentries: ${join(out, "rescored-entries.jsonl")}\nsummary: ${join(out, "rescored-summary.json")}`);
      }
      return 0;
    }

    const oracle = values.policy === "oracle";
    let participants: Participants = "oracle";
    if (!oracle) {
      const agent = (await policyFromSpec(values.policy!)).policy;
      const user = values.user === undefined ? agent : (await policyFromSpec(values.user)).policy;
      participants = { agent, user };
    }
    // The oracle's user never reads the guidelines; a model playing the user must.
    let guidelines: UserGuidelines = { plain: "", tools: "" };
    try {
      guidelines = await loadUserGuidelines(resolve(values.data));
    } catch (error) {
      if (!oracle) throw error;
    }
    const trials = positiveInteger("trials", values.trials) ?? 1;
    const taskIds = values.tasks?.split(",").map((id) => id.trim()).filter(Boolean);
    const total = (taskIds?.length ?? domain.tasks.length) * trials;
    const bar = new ProgressBar(`τ² ${domain.definition.name}`, total);
    let successes = 0;
    let shown = 0;
    const maxSteps = positiveInteger("max-steps", values["max-steps"]);
    const maxErrors = positiveInteger("max-errors", values["max-errors"]);
    const seed = values.seed === undefined ? undefined : Number(values.seed);
    if (seed !== undefined && !Number.isInteger(seed)) throw new Error(`--seed must be a whole number, got ${JSON.stringify(values.seed)}`);
    const result = await runTau2({
      domain,
      guidelines,
      participants,
      trials,
      out: resolve(values.out!),
      concurrency: positiveInteger("concurrency", values.concurrency) ?? (oracle ? 1 : 4),
      sampling: {
        agent: { temperature: nonNegative("temperature", values.temperature) ?? 0 },
        user: { temperature: nonNegative("user-temperature", values["user-temperature"]) ?? 0 },
      },
      ...(taskIds === undefined ? {} : { taskIds }),
      ...(judge === undefined ? {} : { judge }),
      ...(maxSteps === undefined ? {} : { maxSteps }),
      ...(maxErrors === undefined ? {} : { maxErrors }),
      ...(seed === undefined ? {} : { seed }),
      ...(values["agent-instruction"] === undefined ? {} : { agentInstruction: readFileSync(resolve(values["agent-instruction"]), "utf8").trim() }),
      onProgress: ({ done, entry }) => {
        if (entry.success) successes++;
        // A resumed run reports its first new trial after the ones already done.
        bar.tick(`succeeded ${successes} this run`, done - shown);
        shown = done;
      },
    });
    console.log(formatSummary(result.summary));
    console.log(`\n${((Date.now() - started) / 1000).toFixed(1)} s · run directory: ${resolve(values.out!)}`);
    return 0;
  } catch (error) {
    console.error(`envace eval tau2: ${(error as Error).message}`);
    return 1;
  }
}
