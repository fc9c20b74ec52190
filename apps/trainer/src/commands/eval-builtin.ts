// `envace eval builtin`: held-out tasks of the built-in shop against its real environment, for
// any number of rehearsal settings in one run (see ../evaluate-builtin.ts). A killed run resumes
// where it stopped when started again with the same options and --out (`@envace/records`' rule).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { BuiltinEvalRun, builtinEvalConfig, formatBuiltinTable, settingKey, type BuiltinSetting } from "../evaluate-builtin.js";

import { ProgressBar } from "../run/progress.js";
import { loadModel, modelSpec } from "./policy.js";
import { rehearsalOption } from "./rehearsal-option.js";

/** The options of `envace eval builtin`, as cli.ts declares them. */
export interface EvalBuiltinOptions {
  policy: string;
  out: string;
  tasks: number;
  seed: number;
  split: "test" | "train";
  systemPrompt: "default" | "short";
  rehearsePrompt: "compact" | "full";
  reflectPrompt: "compact" | "default";
  /** Rehearsal settings as given (`none`, `parallel:N`, `sequential:N`); default `none`. */
  rehearsal?: string[];
  /** Memory budgets in tokens, `null` for none; default none. */
  memoryBudget?: (number | null)[];
  safeWrites: "off" | "on" | "both";
  concurrency: number;
  maxTurns: number;
  maxPromptTokens?: number;
  maxResponseTokens: number;
  temperature: number;
  topP: number;
  fidelity: boolean;
  saveTrajectories?: boolean;
}

export async function run(options: EvalBuiltinOptions): Promise<void> {
  const settings = settingsOf(options);
  modelSpec(options.policy);
  const config = builtinEvalConfig({
    policy: options.policy,
    tasks: options.tasks,
    seed: options.seed,
    split: options.split,
    systemPrompt: options.systemPrompt,
    rehearsePrompt: options.rehearsePrompt,
    // Written only when compact, so run folders from before the option still resume.
    ...(options.reflectPrompt === "compact" ? { reflectPrompt: "compact" as const } : {}),
    maxTurns: options.maxTurns,
    maxPromptTokens: options.maxPromptTokens ?? (await modelContext(options.policy)) ?? 12288,
    maxResponseTokens: options.maxResponseTokens,
    temperature: options.temperature,
    topP: options.topP,
    fidelity: options.fidelity,
  });
  const evalRun = BuiltinEvalRun.open(options.out, config, (line) => console.error(line));
  // The model loads (and its server must answer) before anything is written.
  const model = await loadModel(options.policy);

  let bar: ProgressBar | undefined;
  const summaries = await evalRun.evaluate({
    policy: model.policy,
    ...(model.tokenizer === undefined ? {} : { tokenizer: model.tokenizer }),
    settings,
    concurrency: options.concurrency,
    ...(options.saveTrajectories === true ? { saveTrajectories: true } : {}),
    onStart: ({ remaining }) => {
      bar = new ProgressBar("eval builtin", remaining);
    },
    onEntry: (setting, _entry, { solved, done }) => bar?.tick(`${settingKey(setting)} solved ${solved}/${done}`),
  });

  console.log(formatBuiltinTable(summaries, model.tokenizer !== undefined));
  console.log(`\nentries: ${evalRun.entriesFile}\nsummary: ${evalRun.summaryFile}`);
}

/**
 * Every combination of the rehearsal settings, memory budgets and write gates asked for, in
 * order. Without rehearsal there is no memory to budget and no prediction to gate on.
 */
function settingsOf(options: EvalBuiltinOptions): BuiltinSetting[] {
  const rehearsals = [...new Set(options.rehearsal ?? ["none"])].map(rehearsalOption);
  const budgets = [...new Set(options.memoryBudget ?? [null])];
  const gates = { off: [false], on: [true], both: [false, true] }[options.safeWrites];
  const settings: BuiltinSetting[] = [];
  for (const rehearsal of new Set(rehearsals)) {
    for (const memoryBudget of rehearsal === "none" ? [null] : budgets) {
      for (const safeWrites of rehearsal === "none" ? [false] : gates) settings.push({ rehearsal, memoryBudget, safeWrites });
    }
  }
  return settings;
}

/** The context length of a local model (`max_position_embeddings` of its config.json), less one position to generate in. */
async function modelContext(spec: string): Promise<number | undefined> {
  const parsed = modelSpec(spec);
  if (parsed.kind === "openai") return undefined;
  try {
    const config = JSON.parse(await readFile(join(parsed.dir, "config.json"), "utf8")) as { max_position_embeddings?: unknown };
    return typeof config.max_position_embeddings === "number" ? config.max_position_embeddings - 1 : undefined;
  } catch {
    return undefined;
  }
}
