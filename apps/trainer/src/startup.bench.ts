// Start-up of the `envace` command as whole processes, bundled (what the bin and `pnpm envace`
// run) against the TypeScript sources through tsx and against `node -e 0`; median of interleaved
// runs. With the shared data, the time and peak RSS of `envace eval bfcl` on the oracle.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";

const RUNS = Number(process.env.ENVACE_SPEED_RUNS ?? 11);
const app = resolve(import.meta.dirname, "..");
const bin = join(app, "dist", "bin", "cli.js");
const source = join(app, "src", "cli.ts");
// Reports the child's own peak RSS as it exits, without changing what it prints on stdout.
const rssProbe = `data:text/javascript,process.on("exit",()=>process.stderr.write("maxrss="+process.resourceUsage().maxRSS+"\\n"))`;

const bundled = spawnSync(process.execPath, [join(app, "scripts", "bundle.mjs")], { stdio: "inherit" });
if (bundled.status !== 0) process.exit(bundled.status ?? 1);

interface Sample {
  readonly ms: number;
  readonly rssMiB: number;
}

function run(args: readonly string[]): Sample {
  const start = performance.now();
  const child = spawnSync(process.execPath, ["--import", rssProbe, ...args], { encoding: "utf8", cwd: app });
  const ms = performance.now() - start;
  if (child.status !== 0) throw new Error(`node ${args.join(" ")} exited ${child.status}: ${child.stderr.trim().split("\n").at(-1)}`);
  return { ms, rssMiB: Number(/maxrss=(\d+)/.exec(child.stderr)?.[1] ?? 0) / 1024 };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const tsx = ["--conditions=@envace/source", "--import", "tsx", source];
const cases: [string, string[]][] = [
  ["node -e 0", ["-e", "0"]],
  ["envace --help (bundle)", [bin, "--help"]],
  ["envace eval bfcl --help (bundle)", [bin, "eval", "bfcl", "--help"]],
  ["envace --help (tsx, sources)", [...tsx, "--help"]],
  ["envace eval bfcl --help (tsx, sources)", [...tsx, "eval", "bfcl", "--help"]],
];
const samples = new Map<string, Sample[]>(cases.map(([name]) => [name, []]));
for (let r = 0; r < RUNS; r++) for (const [name, args] of cases) samples.get(name)!.push(run(args));

console.log(`envace start-up, whole processes (median of ${RUNS} interleaved runs; load average ${loadavg()[0]!.toFixed(1)})\n`);
const width = Math.max(...cases.map(([name]) => name.length));
for (const [name] of cases) {
  const s = samples.get(name)!;
  console.log(
    `  ${name.padEnd(width)}  ${median(s.map((x) => x.ms))
      .toFixed(0)
      .padStart(6)} ms  ${median(s.map((x) => x.rssMiB))
      .toFixed(0)
      .padStart(4)} MiB`,
  );
}

const data = resolve(app, "../..", process.env.ENVACE_DATA ?? "../shared/data", "bfcl");
if (!existsSync(data)) {
  console.log("\nskipping envace eval bfcl: benchmark data not found (set ENVACE_DATA to the shared data folder)");
} else {
  const out = mkdtempSync(join(tmpdir(), "envace-startup-"));
  const categories = "simple_python,multiple,parallel,multi_turn_base";
  const evals = [0, 1, 2].map(() => run([bin, "eval", "bfcl", "--data", data, "--category", categories, "--policy", "oracle", "--out", join(out, "run")]));
  rmSync(out, { recursive: true, force: true });
  console.log(
    `\n  envace eval bfcl --policy oracle (${categories}, bundle): ${median(evals.map((x) => x.ms)).toFixed(0)} ms, peak RSS ${Math.max(...evals.map((x) => x.rssMiB)).toFixed(0)} MiB`,
  );
}
