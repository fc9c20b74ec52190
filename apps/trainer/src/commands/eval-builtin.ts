// `envace eval builtin`: held-out tasks of the built-in shop against its real environment, for
// any number of rehearsal settings in one run. Entries are appended as tasks finish, so a killed
// run resumes where it stopped when started again with the same options and --out.
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BuiltinEnvironment, DOMAIN_VERSION, generateTasks, outcomeReward, SYSTEM_PROMPT, SYSTEM_PROMPT_SHORT, WRITE_TOOLS } from "@envace/bench-builtin";
import { parseModelSpec, policyFromSpec } from "@envace/models";
import { parseJsonLines } from "@envace/protocol";
import { formatRehearsalSetting, parseRehearsalSetting } from "@envace/rehearsal";
import { evaluate, EvaluationEntry, summarizeEntries, type EvaluationSummary } from "../evaluate.js";
import { ProgressBar } from "../run/progress.js";
import { BUILTIN_REHEARSE_PROMPT } from "../setup/domain.js";

const USAGE = `usage: envace eval builtin --policy <spec> --out <run dir> [options]

Evaluate a policy on held-out tasks of the built-in shop against its real environment, with and
without test-time private rehearsal. Every combination of --rehearsal, --memory-budget and
--safe-writes values is one setting; all of them run in one invocation.

  --policy <spec>             openai:<base-url>#<model>, onnx:<folder> or tiny:<checkpoint folder> (see @envace/models)
  --out <dir>                 run directory: eval-config.json, entries.jsonl, summary.json
  --tasks <n>                 held-out tasks (default 50)
  --seed <s>                  seed of the held-out tasks and of all sampling (default 0)
  --split test|train          (default test)
  --system-prompt short|default   the system prompt the policy was trained with (default short, as envace train)
  --rehearse-prompt compact|full  the Rehearse prompt it was trained with: compact (as envace train) or the full one (default compact)
  --rehearsal <setting>       none, parallel:N or sequential:N; repeat or comma-separate (default none)
  --memory-budget <tokens>    token budget of the rehearsal memory, or none; repeat or comma-separate (default none)
  --safe-writes [off|on|both] gate writes that rehearsal predicted to fail (flag alone: on; default off)
  --concurrency <n>           tasks at once (default 4)
  --max-turns <n>             Act turns per rollout (default 8)
  --max-prompt-tokens <n>     prompt limit per generation (default: the model's context for tiny/onnx, else 12288)
  --max-response-tokens <n>   output limit per generation (default 1024)
  --temperature <t>, --top-p <p>   committed Act sampling (default 0.6, 0.95)
  --no-fidelity               skip the rehearsal-fidelity probes
  --save-trajectories         also write every episode to trajectories.jsonl

Example: the rehearsal table for a trained tiny model (N = 0…3, both modes, with and without a budget):
  envace eval builtin --policy tiny:runs/demo/checkpoints/step-40 --tasks 100 --seed 1 \\
    --rehearsal none,parallel:1,parallel:2,parallel:3,sequential:1,sequential:2,sequential:3 \\
    --memory-budget none,64 --out runs/demo/eval-rehearsal`;

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

