/**
 * The built-in shop's evaluation as a resumable run directory (`@envace/records`' `EvalRun`), for
 * any number of rehearsal settings: `options.json` (what must not change between a run and its
 * resumption; a folder of an older version's `eval-config.json` holding the same is adopted),
 * `entries.jsonl` (one line per episode as it finishes), `summary.json` (rewritten atomically
 * after each setting) and, when asked, `trajectories.jsonl`.
 *
 * ```ts
 * const run = BuiltinEvalRun.open(out, config);          // refuses a folder holding other options; nothing written yet
 * const summaries = await run.evaluate({ policy, settings, concurrency: 8 });
 * console.log(formatBuiltinTable(summaries, false));
 * ```
 */
import {
  BUILTIN_REFLECT_INSTRUCTIONS,
  BUILTIN_REHEARSE_PROMPT,
  BuiltinEnvironment,
  DOMAIN_VERSION,
  generateTasks,
  outcomeReward,
  SYSTEM_PROMPT,
  SYSTEM_PROMPT_SHORT,
  WRITE_TOOLS,
} from "@envace/bench-builtin";
import type { Policy, Tokenizer } from "@envace/protocol";
import { EvalRun } from "@envace/records";
import type { Episode } from "@envace/rehearsal";
import { z } from "zod";
import { evaluate, EvaluationEntry, summarizeEntries, type EvaluationSummary } from "./evaluate.js";
import { renderTable } from "./text-table.js";

/** What must not change between a run and its resumption (settings may be added). */
export interface BuiltinEvalConfig {
  benchmark: "builtin";
  domainVersion: number;
  policy: string;
  tasks: number;
  seed: number;
  split: "test" | "train";
  systemPrompt: "default" | "short";
  rehearsePrompt: "compact" | "full";
  /** `compact`: the domain's short reflect instructions (a policy trained on reflect rows); absent: the default ones. */
  reflectPrompt?: "compact";
  maxTurns: number;
  maxPromptTokens: number;
  maxResponseTokens: number;
  temperature: number;
  topP: number;
  fidelity: boolean;
}

/** The config of a run of this version of the built-in domain. */
export function builtinEvalConfig(options: Omit<BuiltinEvalConfig, "benchmark" | "domainVersion">): BuiltinEvalConfig {
  return { benchmark: "builtin", domainVersion: DOMAIN_VERSION, ...options };
}

/** One column of the results: a rehearsal setting, a memory budget and whether writes are gated. */
export interface BuiltinSetting {
  rehearsal: string;
  memoryBudget: number | null;
  safeWrites: boolean;
}

export function settingKey(s: BuiltinSetting): string {
  return `${s.rehearsal}|${s.memoryBudget ?? "none"}|${s.safeWrites ? "gated" : "ungated"}`;
}

export interface BuiltinEvaluateOptions {
  policy: Policy;
  tokenizer?: Tokenizer;
  settings: readonly BuiltinSetting[];
  concurrency: number;
  saveTrajectories?: boolean;
  /** Once, before the first episode: how many remain and how many were done by an earlier run (which the run directory's notices also say). */
  onStart?: (progress: { remaining: number; done: number; total: number }) => void;
  onEntry?: (setting: BuiltinSetting, entry: EvaluationEntry, tally: { solved: number; done: number }) => void;
}

const TrajectoryLine = z.object({ setting: z.string(), taskId: z.string(), episode: z.unknown() });

/** An episode's key in the run directory: its setting and task. */
function episodeKey(setting: BuiltinSetting, taskId: string): string {
  return JSON.stringify([settingKey(setting), taskId]);
}

export class BuiltinEvalRun {
  private constructor(
    readonly out: string,
    readonly config: BuiltinEvalConfig,
    private readonly run: EvalRun<EvaluationEntry>,
  ) {}

  get entriesFile(): string {
    return this.run.entriesFile;
  }

  get summaryFile(): string {
    return this.run.summaryFile;
  }

  /**
   * Open `out` for `config`: a folder made with other options is refused, naming what changed
   * (`RunDirectoryError`). Entries already written are read back (a last line cut short by a
   * crash is dropped and told to `notify`); nothing else is written until `evaluate`.
   */
  static open(out: string, config: BuiltinEvalConfig, notify?: (line: string) => void): BuiltinEvalRun {
    const key = (entry: EvaluationEntry): string =>
      episodeKey({ rehearsal: entry.setting, memoryBudget: entry.memoryBudget, safeWrites: entry.safeWrites }, entry.taskId);
    return new BuiltinEvalRun(out, config, EvalRun.open({ out, options: config, entry: EvaluationEntry, key, notify, legacyOptionsFile: "eval-config.json" }));
  }

