// Side by side with upstream BFCL on the same work: single-turn decode + AST check of every
// perturbed output of simple_python, multiple and parallel (bfcl-verdicts, written as a prompting
// model's text), and the gold replay + check of multi_turn_base. Whole processes (median of
// interleaved runs) and passes inside one process: the first, warm (passes 2–6) and steady (the
// second half of the passes). Node compiles hot code while it runs, so ours keeps getting faster
// after the sixth pass; CPython's passes are alike from the second on. Upstream runs when
// ENVACE_BFCL_UPSTREAM names a berkeley-function-call-leaderboard folder (gorilla 6ea57973c7a6)
// and ENVACE_BFCL_PYTHON the Python to run it with (default python3); otherwise ours alone.
import { PyHashDict, pyRepr } from "@envace/python-text";
import { readJsonLines } from "@envace/records";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import * as z from "zod";
import { decodeSingleTurnResult } from "../decode.js";
import type { DecodedCall } from "../decode.js";
import { parsePyJson } from "../py/json.js";
import { missingDataNote, sharedDataDir } from "../shared-data.js";
import type { SideFigures, SpeedCase } from "./worker.bench.js";

const CATEGORIES = ["simple_python", "multiple", "parallel"];
const RUNS = Number(process.env.ENVACE_SPEED_RUNS ?? 9);
const PASSES = Number(process.env.ENVACE_SPEED_PASSES ?? 30);
if (!Number.isInteger(PASSES) || PASSES < 6) throw new Error(`ENVACE_SPEED_PASSES: ${process.env.ENVACE_SPEED_PASSES} is not a whole number of passes ≥ 6`);

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Warm: passes 2–6, after the first. Steady: the second half of the passes. */
function warmAndSteady(passMs: readonly number[]): { warm: number; steady: number } {
  return { warm: median(passMs.slice(1, 6)), steady: median(passMs.slice(passMs.length >> 1)) };
}

/** A decoded call as a prompting model writes it: `f(a=1, b='x')`, values by Python repr. */
export function callText(call: DecodedCall): string {
  return `${call.name}(${[...call.args].map(([key, value]) => `${key}=${pyRepr(value)}`).join(", ")})`;
}

const PyRecord = z.instanceof(PyHashDict);

function jsonLines(file: string): PyHashDict[] {
  return readJsonLines(file, PyRecord, { parse: parsePyJson });
}

/** Every perturbation case of the Python AST categories, with upstream's verdict. */
function speedCases(verdictsDir: string): SpeedCase[] {
  const cases: SpeedCase[] = [];
  for (const category of CATEGORIES) {
    const dir = join(verdictsDir, category);
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".expected.jsonl")).sort()) {
      const labels = new Map(jsonLines(join(dir, file)).map((d) => [d.get("id") as string, d.get("valid") as boolean]));
      for (const output of jsonLines(join(dir, file.replace(".expected.jsonl", ".jsonl")))) {
        const id = output.get("id") as string;
        const text = `[${decodeSingleTurnResult(output.get("result")!, "python").map(callText).join(", ")}]`;
        cases.push({ category, id, text, valid: labels.get(id)! });
      }
    }
  }
  return cases;
}

interface Run {
  readonly wallMs: number;
  readonly figures?: SideFigures;
  readonly failure?: string;
}

/** The interpreter a command runs (`sys.executable`), so a shim's own start-up is not timed. */
function realInterpreter(command: string): string {
  const child = spawnSync(command, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  const path = child.stdout.trim();
  return child.status === 0 && path ? path : command;
}

function timed(command: string, args: readonly string[]): Run {
  const start = performance.now();
  const child = spawnSync(command, args, { encoding: "utf8", maxBuffer: 1 << 24, env: plainEnv });
  const wallMs = performance.now() - start;
  if (child.status !== 0) return { wallMs, failure: (child.stderr || child.stdout || String(child.error)).trim().split("\n").at(-1) };
  return { wallMs, figures: JSON.parse(child.stdout.trim().split("\n").at(-1)!) as SideFigures };
}

const data = sharedDataDir();
if (!data) {
  console.log(missingDataNote("the side-by-side BFCL benchmark"));
  process.exit(0);
}
const bfcl = join(data, "bfcl");
const tmp = mkdtempSync(join(tmpdir(), "envace-bfcl-speed-"));
const casesFile = join(tmp, "cases.jsonl");
writeFileSync(casesFile, speedCases(join(data, "bfcl-verdicts")).map((c) => JSON.stringify(c)).join("\n") + "\n");
const worker = join(tmp, "worker.mjs");
await build({
  entryPoints: [join(import.meta.dirname, "worker.bench.ts")],
  outfile: worker,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  conditions: ["@envace/source"],
  logLevel: "error",
});

const upstreamDir = process.env.ENVACE_BFCL_UPSTREAM;
// Each side runs as a plain install would: a version manager's shim (a shell script that finds
// the interpreter, a quarter of a second here) is resolved to the interpreter it runs, and
// Python keeps its compiled bytecode (here under the bench's folder, written by an untimed
// first run) however the calling shell sets PYTHONDONTWRITEBYTECODE.
const python = upstreamDir ? realInterpreter(process.env.ENVACE_BFCL_PYTHON ?? "python3") : "python3";
// A minimal environment for both: variables a machine sets for every process (an extra CA
// bundle node parses at start-up; Python start-up hooks come from site-packages, which the
// driver adds without running them) are not the work either side is timed on.
const plainEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PYTHONPYCACHEPREFIX: join(tmp, "pycache") };
const driver = join(import.meta.dirname, "upstream_driver.py");
const workloads = {
  single: { label: "BFCL single-turn decode + AST check", ours: [casesFile, bfcl], upstream: [casesFile, bfcl] },
  multi: { label: "BFCL multi_turn_base gold replay + check", ours: [bfcl], upstream: [bfcl] },
} as const;
type Side = "ours" | "upstream";
const sideCommand = (side: Side, mode: keyof typeof workloads, passes: number): [string, string[]] =>
  side === "ours"
    ? [process.execPath, [worker, mode, ...workloads[mode].ours, String(passes)]]
    : [python, ["-S", driver, upstreamDir!, mode, ...workloads[mode].upstream, String(passes)]];

