// `envace eval bfcl`: score a policy, saved outputs, or the oracle on BFCL v4 categories.
import { resolve } from "node:path";
import { evaluateBfcl, percent, resolveCategories } from "@envace/bench-bfcl";
import type { InferenceMode, OutputSource } from "@envace/bench-bfcl";
import { InputError } from "@envace/protocol";
import { UsageError } from "../faults.js";
import type { Logger } from "../log.js";

/** The options of `envace eval bfcl`, as cli.ts declares them. */
export interface EvalBfclOptions {
  data: string;
  out: string;
  /** Exactly one of `policy` and `results`. */
  policy?: string;
  results?: string;
  category?: string[];
  mode: InferenceMode;
  longContext?: string;
  concurrency: number;
  temperature: number;
  topP: number;
  limit?: number;
  /** Deprecated, and without effect: a run directory with the same options resumes by itself. */
  resume?: boolean;
  underscoreToDot?: boolean;
}

export async function run(options: EvalBfclOptions, log: Logger): Promise<void> {
  let categories: string[];
  try {
    categories = resolveCategories(options.category ?? ["all"]);
  } catch (error) {
    throw error instanceof InputError ? new UsageError(`--category: ${error.message}`) : error;
  }
  let source: OutputSource;
  if (options.results !== undefined) source = { kind: "results", file: resolve(options.results) };
  else if (options.policy === "oracle") source = { kind: "oracle" };
  else {
    // Model runtimes load only when a model is asked for, not for the oracle or saved results.
    const { loadModel } = await import("./policy.js");
    const { policy } = await loadModel(options.policy!);
    source = {
      kind: "policy",
      policy,
      mode: options.mode,
      sampling: { temperature: options.temperature, topP: options.topP },
      concurrency: options.concurrency,
    };
  }

  if (options.resume === true) log.warn("--resume is deprecated and does nothing: a run directory with the same options resumes by itself");
  const started = Date.now();
  const report = await evaluateBfcl({
    dataDir: resolve(options.data),
    categories,
    source,
    outDir: resolve(options.out),
    ...(options.longContext !== undefined ? { longContextSource: resolve(options.longContext) } : {}),
    ...(options.underscoreToDot ? { astOptions: { underscoreToDot: true } } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    notify: (line) => log.info(line),
    onEntry: (_verdict, category, done, total) => {
      if (done === total || (source.kind === "policy" && done % 10 === 0)) log.info({ category, done, total }, "entries scored");
    },
  });

  const width = Math.max(11, ...report.scores.map((s) => s.category.length), ...report.skipped.map((s) => s.category.length));
  console.log(`BFCL v4 (${source.kind === "policy" ? options.policy : source.kind}), ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const score of report.scores) {
    console.log(`  ${score.category.padEnd(width)}  ${percent(score.accuracy).padStart(7)}  (${score.correct}/${score.total})`);
  }
  for (const { category, reason } of report.skipped) console.log(`  ${category.padEnd(width)}  not run: ${reason}`);
  const groups = report.summary.groups;
  const line = (name: string, g: { accuracy: number; complete: boolean }): string =>
    `  ${name.padEnd(width)}  ${percent(g.accuracy).padStart(7)}${g.complete ? "" : "  (partial: categories not run count 0)"}`;
  console.log(
    [
      "",
      line("non-live", groups.nonLive),
      line("live", groups.live),
      line("irrelevance", groups.irrelevance),
      line("multi-turn", groups.multiTurn),
      line("agentic", groups.agentic),
      line("overall", report.summary.overall),
    ].join("\n"),
  );
  if (report.summary.notRun.length > 0) console.log(`\nnot run (counted 0): ${report.summary.notRun.join(", ")}`);
  console.log(`\nentries: ${report.entriesFile}\nsummary: ${report.summaryFile}`);
}
