// `envace eval builtin`: held-out tasks of the built-in shop against its real environment, for
// any number of rehearsal settings in one run. Entries are appended as tasks finish, so a killed
// run resumes where it stopped when started again with the same options and --out.
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BUILTIN_REHEARSE_PROMPT, BuiltinEnvironment, DOMAIN_VERSION, generateTasks, outcomeReward, SYSTEM_PROMPT, SYSTEM_PROMPT_SHORT, WRITE_TOOLS } from "@envace/bench-builtin";
import { parseJsonLines, RecordError } from "@envace/protocol";
import { formatRehearsalSetting, parseRehearsalSetting } from "@envace/rehearsal";
import { evaluate, EvaluationEntry, summarizeEntries, type EvaluationSummary } from "../evaluate.js";
import { UsageError } from "../faults.js";
import { ProgressBar } from "../run/progress.js";
import { loadModel, modelSpec } from "./policy.js";

/** The options of `envace eval builtin`, as cli.ts declares them. */
export interface EvalBuiltinOptions {
  policy: string;
  out: string;
  tasks: number;
  seed: number;
  split: "test" | "train";
  systemPrompt: "default" | "short";
  rehearsePrompt: "compact" | "full";
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

/** What must not change between a run and its resumption (settings may be added). */
interface EvalConfig {
  benchmark: "builtin";
  domainVersion: number;
  policy: string;
  tasks: number;
  seed: number;
  split: "test" | "train";
  systemPrompt: "default" | "short";
  rehearsePrompt: "compact" | "full";
  maxTurns: number;
  maxPromptTokens: number;
  maxResponseTokens: number;
  temperature: number;
  topP: number;
  fidelity: boolean;
}

interface Setting {
  rehearsal: string;
  memoryBudget: number | null;
  safeWrites: boolean;
}

export async function run(options: EvalBuiltinOptions): Promise<void> {
  const { out, concurrency } = options;
  const settings = settingsOf(options);
  modelSpec(options.policy);
  const configBase: Omit<EvalConfig, "maxPromptTokens"> = {
    benchmark: "builtin",
    domainVersion: DOMAIN_VERSION,
    policy: options.policy,
    tasks: options.tasks,
    seed: options.seed,
    split: options.split,
    systemPrompt: options.systemPrompt,
    rehearsePrompt: options.rehearsePrompt,
    maxTurns: options.maxTurns,
    maxResponseTokens: options.maxResponseTokens,
    temperature: options.temperature,
    topP: options.topP,
    fidelity: options.fidelity,
  };
  const config: EvalConfig = { ...configBase, maxPromptTokens: options.maxPromptTokens ?? (await modelContext(options.policy)) ?? 12288 };
  const configFile = join(out, "eval-config.json");
  if (existsSync(configFile)) {
    const previous = await readJsonObject(configFile);
    const changed = Object.keys(config).filter((key) => JSON.stringify(previous[key]) !== JSON.stringify(config[key as keyof EvalConfig]));
    if (changed.length > 0) {
      const what = changed.map((key) => `${key}: ${JSON.stringify(previous[key])} → ${JSON.stringify(config[key as keyof EvalConfig])}`).join(", ");
      throw new UsageError(`${out} holds a run with other options (${what}); use another --out, or the same options to resume it`);
    }
  }
  const entriesFile = join(out, "entries.jsonl");
  const previous = await readEntries(entriesFile);
  // The model loads (and its server must answer) before anything is written.
  const model = await loadModel(options.policy);

  await mkdir(out, { recursive: true });
  if (!existsSync(configFile)) await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);

  const tasks = generateTasks({
    seed: config.seed,
    count: config.tasks,
    split: config.split,
    systemPrompt: config.systemPrompt === "short" ? SYSTEM_PROMPT_SHORT : SYSTEM_PROMPT,
  });
  const taskIds = new Set(tasks.map((t) => t.id));
  const keyOf = (s: Setting): string => `${s.rehearsal}|${s.memoryBudget ?? "none"}|${s.safeWrites ? "gated" : "ungated"}`;
  const doneBySetting = new Map<string, EvaluationEntry[]>();
  for (const entry of previous.filter((e) => taskIds.has(e.taskId))) {
    const key = keyOf({ rehearsal: entry.setting, memoryBudget: entry.memoryBudget, safeWrites: entry.safeWrites });
    const done = doneBySetting.get(key);
    if (done === undefined) doneBySetting.set(key, [entry]);
    else done.push(entry);
  }
  const doneOf = (s: Setting): EvaluationEntry[] => doneBySetting.get(keyOf(s)) ?? [];
  const remaining = settings.reduce((n, s) => n + tasks.length - new Set(doneOf(s).map((e) => e.taskId)).size, 0);
  if (remaining < settings.length * tasks.length) console.error(`resuming ${out}: ${settings.length * tasks.length - remaining} of ${settings.length * tasks.length} episodes already done`);

