#!/usr/bin/env node
// The `envace` command. Every command and its options are declared here, with commander; a
// command's implementation, and the model runtimes it brings in, is imported only when it runs,
// so `--help` or a mistyped option costs no more than commander itself.
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, InvalidArgumentError, Option, type CommandUnknownOpts } from "@commander-js/extra-typings";
import type { Logger, LogSettings } from "./log.js";

/** `--name <n>` as a whole number ≥ `min`. */
function wholeNumber(min: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === "" || !Number.isInteger(value) || value < min) throw new InvalidArgumentError(`Expected a whole number ≥ ${min}.`);
    return value;
  };
}

/** `--name <x>` as a finite number that `ok` accepts (`range` says which). */
function realNumber(ok: (value: number) => boolean, range: string): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || !ok(value)) throw new InvalidArgumentError(`Expected ${range}.`);
    return value;
  };
}

const nonNegative = realNumber((v) => v >= 0, "a number ≥ 0");
const probability = realNumber((v) => v > 0 && v <= 1, "a number in (0, 1]");
const integer = realNumber(Number.isInteger, "a whole number");

/** A repeatable option whose values may also be comma-separated: `--x a,b --x c` is [a, b, c]. */
function list(text: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...text
      .split(",")
      .map((item) => item.trim())
      .filter(Boolean),
  ];
}

/** Memory budgets: `none` or a number of tokens, repeatable and comma-separated. */
function budgets(text: string, previous: (number | null)[] | undefined): (number | null)[] {
  const tokens = wholeNumber(1);
  return [
    ...(previous ?? []),
    ...list(text, undefined).map((item) => {
      if (item === "none") return null;
      try {
        return tokens(item);
      } catch {
        throw new InvalidArgumentError("Expected none or a whole number of tokens ≥ 1.");
      }
    }),
  ];
}

/** Help and usage errors on the console, where a test that spies on it sees what a person would. */
const consoleOutput = {
  writeOut: (text: string) => console.log(text.replace(/\n$/, "")),
  writeErr: (text: string) => console.error(text.replace(/\n$/, "")),
};

/** A usage error of `envace <path>` on one line, then where to read the usage. */
function withUsageErrors<C extends CommandUnknownOpts>(command: C, path: string): C {
  const name = `envace ${path}`.trim();
  command.configureOutput({
    ...consoleOutput,
    outputError: (text, write) => {
      const trimmed = text.replace(/^error: /, "").trim();
      // eslint-disable-next-line regexp/no-super-linear-move -- the argument parser's own short message
      const line = trimmed.replace(/\s*\n\s*/g, " ");
      write(`${name}: ${line}\n`);
    },
  });
  command.showHelpAfterError(`(see ${name} --help)`);
  return command;
}

/** What is wrong with a combination of options, or undefined when nothing is. */
type Refusal<O> = (options: O) => string | undefined;

/** Refuses a command line that gives both of options `a` and `b`, or neither. */
function exactlyOne<O>(a: keyof O, b: keyof O, problem: string): Refusal<O> {
  return (options) => ((options[a] === undefined) === (options[b] === undefined) ? problem : undefined);
}

/** Refuses a command line that gives neither option `a` nor `b`. */
function eitherOf<O>(a: keyof O, b: keyof O, problem: string): Refusal<O> {
  return (options) => (options[a] === undefined && options[b] === undefined ? problem : undefined);
}

/** Refuses a command line that gives option `given` without option `needed`. */
function needs<O>(given: keyof O, needed: keyof O, problem: string): Refusal<O> {
  return (options) => (options[given] !== undefined && options[needed] === undefined ? problem : undefined);
}

function example(...lines: string[]): string {
  return `\nExample:\n${lines.map((line) => `  ${line}`).join("\n")}`;
}

/** What a failure is reported with: the command whose action ran, and the log it asked for. */
interface RunState {
  command: string;
  log?: LogSettings;
}

/** The whole command tree, for tests and docs that walk it; nothing runs until it parses. */
export function commandTree(): Command {
  return declare({ command: "" });
}

