// Side by side with upstream τ²-bench on the same work (`@envace/side-by-side`): the gold replay of
// every retail task on a fresh environment, each answer and the database hashes checked against
// upstream's labels. Upstream runs when ENVACE_TAU2_UPSTREAM names a tau2-bench checkout (commit
// a2c024725189, the labels') and ENVACE_TAU2_PYTHON the Python to run it with (default python3;
// it needs pydantic); otherwise ours alone.
import { compareSideBySide } from "@envace/side-by-side";
import { join } from "node:path";
import { sharedDataOrSkip } from "../testing/shared-data.js";

const data = sharedDataOrSkip("the side-by-side τ² benchmark");
if (data === undefined) process.exit(0);
await compareSideBySide({
  title: "τ² side by side",
  worker: join(import.meta.dirname, "worker.bench.ts"),
  upstream: {
    driver: join(import.meta.dirname, "upstream_driver.py"),
    checkoutVariable: "ENVACE_TAU2_UPSTREAM",
    pythonVariable: "ENVACE_TAU2_PYTHON",
    what: "a tau2-bench checkout (its Python needs pydantic)",
  },
  workloads: [
    { label: "τ² retail gold replay + DB hashes, fresh environment per task", agreement: "tasks equal to the labels", ours: [data], upstream: [data] },
  ],
  // Upstream takes about a quarter of a second a task (it reads db.json for every environment),
  // so fewer runs than BFCL's: about five minutes in all.
  runs: Number(process.env.ENVACE_SPEED_RUNS ?? 3),
  passes: Number(process.env.ENVACE_SPEED_PASSES ?? 6),
  warmProcesses: 1,
});