  const bar = new ProgressBar("eval builtin", remaining);
  const summaries: EvaluationSummary[] = [];
  for (const setting of settings) {
    const done = doneOf(setting);
    const doneIds = new Set(done.map((e) => e.taskId));
    const todo = tasks.filter((t) => !doneIds.has(t.id));
    let writes = Promise.resolve();
    const fresh: EvaluationEntry[] = [];
    let solved = 0;
    if (todo.length > 0) {
      await evaluate({
        policy: model.policy,
        tasks: todo,
        environment: () => new BuiltinEnvironment(),
        reward: outcomeReward,
        rehearsal: setting.rehearsal,
        memoryBudget: setting.memoryBudget,
        safeWrites: setting.safeWrites,
        writeTools: WRITE_TOOLS,
        ...(config.rehearsePrompt === "compact" ? { rehearsePrompt: BUILTIN_REHEARSE_PROMPT } : {}),
        ...(model.tokenizer === undefined ? {} : { tokenizer: model.tokenizer }),
        concurrency,
        seed: config.seed,
        fidelity: config.fidelity,
        sampling: { act: { temperature: config.temperature, topP: config.topP } },
        limits: { maxTurns: config.maxTurns, maxPromptTokens: config.maxPromptTokens, maxResponseTokens: config.maxResponseTokens },
        onProgress: ({ entry }) => {
          fresh.push(entry);
          if (entry.success) solved += 1;
          writes = writes.then(() => appendFile(entriesFile, `${JSON.stringify(entry)}\n`));
          bar.tick(`${keyOf(setting)} solved ${solved}/${fresh.length}`);
        },
        ...(options.saveTrajectories
          ? {
              onEpisode: (task, episode) => {
                const line = JSON.stringify({ setting: keyOf(setting), taskId: task.id, episode });
                writes = writes.then(() => appendFile(join(out, "trajectories.jsonl"), `${line}\n`));
              },
            }
          : {}),
      });
    }
    await writes;
    summaries.push(summarizeEntries([...done, ...fresh], { setting: setting.rehearsal, memoryBudget: setting.memoryBudget, safeWrites: setting.safeWrites }));
    await writeJsonAtomically(join(out, "summary.json"), { config, settings: summaries });
  }

  console.log(formatTable(summaries, model.tokenizer !== undefined));
  console.log(`\nentries: ${entriesFile}\nsummary: ${join(out, "summary.json")}`);
}

/**
 * Every combination of the rehearsal settings, memory budgets and write gates asked for, in
 * order. Without rehearsal there is no memory to budget and no prediction to gate on.
 */
function settingsOf(options: EvalBuiltinOptions): Setting[] {
  const rehearsals = [...new Set(options.rehearsal ?? ["none"])].map((text) => {
    try {
      return formatRehearsalSetting(parseRehearsalSetting(text));
    } catch (error) {
      throw new UsageError(`--rehearsal: ${(error as Error).message}`);
    }
  });
  const budgets = [...new Set(options.memoryBudget ?? [null])];
  const gates = { off: [false], on: [true], both: [false, true] }[options.safeWrites];
  const settings: Setting[] = [];
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

/**
 * The entries already written. A last line cut off by a crash (no newline) is dropped and its task
 * evaluated again; any other bad line is an error naming the file and line.
 */
async function readEntries(file: string): Promise<EvaluationEntry[]> {
  if (!existsSync(file)) return [];
  let text = await readFile(file, "utf8");
  if (text.length > 0 && !text.endsWith("\n")) {
    text = text.slice(0, text.lastIndexOf("\n") + 1);
    await writeFile(file, text);
  }
  return parseJsonLines(EvaluationEntry, text, file);
}

/** A JSON object file of an earlier run; a torn or hand-edited one is an error naming it. */
async function readJsonObject(file: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new RecordError({ file }, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new RecordError({ file }, [{ path: "", message: "expected a JSON object" }]);
  return value as Record<string, unknown>;
}

async function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  await writeFile(`${file}.tmp`, `${JSON.stringify(value, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

/** The results as a plain-text table, then fidelity per tool. */
export function formatTable(summaries: readonly EvaluationSummary[], exactTokens: boolean): string {
  const rate = (value: number | null): string => (value === null ? "-" : value.toFixed(3));
  const header = ["setting", "budget", "gate", "tasks", "success", "reward", "fid.exact", "fid.keys", "fid.status", `tokens/task${exactTokens ? "" : "*"}`, "memory", "fallbacks", "errors"];
  const rows = summaries.map((s) => [
    s.setting,
    s.setting === "none" ? "-" : String(s.memoryBudget ?? "none"),
    s.setting === "none" ? "-" : s.safeWrites ? `on (${s.gate.changed}/${s.gate.events})` : "off",
    String(s.tasks),
    rate(s.successRate),
    rate(s.meanReward),
    rate(s.fidelity.overall.exactRate),
    rate(s.fidelity.overall.keysRate),
    rate(s.fidelity.overall.statusRate),
    s.tokensPerTask.toFixed(0),
    s.memoryTokensPerTask === null ? "-" : s.memoryTokensPerTask.toFixed(0),
    s.setting === "none" ? "-" : `${s.malformed.reflect + s.malformed.summarize + s.skipped.reflect + s.skipped.summarize}`,
    String(s.errors),
  ]);
  const lines = [render([header, ...rows])];
  const tools = [...new Set(summaries.flatMap((s) => Object.keys(s.fidelity.tools)))].sort();
  if (tools.length > 0) {
    lines.push("", "fidelity per tool (exact / keys / status)");
    const toolRows = summaries.map((s) => [
      `${s.setting}${s.setting === "none" ? "" : ` ${s.memoryBudget ?? "none"} ${s.safeWrites ? "gated" : ""}`}`.trim(),
      ...tools.map((tool) => {
        const t = s.fidelity.tools[tool];
        return t === undefined ? "-" : `${rate(t.exactRate)} / ${rate(t.keysRate)} / ${rate(t.statusRate)}`;
      }),
    ]);
    lines.push(render([["setting", ...tools], ...toolRows]));
  }
  if (!exactTokens) lines.push("", "* estimated where the policy returned no token ids");
  lines.push("", "fallbacks: reflect/summarize outputs replaced by deterministic summaries (unreadable or prompt too long); gate: re-prompts that changed the call / all re-prompts");
  return lines.join("\n");
}

function render(table: readonly string[][]): string {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]?.length ?? 0)));
  return table.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ").trimEnd()).join("\n");
}
