// Side by side with upstream τ²-bench on the same work (`@envace/side-by-side`): the gold replay of
// every retail task on a fresh environment, each answer and the database hashes checked against
// upstream's labels. Upstream runs when ENVACE_TAU2_UPSTREAM names a tau2-bench checkout (commit
// a2c024725189, the labels') and ENVACE_TAU2_PYTHON the Python to run it with (default python3;
// it needs pydantic); otherwise ours alone.
import { bundleWorker, compareSideBySide } from "@envace/side-by-side";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sharedDataOrSkip } from "../testing/shared-data.js";

const data = sharedDataOrSkip("the side-by-side τ² benchmark");
if (data === undefined) process.exit(0);
const tmp = mkdtempSync(join(tmpdir(), "envace-tau2-speed-"));
try {
  const worker = join(tmp, "worker.mjs");
  await bundleWorker(join(import.meta.dirname, "worker.bench.ts"), worker);
  const upstreamDir = process.env.ENVACE_TAU2_UPSTREAM;
  compareSideBySide({
    title: "τ² side by side",
    worker,
    upstream: upstreamDir ? { python: process.env.ENVACE_TAU2_PYTHON ?? "python3", driver: join(import.meta.dirname, "upstream_driver.py") } : undefined,
    scratch: join(tmp, "pycache"),
    workloads: [{ label: "τ² retail gold replay + DB hashes, fresh environment per task", agreement: "tasks equal to the labels", ours: [data], upstream: [upstreamDir ?? "", data] }],
    // Upstream takes about a quarter of a second a task (it reads db.json for every environment),
    // so fewer runs than BFCL's: about five minutes in all.
    runs: Number(process.env.ENVACE_SPEED_RUNS ?? 3),
    passes: Number(process.env.ENVACE_SPEED_PASSES ?? 6),
    warmProcesses: 1,
    notRunNote: "upstream not run: set ENVACE_TAU2_UPSTREAM to a tau2-bench checkout and ENVACE_TAU2_PYTHON to a Python with pydantic",
  });
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