const load = loadavg()[0]!.toFixed(1);
console.log(`BFCL side by side (${RUNS} interleaved whole-process runs; warm and steady: 3 processes of ${PASSES} passes; load average ${load} on this machine)\n`);
console.log(`both sides with PATH and HOME only${upstreamDir ? `; upstream with ${python} -S (site-packages added, no .pth hooks), bytecode cached` : ""}\n`);
if (!upstreamDir) console.log("upstream not run: set ENVACE_BFCL_UPSTREAM to a berkeley-function-call-leaderboard folder and ENVACE_BFCL_PYTHON to its Python\n");

for (const mode of ["single", "multi"] as const) {
  const sides: Side[] = upstreamDir ? ["upstream", "ours"] : ["ours"];
  const whole: Record<Side, Run[]> = { ours: [], upstream: [] };
  const failed = new Map<Side, string>();
  // Untimed: writes upstream's bytecode and brings both sides' files into the page cache.
  for (const side of sides) {
    const run = timed(...sideCommand(side, mode, 1));
    if (run.failure !== undefined) failed.set(side, run.failure);
  }
  for (let r = 0; r < RUNS; r++) {
    for (const side of sides.filter((s) => !failed.has(s))) {
      const run = timed(...sideCommand(side, mode, 1));
      if (run.failure !== undefined) failed.set(side, run.failure);
      else whole[side].push(run);
    }
  }
  // Warm passes need one process that runs several; three of them, interleaved, for a median.
  const warm: Record<Side, number[]> = { ours: [], upstream: [] };
  const steady: Record<Side, number[]> = { ours: [], upstream: [] };
  for (let r = 0; r < 3; r++) {
    for (const side of sides.filter((s) => !failed.has(s))) {
      const figures = timed(...sideCommand(side, mode, PASSES)).figures;
      if (figures === undefined) continue;
      const passes = warmAndSteady(figures.passMs);
      warm[side].push(passes.warm);
      steady[side].push(passes.steady);
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
    [`steady pass, ${(PASSES >> 1) + 1}–${PASSES} (ms)`, (s) => (steady[s].length ? median(steady[s]) : undefined), (v) => v.toFixed(0)],
    ["peak RSS, one pass (MiB)", (s) => (whole[s].length ? Math.max(...whole[s].map((r) => r.figures!.maxRssKiB)) / 1024 : undefined), (v) => v.toFixed(0)],
  ];
  const agreement = (side: Side): string | undefined => {
    const runs = whole[side];
    return runs.length ? `${Math.min(...runs.map((r) => r.figures!.agree))}/${runs[0]!.figures!.total}` : undefined;
  };
  console.log(`${workloads[mode].label}: ${agreement("ours") ?? "not run"} ${mode === "single" ? "verdicts equal to the labels" : "entries valid"}`);
  if (agreement("upstream")) console.log(`  upstream: ${agreement("upstream")}`);
  const stoodIn = whole.upstream[0]?.figures?.stoodIn ?? [];
  if (stoodIn.length > 0) console.log(`  upstream ran with inert stand-ins for modules not installed here (imported, never used in scoring): ${stoodIn.join(", ")}`);
  for (const [side, why] of failed) console.log(`  ${side} did not run: ${why}`);
  console.log(`  ${"".padEnd(26)}${"upstream".padStart(10)}${"ours".padStart(10)}${"ratio".padStart(8)}`);
  for (const [name, value, format] of rows) {
    const [u, o] = [value("upstream"), value("ours")];
    const ratio = u !== undefined && o !== undefined ? `${(name.startsWith("peak") ? o / u : u / o).toFixed(2)}×` : "";
    console.log(`  ${name.padEnd(26)}${(u === undefined ? "–" : format(u)).padStart(10)}${(o === undefined ? "–" : format(o)).padStart(10)}${ratio.padStart(8)}`);
  }
  console.log();
}
console.log("ratio: upstream time ÷ ours (above 1, ours is faster); for peak RSS, ours ÷ upstream");
console.log("start-up + import: ours from process start (node's clock); upstream from its driver's first line, so its interpreter's start-up counts only in the whole process");
// ENVACE_SPEED_KEEP=1 keeps the cases and the bundle, to profile the worker by hand.
if (process.env.ENVACE_SPEED_KEEP === "1") console.log(`cases and worker bundle kept in ${tmp}`);
else rmSync(tmp, { recursive: true, force: true });