  /** Evaluate every setting's missing episodes, appending each as it finishes; the summaries in setting order. */
  async evaluate(options: BuiltinEvaluateOptions): Promise<EvaluationSummary[]> {
    const { config, run } = this;
    const tasks = generateTasks({
      seed: config.seed,
      count: config.tasks,
      split: config.split,
      systemPrompt: config.systemPrompt === "short" ? SYSTEM_PROMPT_SHORT : SYSTEM_PROMPT,
    });
    const pending = new Set(run.start(options.settings.flatMap((s) => tasks.map((t) => episodeKey(s, t.id)))));
    const total = options.settings.length * tasks.length;
    options.onStart?.({ remaining: pending.size, done: total - pending.size, total });
    const trajectories = options.saveTrajectories === true ? run.open("trajectories.jsonl", TrajectoryLine) : undefined;

    const summaries: EvaluationSummary[] = [];
    for (const setting of options.settings) {
      const previous = tasks.flatMap((t) => run.done.get(episodeKey(setting, t.id)) ?? []);
      const todo = tasks.filter((t) => pending.has(episodeKey(setting, t.id)));
      const fresh: EvaluationEntry[] = [];
      let solved = 0;
      if (todo.length > 0) {
        await evaluate({
          policy: options.policy,
          tasks: todo,
          environment: () => new BuiltinEnvironment(),
          reward: outcomeReward,
          rehearsal: setting.rehearsal,
          memoryBudget: setting.memoryBudget,
          safeWrites: setting.safeWrites,
          writeTools: WRITE_TOOLS,
          ...(config.rehearsePrompt === "compact" ? { rehearsePrompt: BUILTIN_REHEARSE_PROMPT } : {}),
          ...(config.reflectPrompt === "compact" ? { judgeInstructions: { reflect: BUILTIN_REFLECT_INSTRUCTIONS } } : {}),
          ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
          concurrency: options.concurrency,
          seed: config.seed,
          fidelity: config.fidelity,
          sampling: { act: { temperature: config.temperature, topP: config.topP } },
          limits: { maxTurns: config.maxTurns, maxPromptTokens: config.maxPromptTokens, maxResponseTokens: config.maxResponseTokens },
          onProgress: ({ entry }) => {
            fresh.push(entry);
            if (entry.success) solved += 1;
            run.append(entry);
            options.onEntry?.(setting, entry, { solved, done: fresh.length });
          },
          ...(trajectories === undefined
            ? {}
            : {
                onEpisode: (task: { id: string }, episode: Episode) => {
                  trajectories.append({ setting: settingKey(setting), taskId: task.id, episode });
                },
              }),
        });
      }
      summaries.push(
        summarizeEntries([...previous, ...fresh], { setting: setting.rehearsal, memoryBudget: setting.memoryBudget, safeWrites: setting.safeWrites }),
      );
      run.writeSummary({ config, settings: summaries });
    }
    return summaries;
  }
}

/** The results as a plain-text table, then fidelity per tool. */
export function formatBuiltinTable(summaries: readonly EvaluationSummary[], exactTokens: boolean): string {
  const rate = (value: number | null): string => (value === null ? "-" : value.toFixed(3));
  const header = [
    "setting",
    "budget",
    "gate",
    "tasks",
    "success",
    "reward",
    "fid.exact",
    "fid.keys",
    "fid.status",
    "fid.fail",
    `tokens/task${exactTokens ? "" : "*"}`,
    "memory",
    "fallbacks",
    "errors",
  ];
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
    s.fidelity.overall.failures === 0 ? "-" : `${s.fidelity.overall.failuresPredicted}/${s.fidelity.overall.failures}`,
    s.tokensPerTask.toFixed(0),
    s.memoryTokensPerTask === null ? "-" : s.memoryTokensPerTask.toFixed(0),
    s.setting === "none" ? "-" : `${s.malformed.reflect + s.malformed.summarize + s.skipped.reflect + s.skipped.summarize}`,
    String(s.errors),
  ]);
  const lines = [renderTable([header, ...rows])];
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
    lines.push(renderTable([["setting", ...tools], ...toolRows]));
  }
  if (!exactTokens) lines.push("", "* estimated where the policy returned no token ids");
  lines.push(
    "",
    "fid.fail: real calls that failed and that the Rehearse role, asked from the same history, predicted to fail / all real calls that failed; fallbacks: reflect/summarize outputs replaced by deterministic summaries (unreadable or prompt too long); gate: re-prompts that changed the call / all re-prompts",
  );
  return lines.join("\n");
}