/** The whole command tree; `state` says which command's action is running, with what log. */
function declare(state: RunState): Command {
  const envace = new Command("envace")
    .description("Train tool-using LLM agents with EnvACE and evaluate them.")
    .exitOverride()
    .addOption(
      new Option("--log-format <format>", "log lines on stderr: pretty, or json (one object a line)")
        .choices(["pretty", "json"] as const)
        .default("pretty" as const)
        .env("ENVACE_LOG_FORMAT"),
    )
    .addOption(
      new Option("--log-level <level>", "the least severe log lines shown (debug: also a failure's stack trace)")
        .choices(["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const)
        .default("info" as const)
        .env("ENVACE_LOG_LEVEL"),
    )
    // Subcommands inherit it: their --help lists the global options too.
    .configureHelp({ showGlobalOptions: true })
    .addHelpText("after", example("envace train --out runs/default", "envace --log-format json eval builtin --help"));
  withUsageErrors(envace, "");
  /** The log of a long-running command, as the global options ask; pino is loaded only then. */
  const logger = async (): Promise<Logger> => (await import("./log.js")).createLogger(envace.opts());
  /**
   * The action of a long-running command: the `run` of the module `load` imports only now, given
   * the log. Each of `refusals` says what is wrong with a combination of options that commander's
   * own checks cannot express, if anything is; the first that does is a usage error.
   */
  const runs =
    <O>(load: () => Promise<{ run(options: O, log: Logger): Promise<void> }>, ...refusals: Refusal<O>[]) =>
    async (options: O, command: CommandUnknownOpts): Promise<void> => {
      const refused = refusals.map((refusal) => refusal(options)).find((problem) => problem !== undefined);
      if (refused !== undefined) command.error(refused, { exitCode: 2 });
      await (await load()).run(options, await logger());
    };
  envace.hook("preAction", (_envace, action) => {
    const names: string[] = [];
    for (let command: CommandUnknownOpts | null = action; command !== null && command !== envace; command = command.parent) names.unshift(command.name());
    state.command = names.join(" ");
    state.log = envace.opts();
  });

  withUsageErrors(envace.command("train"), "train")
    .summary("train a policy (EnvACE, GRPO baselines) and evaluate it")
    .description(
      "Train a policy (EnvACE, or a GRPO baseline), evaluate it on held-out tasks and write the report. Running again with the same config resumes the run.",
    )
    .option("--config <file>", "a YAML or JSON train config (see apps/trainer/presets/ for documented examples)")
    .addOption(new Option("--preset <name>", 'a config shipped with envace; "default" is the embedded default').default("default").conflicts("config"))
    .requiredOption("--out <dir>", "the run directory; running again with the same config resumes it")
    .addHelpText("after", example("envace train --out runs/default", "envace train --config apps/trainer/presets/qwen3-8b-tinker.yaml --out runs/qwen3"))
    .action(runs(() => import("./commands/train.js")));

  withUsageErrors(envace.command("pretrain"), "pretrain")
    .summary("build a base checkpoint: the warm start alone, for later runs' init_from")
    .description(
      "Run the warm start of a config with trainer.total_steps 0 (default: the base preset) and write its weights, " +
        "with a manifest of the config, the build time and each file's SHA-256, to <out>/base. " +
        "Copied to apps/trainer/checkpoints/base, it is the embedded default's init_from: embedded:base.",
    )
    .option("--config <file>", "a train config whose trainer.total_steps is 0 (default: apps/trainer/presets/base.yaml)")
    .requiredOption("--out <dir>", "the run directory; the checkpoint goes to <out>/base")
    .addHelpText("after", example("envace pretrain --out runs/base"))
    .action(runs(() => import("./commands/pretrain.js")));

  withUsageErrors(envace.command("demo"), "demo")
    .summary("roll out one task self-unfolded with a scripted policy (offline, seconds)")
    .description("Roll out one task self-unfolded: a scripted policy acts and rehearses the tool results itself (offline, a second).")
    .option("--json", "print the whole trajectory and its training rows as JSON")
    .addHelpText("after", example("envace demo"))
    .action(async (options) => {
      await (await import("./commands/demo.js")).run(options);
    });

  withUsageErrors(envace.command("report"), "report")
    .summary("write an HTML report of one or more runs")
    .description(
      "Write a self-contained HTML report of one or more runs: <run dir>/report.html for one run, envace-report.html for several, unless --out is given.",
    )
    .argument("<run dirs...>", "run directories written by envace train")
    .option("--out <file>", "the HTML file to write")
    .addHelpText("after", example("envace report runs/default", "envace report runs/default runs/grpo-simulator --out compare.html"))
    .action(async (runDirs, options) => {
      await (await import("./commands/report.js")).run({ runDirs, ...options });
    });

  withUsageErrors(envace.command("compare"), "compare")
    .summary("an arm against a baseline on the same evaluation tasks, with paired 95% intervals")
    .description(
      "Compare evaluations of two policies on the same tasks (envace eval builtin folders, one per seed, in the same order for both): " +
        "success and the Rehearse role's fidelity on real calls (exact, keys, status, failure recall) for each, and the difference arm − baseline " +
        "with a paired bootstrap interval over tasks.",
    )
    .usage("--baseline <eval dirs...> --arm <eval dirs...> [options]")
    .requiredOption("--baseline <dirs...>", "evaluation folders of the baseline, one per seed")
    .requiredOption("--arm <dirs...>", "evaluation folders of the arm, on the same tasks in the same order")
    .option("--setting <setting>", "the rehearsal setting compared", "none")
    .option("--resamples <n>", "bootstrap resamples", wholeNumber(100), 2000)
    .option("--seed <s>", "seed of the resampling", wholeNumber(0), 0)
    .option("--json", "print the comparison as JSON")
    .addHelpText(
      "after",
      example(
        "envace compare --baseline runs/hg/test/envace-s1 runs/hg/test/envace-s2 runs/hg/test/envace-s3 \\",
        "  --arm runs/hg/test/writes-05-s1 runs/hg/test/writes-05-s2 runs/hg/test/writes-05-s3",
      ),
    )
    .action(async (options, command) => {
      if (options.baseline.length !== options.arm.length) {
        command.error(
          `give as many --arm folders as --baseline folders, one per seed in the same order (${options.baseline.length} and ${options.arm.length})`,
          {
            exitCode: 2,
          },
        );
      }
      await (await import("./commands/compare.js")).run(options);
    });

  const evaluate = withUsageErrors(envace.command("eval"), "eval")
    .summary("evaluate a policy on a benchmark")
    .description("Evaluate a policy on a benchmark.")
    .addHelpText("after", example("envace eval bfcl --help"));

  withUsageErrors(evaluate.command("bfcl"), "eval bfcl")
    .summary("BFCL v4: AST checker and multi-turn environments")
    .description("Score a policy, saved outputs, or the oracle on BFCL v4 categories with the upstream AST checker and multi-turn environments.")
    .usage("--data <dir> --out <run dir> (--policy <spec|oracle> | --results <file>) [options]")
    .requiredOption("--data <dir>", "an upstream BFCL data folder (bfcl_eval/data): BFCL_v4_*.json, possible_answer/, multi_turn_func_doc/")
    .requiredOption(
      "--out <dir>",
      "run directory: options.json, entries.jsonl, summary.json, summary.md (and results.jsonl for a model); running again with the same options resumes it",
    )
    .option("--category <names>", "categories or collections, comma-separated or repeated (default: all)", list)
    .option("--policy <spec>", "oracle (replay the reference answers), or a model: openai:<url>#<model>, onnx:<dir>, tiny:<dir>")
    .addOption(
      new Option("--results <file>", 'score saved outputs: JSON Lines {"id", "result"}, upstream\'s raw form or [{"name": {"arg": value}}]').conflicts(
        "policy",
      ),
    )
    .addOption(
      new Option("--mode <mode>", "how a model is asked: Python call syntax in text, or native tool calls")
        .choices(["prompt", "fc"] as const)
        .default("prompt" as const),
    )
    .option("--long-context <file>", "upstream's long_context.py, for multi_turn_long_context (default: found next to --data)")
    .option("--concurrency <n>", "entries in flight at once for a model", wholeNumber(1), 8)
    .option("--temperature <t>", "sampling temperature for a model", nonNegative, 0.6)
    .option("--top-p <p>", "nucleus sampling for a model", probability, 0.95)
    .option("--limit <n>", "only the first n entries of each category (a quick look, not a score)", wholeNumber(1))
    // Kept so that scripts written for it still run: a run directory with the same options resumes by itself.
    .addOption(new Option("--resume", "deprecated: a run directory with the same options resumes by itself").hideHelp())
    .option("--underscore-to-dot", 'expect "_" where function names have "." (for saved outputs of such models)')
    .addHelpText(
      "after",
      example(
        "envace eval bfcl --data path/to/berkeley-function-call-leaderboard/bfcl_eval/data --category simple_python,multi_turn_base --policy oracle --out runs/bfcl-oracle --limit 5",
      ),
    )
    .action(runs(() => import("./commands/eval-bfcl.js"), exactlyOne("policy", "results", "give exactly one of --policy and --results")));

  withUsageErrors(evaluate.command("builtin"), "eval builtin")
    .summary("held-out tasks of the built-in shop, with and without private rehearsal")
    .description(
      "Evaluate a policy on held-out tasks of the built-in shop against its real environment, with and without test-time private rehearsal. " +
        "Every combination of --rehearsal, --memory-budget and --safe-writes values is one setting; all of them run in one invocation. " +
        "Running again with the same options and --out resumes the run; settings may be added, other options are refused.",
    )
    .usage("--policy <spec> --out <run dir> [options]")
    .requiredOption("--policy <spec>", "openai:<base-url>#<model>, onnx:<folder> or tiny:<checkpoint folder> (see @envace/models)")
    .requiredOption("--out <dir>", "run directory: options.json, entries.jsonl, summary.json")
    .option("--tasks <n>", "held-out tasks", wholeNumber(1), 50)
    .option("--seed <s>", "seed of the held-out tasks and of all sampling", wholeNumber(0), 0)
    .addOption(new Option("--split <split>", "which tasks").choices(["test", "train"] as const).default("test" as const))
    .addOption(
      new Option("--system-prompt <prompt>", "the system prompt the policy was trained with (short, as envace train)")
        .choices(["default", "short"] as const)
        .default("short" as const),
    )
    .addOption(
      new Option("--rehearse-prompt <prompt>", "the Rehearse prompt it was trained with: compact (as envace train) or the full one")
        .choices(["compact", "full"] as const)
        .default("compact" as const),
    )
    .addOption(
      new Option("--reflect-prompt <prompt>", "the reflect instructions: compact (a policy trained with sft.roles reflect) or the default ones")
        .choices(["compact", "default"] as const)
        .default("default" as const),
    )
    .option("--rehearsal <settings>", "none, parallel:N or sequential:N; repeat or comma-separate (default: none)", list)
    .option("--memory-budget <tokens>", "token budget of the rehearsal memory, or none; repeat or comma-separate (default: none)", budgets)
    .addOption(
      new Option("--safe-writes [gate]", "gate writes that rehearsal predicted to fail (the flag alone: on)")
        .choices(["off", "on", "both"] as const)
        .preset("on" as const)
        .default("off" as const),
    )
    .option("--concurrency <n>", "tasks at once", wholeNumber(1), 4)
    .option("--max-turns <n>", "Act turns per rollout", wholeNumber(1), 8)
    .option("--max-prompt-tokens <n>", "prompt limit per generation (default: the model's context for tiny/onnx, else 12288)", wholeNumber(1))
    .option("--max-response-tokens <n>", "output limit per generation", wholeNumber(1), 1024)
    .option("--temperature <t>", "committed Act sampling temperature", nonNegative, 0.6)
    .option("--top-p <p>", "committed Act nucleus sampling", probability, 0.95)
    .option("--no-fidelity", "skip the rehearsal-fidelity probes")
    .option("--save-trajectories", "also write every episode to trajectories.jsonl")
    .addHelpText(
      "after",
      example(
        "# the rehearsal table of a trained tiny model (N = 0…3, both modes, with and without a budget)",
        "envace eval builtin --policy tiny:runs/default/checkpoints/step-000024/policy --tasks 100 --seed 1 \\",
        "  --rehearsal none,parallel:1,parallel:2,parallel:3,sequential:1,sequential:2,sequential:3 \\",
        "  --memory-budget none,64 --out runs/default/eval-rehearsal",
      ),
    )
    .action(async (options) => {
      await (await import("./commands/eval-builtin.js")).run(options);
    });

  withUsageErrors(evaluate.command("finmcp"), "eval finmcp")
    .summary("FinMCP-Bench: tools on an MCP server, upstream tool-name precision, recall, F1 and exact match")
    .description(
      "Run a policy on FinMCP-Bench samples (each user turn from the reference prefix, tools executed on an MCP server, at most --max-rounds model calls a turn) " +
        "and score tool names as upstream, or score recorded predictions offline. Running again with the same options and --out runs only the samples missing there.",
    )
    .usage("--data <samples> (--policy <spec> --mcp <command|url> --out <run dir> | --predictions <file> [--out <dir>]) [options]")
    .requiredOption("--data <file>", "the samples: JSON Lines (one sample a line) or a JSON array")
    .option("--policy <spec>", "the model: openai:<url>#<model>, onnx:<dir>, tiny:<dir>")
    .addOption(
      new Option(
        "--predictions <file>",
        'score recorded predictions: JSON Lines {"id", "predicted": [tool names], "error"?} (entries.jsonl of a run fits)',
      ).conflicts("policy"),
    )
    .option("--mcp <command|url>", "the tool server: a command line started over stdio, or a streamable-HTTP URL")
    .option("--mcp-env <KEY=VALUE>", "an environment variable for a stdio server, repeatable", list)
    .option("--allow-remote-mcp", "allow an HTTP server that is not on this machine's loopback")
    .option(
      "--out <dir>",
      "run directory: options.json, entries.jsonl (a line per sample as it finishes), summary.json; running again with the same options resumes it",
    )
    .option("--call-timeout <ms>", "longest wait for one tool call (and to connect)", wholeNumber(1), 30_000)
    .option("--max-rounds <n>", "model calls per user turn (upstream: 20)", wholeNumber(1), 20)
    .option("--concurrency <n>", "samples in flight at once", wholeNumber(1), 4)
    .option("--temperature <t>", "sampling temperature", nonNegative, 0.6)
    .option("--top-p <p>", "nucleus sampling", probability, 0.95)
    .option("--rehearsal <setting>", "private rehearsal before each user turn: none, parallel:N or sequential:N", "none")
    .option("--memory-budget <tokens>", "token budget of the rehearsal memory (default: none)", wholeNumber(1))
    .option("--limit <n>", "only the first n samples (a quick look, not a score)", wholeNumber(1))
    // Kept so that scripts written for it still run: a run directory with the same options resumes by itself.
    .addOption(new Option("--resume", "deprecated: a run directory with the same options resumes by itself").hideHelp())
    .addHelpText(
      "after",
      example(
        'envace eval finmcp --data path/to/finmcp/samples.jsonl --mcp "python -m finmcp_server" --policy openai:http://localhost:8000/v1#Qwen/Qwen3-8B --out runs/finmcp',
        "envace eval finmcp --data path/to/finmcp/samples.jsonl --predictions runs/finmcp/entries.jsonl",
      ),
    )
    .action(
      runs(
        () => import("./commands/eval-finmcp.js"),
        eitherOf("predictions", "policy", "give --policy (or --predictions to score recorded predictions)"),
        needs("policy", "mcp", "--mcp is required to run a policy (the samples' tool server)"),
        needs("policy", "out", "--out is required to run a policy"),
      ),
    );

  withUsageErrors(evaluate.command("tau2"), "eval tau2")
    .summary("τ²-bench retail, airline, mock and telecom: upstream-exact tools, hashes and scoring")
    .description("Run a policy (or the oracle) on a τ²-bench domain with upstream-exact tools, hashes and scoring, or re-score saved conversations.")
    .usage("--domain <retail|airline|mock|telecom> --data <dir> (--policy <spec|oracle> --out <run dir> | --rescore <file> [--out <dir>]) [options]")
    .requiredOption("--domain <name>", "retail, airline, mock or telecom (dual control: the user acts on their phone)")
    .requiredOption("--data <dir>", "the τ² data folder (holding <domain>/ and user_simulator/), or the domain folder itself")
    .option("--policy <spec>", "oracle (plays the gold actions: a self-test), or the agent's model: openai:<url>#<model>, onnx:<dir>, tiny:<dir>")
    .option("--out <dir>", "run directory: options.json, entries.jsonl, simulations.jsonl, summary.json; running again with the same options resumes it")
    .option("--rescore <file>", "score saved conversations (simulations.jsonl, or upstream's results.json) instead of running")
    .option("--user <spec>", "the user simulator's model (default: the --policy model)")
    .option("--judge <spec>", "openai:<url>#<model> judging NL_ASSERTION (tasks that need it are masked without one)")
    .option("--trials <k>", "trials per task; the summary reports pass^1 … pass^k", wholeNumber(1), 1)
    .option("--tasks <ids>", "only these task ids, comma-separated or repeated", list)
    .option("--tasks-file <file>", "another tasks.json (a split, or your own tasks); telecom ships tasks_small.json and no tasks.json")
    .option("--db <file>", "another database file (e.g. upstream's airline db.json)")
    .option("--policy-variant <name>", "telecom's tech-support policy: manual (default) or workflow")
    .option(
      "--solo",
      "upstream's solo mode (mock, telecom): no user simulator; the agent works each task's ticket alone with both sides' tools and ends with done",
    )
    .option("--concurrency <n>", "conversations in flight at once (default: 4, 1 for the oracle)", wholeNumber(1))
    .option("--max-steps <n>", "messages per conversation before it is cut (default: 200)", wholeNumber(1))
    .option("--max-errors <n>", "tool errors per conversation before it is cut (default: 10)", wholeNumber(1))
    .option("--temperature <t>", "the agent's sampling temperature (as upstream)", nonNegative, 0)
    .option("--user-temperature <t>", "the user simulator's temperature (as upstream)", nonNegative, 0)
    .option("--seed <n>", "trial t samples with seed n + t", integer)
    .option("--agent-instruction <file>", "replace the agent instructions wrapped around the policy")
    .addHelpText(
      "after",
      example(
        "envace eval tau2 --domain retail --data path/to/tau2-bench/data/tau2 --policy openai:http://localhost:8000/v1#Qwen/Qwen3-8B --trials 4 --out runs/tau2-retail",
        "envace eval tau2 --domain mock --data path/to/tau2-bench/data/tau2 --rescore runs/tau2-mock/simulations.jsonl",
      ),
    )
    .action(
      runs(
        () => import("./commands/eval-tau2.js"),
        eitherOf("rescore", "policy", "give --policy (or --rescore to score saved conversations)"),
        // Whatever is not a re-scoring runs a policy, and writes its run directory.
        eitherOf("rescore", "out", "--out is required to run a policy"),
      ),
    );

  withUsageErrors(evaluate.command("vita"), "eval vita")
    .summary("VitaBench delivery and instore: upstream-exact tools, hashes and rubric judging")
    .description(
      "Run a policy on VitaBench delivery or instore tasks against a simulated user, scored by an LLM judge over sliding windows as upstream (pass^k, pass@k, avg@k), " +
        "or replay recorded tool calls on environments built fresh from each task (entries.jsonl: every call's content and error flag, and the DB hash). " +
        "Running again with the same options and --out resumes.",
    )
    .usage("--domain <delivery|instore> --data <dir> --out <run dir> (--replay <calls.jsonl> | --policy <spec> --judge <spec> [options])")
    .addOption(new Option("--domain <name>", "delivery or instore").choices(["delivery", "instore"] as const).makeOptionMandatory())
    .requiredOption("--data <dir>", "the VitaBench data folder (holding <domain>/tasks_en.json), or the domain folder itself")
    .requiredOption("--out <dir>", "run directory: options.json, entries.jsonl (and summary.json for a policy)")
    .option("--replay <file>", 'replay JSON Lines of {"id", "calls": [{"name", "arguments"}]}, the conformance labels\' own format')
    .addOption(new Option("--policy <spec>", "the agent's model: openai:<url>#<model>, onnx:<dir>, tiny:<dir>").conflicts("replay"))
    .option("--user <spec>", "the user simulator's model (default: the --policy model)")
    .option("--judge <spec>", "openai:<url>#<model>: the rubric judge (strict JSON answers)")
    .option("--trials <k>", "trials per task; the summary reports pass^k, pass@k and avg@k for k = 1 … k", wholeNumber(1), 1)
    .option("--rehearsal <setting>", "none, parallel:N or sequential:N: private rehearsal before each committed run")
    .option("--tasks <ids>", "only these task ids, comma-separated or repeated", list)
    .option("--concurrency <n>", "conversations in flight at once", wholeNumber(1), 4)
    .addHelpText(
      "after",
      example(
        "envace eval vita --domain delivery --data path/to/vitabench/data/vita/domains --replay path/to/calls.jsonl --out runs/vita-replay",
        "envace eval vita --domain instore --data path/to/vitabench/data/vita/domains --policy openai:http://localhost:8000/v1#Qwen/Qwen3-8B --judge openai:http://localhost:8001/v1#judge --trials 4 --out runs/vita-instore",
      ),
    )
    .action(
      runs(() => import("./commands/eval-vita.js"), exactlyOne("replay", "policy", "give --replay <calls.jsonl>, or --policy <spec> with --judge <spec>")),
    );

  withUsageErrors(envace.command("serve"), "serve")
    .summary("serve a policy as an OpenAI-compatible endpoint that rehearses privately")
    .description(
      "Serve a policy at /v1/chat/completions for any OpenAI-compatible agent harness; requests with tools may be rehearsed privately first (see apps/server/README.md). " +
        "Prints the URL it listens on; SIGTERM finishes the requests in flight, then exits.",
    )
    .requiredOption("--policy <spec>", "openai:<base-url>#<model>, onnx:<folder> or tiny:<checkpoint folder> (see @envace/models)")
    .option("--host <host>", "address to bind (default 127.0.0.1; beyond loopback a bearer token is required)")
    .option("--port <n>", "port (default 8080; 0 picks a free one)", wholeNumber(0))
    .option("--config <file>", "server.yaml: limits, concurrency, tokens, rehearsal, memory")
    .option("--token-file <file>", "bearer tokens for /v1, one a line, each at least 32 characters (or ENVACE_SERVER_TOKEN); required beyond loopback")
    .addHelpText("after", example("envace serve --policy tiny:runs/default/checkpoints/step-000024/policy --port 8080"))
    .action(async (options) => {
      // An explicit --log-level (or ENVACE_LOG_LEVEL) also sets the request log's, over server.yaml's.
      const logLevel = envace.getOptionValueSource("logLevel") === "default" ? undefined : envace.opts().logLevel;
      await (await import("@envace/server")).serve({ ...options, logLevel }, await logger());
    });

  return envace;
}

/** `--log-level debug` (or trace) adds the stack trace to a failure. */
function debugRequested(log: LogSettings | undefined): boolean {
  return log?.logLevel === "debug" || log?.logLevel === "trace";
}

/** The error's stable kind, where it has one (an EnvaceError's `code`, a Node system error's). */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Run `envace` with `argv` (the words after `envace`) and return the exit code: 0, 1 when the
 * command failed, 2 for a command line that cannot run. A failure prints one line naming the
 * command; usage errors add where to read the usage, bugs how to see the stack.
 */
export async function envace(argv: readonly string[]): Promise<number> {
  const state: RunState = { command: "" };
  const program = declare(state);
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    // Commander has printed its own: help (exit code 0), or a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    // Only now: what tells the user's faults apart from bugs knows the packages' error classes.
    const { describeFault } = await import("./faults.js");
    const { lines, exitCode } = describeFault(state.command, error, debugRequested(state.log));
    if (state.log?.logFormat === "json") {
      // Still one line: the log's last record, which a program reads like the others.
      const code = codeOf(error);
      // At level error whatever --log-level says: a failure is reported as in the pretty format.
      const log = (await import("./log.js")).createLogger({ logFormat: "json", logLevel: "error" });
      log.error({ command: `envace ${state.command}`.trim(), exitCode, ...(code === undefined ? {} : { code }) }, lines.join("\n"));
    } else {
      for (const line of lines) console.error(line);
    }
    return exitCode;
  }
}

/** Whether this module is the program node started (not a module a test imported). */
function startedAsProgram(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (startedAsProgram()) process.exitCode = await envace(process.argv.slice(2));
