// `envace eval finmcp`: run a policy on FinMCP-Bench samples with their tools on an MCP server, or
// score recorded predictions offline.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { formatSummary, loadSamples, rescoreFile, runFinMcp, type FinMcpSummary } from "@envace/bench-finmcp";
import { checkReach, listMcpTools, McpEnvironment, McpServerSpec } from "@envace/mcp";
import { InputError } from "@envace/protocol";
import { writeFileAtomically } from "@envace/records";
import { parseRehearsalSetting } from "@envace/rehearsal";
import { UsageError } from "../faults.js";
import type { Logger } from "../log.js";
import { loadModel } from "./policy.js";
import { rehearsalOption } from "./rehearsal-option.js";

/** The options of `envace eval finmcp`, as cli.ts declares them. */
export interface EvalFinMcpOptions {
  data: string;
  /** Exactly one of `policy` and `predictions`. */
  policy?: string;
  predictions?: string;
  out?: string;
  mcp?: string;
  mcpEnv?: string[];
  allowRemoteMcp?: boolean;
  callTimeout: number;
  maxRounds: number;
  concurrency: number;
  temperature: number;
  topP: number;
  rehearsal: string;
  memoryBudget?: number;
  limit?: number;
  /** Deprecated, and without effect: a run directory with the same options resumes by itself. */
  resume?: boolean;
}

/** `--mcp`: an http(s) URL (streamable HTTP), else a command line started over stdio. */
export function serverOf(mcp: string, env: readonly string[] = []): McpServerSpec {
  // No prototype: a variable named `__proto__` is a variable like any other.
  const variables = Object.create(null) as Record<string, string>;
  for (const pair of env) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--mcp-env: expected KEY=VALUE, got "${pair}"`);
    variables[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (/^https?:\/\//i.test(mcp)) {
    if (env.length > 0) throw new UsageError("--mcp-env applies to a server started over stdio, not to a URL");
    const parsed = McpServerSpec.safeParse({ transport: "http", url: mcp });
    if (!parsed.success) throw new UsageError(`--mcp: not a URL: ${mcp}`);
    return parsed.data;
  }
  const [command, ...args] = mcp.trim().split(/\s+/);
  if (command === undefined || command === "") throw new UsageError("--mcp: give a command line or an http(s) URL");
  return McpServerSpec.parse({ transport: "stdio", command, args, ...(env.length > 0 ? { env: variables } : {}) });
}

export async function run(options: EvalFinMcpOptions, log: Logger): Promise<void> {
  const rehearsal = parseRehearsalSetting(rehearsalOption(options.rehearsal));
  let samples = await loadSamples(resolve(options.data));
  if (options.limit !== undefined) samples = samples.slice(0, options.limit);

  if (options.predictions !== undefined) {
    const out = options.out === undefined ? undefined : resolve(options.out);
    if (out !== undefined && existsSync(join(out, "summary.json"))) throw new InputError(`${join(out, "summary.json")} exists already: choose another --out`);
    const { summary, missing } = await rescoreFile(samples, resolve(options.predictions));
    report(summary, `FinMCP-Bench, recorded predictions (${options.predictions})`);
    if (missing.length > 0)
      console.log(`\nno prediction for ${missing.length} sample(s), not scored: ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ", …" : ""}`);
    if (out !== undefined) {
      writeFileAtomically(join(out, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
      console.log(`\nsummary: ${join(out, "summary.json")}`);
    }
    return;
  }

  const server = serverOf(options.mcp!, options.mcpEnv);
  const environmentOptions = { server, callTimeoutMs: options.callTimeout, allowRemote: options.allowRemoteMcp === true };
  // Both must answer before anything is written: a bad server or model stops the command, not every sample.
  checkReach(server, environmentOptions.allowRemote);
  const listed = await listMcpTools(server, { timeoutMs: options.callTimeout, allowRemote: environmentOptions.allowRemote });
  const { policy } = await loadModel(options.policy!);

  const out = resolve(options.out!);
  if (options.resume === true) log.warn("--resume is deprecated and does nothing: a run directory with the same options resumes by itself");
  const started = Date.now();
  const { summary } = await runFinMcp({
    samples,
    policy,
    environment: (sample) => new McpEnvironment({ ...environmentOptions, allow: () => sample.toolNames }),
    out,
    concurrency: options.concurrency,
    maxRounds: options.maxRounds,
    sampling: { temperature: options.temperature, topP: options.topP },
    rehearsal,
    ...(options.memoryBudget === undefined ? {} : { memoryBudget: options.memoryBudget }),
    // The specs, not the policy's id: they name the server and the model.
    describe: { policy: options.policy!, mcp: options.mcp! },
    notify: (line) => log.info(line),
    onEntry: (entry, done, total) => {
      if (entry.error !== undefined) log.warn({ id: entry.id, error: entry.error, done, total }, "sample failed");
      else if (done === total || done % 10 === 0) log.info({ done, total }, "samples run");
    },
  });
  report(summary, `FinMCP-Bench (${options.policy}, ${listed.length} tools on ${options.mcp}), ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`\nentries: ${join(out, "entries.jsonl")}\nsummary: ${join(out, "summary.json")}`);
}

function report(summary: FinMcpSummary, title: string): void {
  console.log(title);
  console.log(formatSummary(summary));
}
