// `envace eval bfcl`: score a policy, saved outputs, or the oracle on BFCL v4 categories.
import { resolve } from "node:path";
import { evaluateBfcl, percent, resolveCategories } from "@envace/bench-bfcl";
import type { InferenceMode, OutputSource } from "@envace/bench-bfcl";
import { policyFromSpec } from "@envace/models";
import { fail, nonNegative, parseCommandLine, positiveInteger } from "./command-line.js";

const USAGE = `usage: envace eval bfcl --data <dir> --out <run dir> (--policy <spec|oracle> | --results <file>) [options]

  --data <dir>          an upstream BFCL data folder (bfcl_eval/data): BFCL_v4_*.json, possible_answer/, multi_turn_func_doc/
  --category <names>    categories or collections, comma-separated or repeated (default: all)
  --policy <spec>       oracle (replay the reference answers), or a model: openai:<url>#<model>, onnx:<dir>, tiny:<dir>
  --results <file>      score saved outputs: JSON Lines {"id", "result"}, upstream's raw form or [{"name": {"arg": value}}]
  --out <dir>           run directory: entries.jsonl, summary.json, summary.md (and results.jsonl for a model)
  --mode <prompt|fc>    how a model is asked: Python call syntax in text (default), or native tool calls
  --long-context <file> upstream's long_context.py, for multi_turn_long_context (default: found next to --data)
  --concurrency <n>     entries in flight at once for a model (default 8)
  --temperature <t>     sampling temperature for a model (default 0.6)
  --top-p <p>           nucleus sampling for a model (default 0.95)
  --limit <n>           only the first n entries of each category (a quick look, not a score)
  --resume              keep the verdicts already in --out and score only the entries missing there
  --underscore-to-dot   expect "_" where function names have "." (for saved outputs of such models)`;

const LINE = { command: "eval bfcl", usage: USAGE };



function isMode(value: string): value is InferenceMode {
  return value === "prompt" || value === "fc";
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandLine(LINE, argv, {
    data: { type: "string" },
    category: { type: "string", multiple: true },
    policy: { type: "string" },
    results: { type: "string" },
    out: { type: "string" },
    mode: { type: "string" },
    "long-context": { type: "string" },
    concurrency: { type: "string" },
    temperature: { type: "string" },
    "top-p": { type: "string" },
    limit: { type: "string" },
    "underscore-to-dot": { type: "boolean" },
    resume: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if ("exit" in parsed) return parsed.exit;
  const { values } = parsed;
  if (values.data === undefined) return fail(LINE, "--data is required");
  if (values.out === undefined) return fail(LINE, "--out is required");
  if ((values.policy === undefined) === (values.results === undefined)) return fail(LINE, "give exactly one of --policy and --results");
  const mode = values.mode ?? "prompt";
  if (!isMode(mode)) return fail(LINE, `--mode must be prompt or fc, got ${JSON.stringify(mode)}`);

  let categories: string[];
  let source: OutputSource;
  let limit: number | undefined;
  try {
    categories = resolveCategories((values.category ?? ["all"]).flatMap((c) => c.split(",")).map((c) => c.trim()).filter(Boolean));
    limit = positiveInteger("limit", values.limit);
    if (values.results !== undefined) source = { kind: "results", file: resolve(values.results) };
    else if (values.policy === "oracle") source = { kind: "oracle" };
    else {
      const temperature = nonNegative("temperature", values.temperature) ?? 0.6;
      const topP = nonNegative("top-p", values["top-p"]) ?? 0.95;
      const concurrency = positiveInteger("concurrency", values.concurrency);
      const { policy } = await policyFromSpec(values.policy!);
      source = { kind: "policy", policy, mode, sampling: { temperature, topP }, ...(concurrency !== undefined ? { concurrency } : {}) };
    }
  } catch (error) {
    return fail(LINE, (error as Error).message);
  }

  const started = Date.now();
  const report = await evaluateBfcl({
    dataDir: resolve(values.data),
    categories,
    source,
    outDir: resolve(values.out),
    ...(values["long-context"] !== undefined ? { longContextSource: resolve(values["long-context"]) } : {}),
    ...(values["underscore-to-dot"] ? { astOptions: { underscoreToDot: true } } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(values.resume ? { resume: true } : {}),
    onEntry: (_verdict, category, done, total) => {
      if (done === total || (source.kind === "policy" && done % 10 === 0)) process.stderr.write(`  ${category}: ${done}/${total}\n`);
    },
  });

  const width = Math.max(11, ...report.scores.map((s) => s.category.length), ...report.skipped.map((s) => s.category.length));
  console.log(`BFCL v4 (${source.kind === "policy" ? values.policy : source.kind}), ${((Date.now() - started) / 1000).toFixed(1)} s`);
  for (const score of report.scores) {
    console.log(`  ${score.category.padEnd(width)}  ${percent(score.accuracy).padStart(7)}  (${score.correct}/${score.total})`);
  }
  for (const { category, reason } of report.skipped) console.log(`  ${category.padEnd(width)}  not run: ${reason}`);
  const groups = report.summary.groups;
  const line = (name: string, g: { accuracy: number; complete: boolean }): string => `  ${name.padEnd(width)}  ${percent(g.accuracy).padStart(7)}${g.complete ? "" : "  (partial: categories not run count 0)"}`;
  console.log(["", line("non-live", groups.nonLive), line("live", groups.live), line("irrelevance", groups.irrelevance), line("multi-turn", groups.multiTurn), line("agentic", groups.agentic), line("overall", report.summary.overall)].join("\n"));
  if (report.summary.notRun.length > 0) console.log(`\nnot run (counted 0): ${report.summary.notRun.join(", ")}`);
  console.log(`\nentries: ${report.entriesFile}\nsummary: ${report.summaryFile}`);
  return 0;
}
