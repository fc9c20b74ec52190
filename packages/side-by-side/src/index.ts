/**
 * Our code against upstream's on the same work, measured in one run: whole processes (median of
 * interleaved runs) and passes inside one process — the first, warm (passes 2–6) and steady (the
 * second half). Node compiles hot code while it runs, so ours keeps getting faster after the sixth
 * pass; CPython's passes are alike from the second on. Each side is a process that prints one
 * JSON line (`SideFigures`): ours a bundled worker that calls `reportPasses`
 * (`@envace/side-by-side/worker`), upstream a Python driver that calls `side_by_side.report`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { SideFigures } from "./worker.js";

export type { SideFigures } from "./worker.js";

/** The folder of `side_by_side.py`, on the drivers' `PYTHONPATH`. */
export const pythonHelpers = fileURLToPath(new URL("../python", import.meta.url));

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Warm: passes 2–6, after the first. Steady: the second half of the passes. */
export function warmAndSteady(passMs: readonly number[]): { warm: number; steady: number } {
  return { warm: median(passMs.slice(1, 6)), steady: median(passMs.slice(passMs.length >> 1)) };
}

/** A worker and what it imports as one ES module, as a user's compiled install would run it. */
async function bundleWorker(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@envace/source"],
    logLevel: "error",
  });
}