class UsageError extends Error {}

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error;
    console.error(`envace eval builtin: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed === "help") {
    console.log(USAGE);
    return 0;
  }
  const { out, settings, concurrency, saveTrajectories } = parsed;

  let model;
  try {
    model = await policyFromSpec(parsed.policy);
  } catch (error) {
    console.error(`envace eval builtin: ${(error as Error).message}`);
    return 2;
  }
  const config: EvalConfig = { ...parsed.config, maxPromptTokens: parsed.config.maxPromptTokens ?? (await modelContext(parsed.policy)) ?? 12288 };

  await mkdir(out, { recursive: true });
  const configFile = join(out, "eval-config.json");
  if (existsSync(configFile)) {
    const previous = JSON.parse(await readFile(configFile, "utf8")) as Record<string, unknown>;
    const changed = Object.keys(config).filter((key) => JSON.stringify(previous[key]) !== JSON.stringify(config[key as keyof EvalConfig]));
    if (changed.length > 0) {
      const what = changed.map((key) => `${key}: ${JSON.stringify(previous[key])} → ${JSON.stringify(config[key as keyof EvalConfig])}`).join(", ");
      console.error(`envace eval builtin: ${out} holds a run with other options (${what}); use another --out, or the same options to resume it`);
      return 2;
    }
  } else {
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
  }

  const entriesFile = join(out, "entries.jsonl");
  let previous: EvaluationEntry[];
  try {
    previous = await readEntries(entriesFile);
  } catch (error) {
    console.error(`envace eval builtin: ${(error as Error).message}`);
    return 2;
  }

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
        ...(saveTrajectories
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
  return 0;
}

type Parsed =
  | "help"
  | {
      policy: string;
      out: string;
      settings: Setting[];
      concurrency: number;
      saveTrajectories: boolean;
      config: Omit<EvalConfig, "maxPromptTokens"> & { maxPromptTokens: number | undefined };
    };

function parseOptions(argv: string[]): Parsed {
  // `--safe-writes` alone means on; `--safe-writes both` runs each setting with and without.
  const args = argv.flatMap((arg, i) => (arg === "--safe-writes" && !["on", "off", "both"].includes(argv[i + 1] ?? "") ? ["--safe-writes", "on"] : [arg]));
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      help: { type: "boolean", short: "h" },
      policy: { type: "string" },
      out: { type: "string" },
      tasks: { type: "string", default: "50" },
      seed: { type: "string", default: "0" },
      split: { type: "string", default: "test" },
      "system-prompt": { type: "string", default: "short" },
      "rehearse-prompt": { type: "string", default: "compact" },
      rehearsal: { type: "string", multiple: true },
      "memory-budget": { type: "string", multiple: true },
      "safe-writes": { type: "string", default: "off" },
      concurrency: { type: "string", default: "4" },
      "max-turns": { type: "string", default: "8" },
      "max-prompt-tokens": { type: "string" },
      "max-response-tokens": { type: "string", default: "1024" },
      temperature: { type: "string", default: "0.6" },
      "top-p": { type: "string", default: "0.95" },
      "no-fidelity": { type: "boolean", default: false },
      "save-trajectories": { type: "boolean", default: false },
    },
  });
  if (values.help === true) return "help";
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.policy === undefined) throw new UsageError("--policy is required");
  if (values.out === undefined) throw new UsageError("--out is required");
  try {
    parseModelSpec(values.policy);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const int = (name: string, text: string, min: number): number => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(text)}`);
    return value;
  };
  const number = (name: string, text: string, ok: (v: number) => boolean, range: string): number => {
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || !ok(value)) throw new UsageError(`--${name} must be ${range}, got ${JSON.stringify(text)}`);
    return value;
  };
  const choice = <T extends string>(name: string, text: string, allowed: readonly T[]): T => {
    if (!(allowed as readonly string[]).includes(text)) throw new UsageError(`--${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(text)}`);
    return text as T;
  };
  const list = (items: readonly string[] | undefined, fallback: string): string[] =>
    [...new Set((items ?? [fallback]).flatMap((item) => item.split(",")).map((item) => item.trim()).filter(Boolean))];

  const rehearsals = list(values.rehearsal, "none").map((text) => {
    try {
      return formatRehearsalSetting(parseRehearsalSetting(text));
    } catch (error) {
      throw new UsageError(`--rehearsal: ${(error as Error).message}`);
    }
  });
  const budgets = list(values["memory-budget"], "none").map((text) => (text === "none" ? null : int("memory-budget", text, 1)));
  const gates = { off: [false], on: [true], both: [false, true] }[choice("safe-writes", values["safe-writes"], ["off", "on", "both"] as const)];
  const settings: Setting[] = [];
  for (const rehearsal of rehearsals) {
    // Without rehearsal there is no memory to budget and no prediction to gate on.
    for (const memoryBudget of rehearsal === "none" ? [null] : budgets) {
      for (const safeWrites of rehearsal === "none" ? [false] : gates) settings.push({ rehearsal, memoryBudget, safeWrites });
    }
  }

  return {
    policy: values.policy,
    out: values.out,
    settings,
    concurrency: int("concurrency", values.concurrency, 1),
    saveTrajectories: values["save-trajectories"],
    config: {
      benchmark: "builtin",
      domainVersion: DOMAIN_VERSION,
      policy: values.policy,
      tasks: int("tasks", values.tasks, 1),
      seed: int("seed", values.seed, 0),
      split: choice("split", values.split, ["test", "train"] as const),
      systemPrompt: choice("system-prompt", values["system-prompt"], ["default", "short"] as const),
      rehearsePrompt: choice("rehearse-prompt", values["rehearse-prompt"], ["compact", "full"] as const),
      maxTurns: int("max-turns", values["max-turns"], 1),
      maxPromptTokens: values["max-prompt-tokens"] === undefined ? undefined : int("max-prompt-tokens", values["max-prompt-tokens"], 1),
      maxResponseTokens: int("max-response-tokens", values["max-response-tokens"], 1),
      temperature: number("temperature", values.temperature, (v) => v >= 0, "a number ≥ 0"),
      topP: number("top-p", values["top-p"], (v) => v > 0 && v <= 1, "in (0, 1]"),
      fidelity: !values["no-fidelity"],
    },
  };
}

/** The context length of a local model (`max_position_embeddings` of its config.json), less one position to generate in. */
async function modelContext(spec: string): Promise<number | undefined> {
  const parsed = parseModelSpec(spec);
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
