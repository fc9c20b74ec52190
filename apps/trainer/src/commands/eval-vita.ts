// `envace eval vita`: VitaBench delivery and instore, with upstream-exact tools.
import { resolve } from "node:path";
import { replayFile, type VitaDomain } from "@envace/bench-vita";

/** The options of `envace eval vita`, as cli.ts declares them. */
export interface EvalVitaOptions {
  domain: VitaDomain;
  data: string;
  replay: string;
  out: string;
}

export async function run(options: EvalVitaOptions): Promise<void> {
  const started = Date.now();
  const summary = await replayFile({ domain: options.domain, data: resolve(options.data), replay: resolve(options.replay), out: resolve(options.out) });
  const kept = summary.kept > 0 ? ` (${summary.kept} already in the run directory, kept)` : "";
  console.log(`VitaBench ${options.domain} · replayed ${summary.tasks - summary.kept} of ${summary.tasks} tasks${kept}: ${summary.calls} calls, ${summary.errors} answered with an error`);
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s · entries: ${summary.entries}`);
}