/** The interpreter a command runs (`sys.executable`), so a version manager's shim is not timed. */
function realInterpreter(command: string): string {
  const child = spawnSync(command, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  const path = child.stdout.trim();
  return child.status === 0 && path ? path : command;
}

/** One piece of work both sides do: the arguments each side's program takes before the pass count. */
export interface Workload {
  readonly label: string;
  /** What `agree` of `total` counts, e.g. "verdicts equal to the labels". */
  readonly agreement: string;
  readonly ours: readonly string[];
  /** After the upstream checkout's path, which the driver always gets first. */
  readonly upstream: readonly string[];
}

export interface Comparison {
  /** The table's title, e.g. "BFCL side by side". */
  readonly title: string;
  /** Our worker's source; bundled with esbuild before it runs, as a user's compiled install would run it. */
  readonly worker: string;
  /**
   * Upstream's driver, run as `python -S <driver> <checkout> …` when the environment variable
   * `checkoutVariable` names a checkout (`what` says of what) and `pythonVariable` its Python
   * (default python3); otherwise ours runs alone and the table says how to add upstream.
   */
  readonly upstream: { readonly driver: string; readonly checkoutVariable: string; readonly pythonVariable: string; readonly what: string };
  readonly workloads: readonly Workload[];
  /** Whole-process runs per side (interleaved). */
  readonly runs: number;
  /** Passes in each process that measures warm and steady passes (at least 6). */
  readonly passes: number;
  /** Processes that measure warm and steady passes, per side (interleaved; default 3). */
  readonly warmProcesses?: number;
  /** Keep the worker's bundle (to profile it by hand) and print where it is. */
  readonly keep?: boolean;
}

interface Run {
  readonly wallMs: number;
  readonly figures?: SideFigures;
  readonly failure?: string;
}

type Side = "ours" | "upstream";

/** Run every workload on both sides and print the table, with how many items each side agreed on. */
export async function compareSideBySide(comparison: Comparison): Promise<void> {
  // Refused before the worker is bundled: warm is passes 2–6, so fewer passes cannot be read.
  const { passes } = comparison;
  if (!Number.isInteger(passes) || passes < 6) throw new RangeError(`passes: ${passes} is not a whole number of passes ≥ 6`);
  const scratch = mkdtempSync(join(tmpdir(), "envace-side-by-side-"));
  try {
    const worker = join(scratch, "worker.mjs");
    await bundleWorker(comparison.worker, worker);
    compareBundled(comparison, worker, scratch);
  } finally {
    if (comparison.keep === true) console.log(`worker bundle kept in ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  }
}

function compareBundled(comparison: Comparison, worker: string, scratch: string): void {
  const { passes, warmProcesses = 3 } = comparison;
  const checkout = process.env[comparison.upstream.checkoutVariable];
  const python = checkout ? realInterpreter(process.env[comparison.upstream.pythonVariable] ?? "python3") : undefined;
  // A minimal environment for both: variables a machine sets for every process (an extra CA
  // bundle node parses at start-up; Python start-up hooks come from site-packages, which the
  // driver adds without running them) are not the work either side is timed on. Python keeps
  // its compiled bytecode (written by an untimed first run) however the calling shell sets
  // PYTHONDONTWRITEBYTECODE.
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PYTHONPYCACHEPREFIX: join(scratch, "pycache"), PYTHONPATH: pythonHelpers };
  const timed = (command: string, args: readonly string[]): Run => {
    const start = performance.now();
    const child = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 24, env });
    const wallMs = performance.now() - start;
    if (child.status !== 0) return { wallMs, failure: (child.stderr || child.stdout || String(child.error)).trim().split("\n").at(-1) };
    return { wallMs, figures: JSON.parse(child.stdout.trim().split("\n").at(-1)!) as SideFigures };
  };
  const command = (side: Side, workload: Workload, n: number): [string, string[]] =>
    side === "ours"
      ? [process.execPath, [worker, ...workload.ours, String(n)]]
      : [python!, ["-S", comparison.upstream.driver, checkout!, ...workload.upstream, String(n)]];

  const sides: Side[] = python ? ["upstream", "ours"] : ["ours"];
  console.log(
    `${comparison.title} (${comparison.runs} interleaved whole-process runs; warm and steady: ${warmProcesses} process${warmProcesses === 1 ? "" : "es"} of ${passes} passes; load average ${loadavg()[0]!.toFixed(1)} on this machine)\n`,
  );
  console.log(`both sides with PATH and HOME only${python ? `; upstream with ${python} -S (site-packages added, no .pth hooks), bytecode cached` : ""}\n`);
  if (!python) {
    const { checkoutVariable, pythonVariable, what } = comparison.upstream;
    console.log(`upstream not run: set ${checkoutVariable} to ${what} and ${pythonVariable} to its Python\n`);
  }

  for (const workload of comparison.workloads) {
    const whole: Record<Side, Run[]> = { ours: [], upstream: [] };
    const failed = new Map<Side, string>();
    // Untimed: writes upstream's bytecode and brings both sides' files into the page cache.
    for (const side of sides) {
      const run = timed(...command(side, workload, 1));
      if (run.failure !== undefined) failed.set(side, run.failure);
    }
    for (let r = 0; r < comparison.runs; r++) {
      for (const side of sides.filter((s) => !failed.has(s))) {
        const run = timed(...command(side, workload, 1));
        if (run.failure !== undefined) failed.set(side, run.failure);
        else whole[side].push(run);
      }
    }
    // Warm passes need one process that runs several; several of them, interleaved, for a median.
    const warm: Record<Side, number[]> = { ours: [], upstream: [] };
    const steady: Record<Side, number[]> = { ours: [], upstream: [] };
    for (let r = 0; r < warmProcesses; r++) {
      for (const side of sides.filter((s) => !failed.has(s))) {
        const figures = timed(...command(side, workload, passes)).figures;
        if (figures === undefined) continue;
        const picked = warmAndSteady(figures.passMs);
        warm[side].push(picked.warm);
        steady[side].push(picked.steady);
      }
    }
    // Start-up, loading and the first pass come from the whole-process runs themselves.
    const figure = (side: Side, pick: (f: SideFigures) => number): number | undefined =>
      whole[side].length ? median(whole[side].map((r) => pick(r.figures!))) : undefined;
    const rows: [string, (side: Side) => number | undefined, (v: number) => string][] = [
      ["whole process (s)", (s) => (whole[s].length ? median(whole[s].map((r) => r.wallMs)) / 1000 : undefined), (v) => v.toFixed(2)],
      ["start-up + import (ms)", (s) => figure(s, (f) => f.importMs), (v) => v.toFixed(0)],
      ["loading the data (ms)", (s) => figure(s, (f) => f.loadMs), (v) => v.toFixed(0)],
      ["first pass (ms)", (s) => figure(s, (f) => f.passMs[0]!), (v) => v.toFixed(0)],
      ["warm pass, 2–6 (ms)", (s) => (warm[s].length ? median(warm[s]) : undefined), (v) => v.toFixed(0)],
      [`steady pass, ${(passes >> 1) + 1}–${passes} (ms)`, (s) => (steady[s].length ? median(steady[s]) : undefined), (v) => v.toFixed(0)],
      ["peak RSS, one pass (MiB)", (s) => (whole[s].length ? Math.max(...whole[s].map((r) => r.figures!.maxRssKiB)) / 1024 : undefined), (v) => v.toFixed(0)],
    ];
    const agreement = (side: Side): string | undefined => {
      const runs = whole[side];
      return runs.length ? `${Math.min(...runs.map((r) => r.figures!.agree))}/${runs[0]!.figures!.total}` : undefined;
    };
    console.log(`${workload.label}: ${agreement("ours") ?? "not run"} ${workload.agreement}`);
    if (agreement("upstream")) console.log(`  upstream: ${agreement("upstream")}`);
    const stoodIn = whole.upstream[0]?.figures?.stoodIn ?? [];
    if (stoodIn.length > 0)
      console.log(`  upstream ran with inert stand-ins for modules not installed here (imported, never used in this work): ${stoodIn.join(", ")}`);
    for (const [side, why] of failed) console.log(`  ${side} did not run: ${why}`);
    console.log(`  ${"".padEnd(26)}${"upstream".padStart(10)}${"ours".padStart(10)}${"ratio".padStart(8)}`);
    for (const [name, value, format] of rows) {
      const [u, o] = [value("upstream"), value("ours")];
      const ratio = u !== undefined && o !== undefined ? `${(name.startsWith("peak") ? o / u : u / o).toFixed(2)}×` : "";
      console.log(
        `  ${name.padEnd(26)}${(u === undefined ? "–" : format(u)).padStart(10)}${(o === undefined ? "–" : format(o)).padStart(10)}${ratio.padStart(8)}`,
      );
    }
    console.log();
  }
  console.log("ratio: upstream time ÷ ours (above 1, ours is faster); for peak RSS, ours ÷ upstream");
  console.log(
    "start-up + import: ours from process start (node's clock); upstream from its driver's first line, so its interpreter's start-up counts only in the whole process",
  );
}
