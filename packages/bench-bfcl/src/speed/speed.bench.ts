// Side by side with upstream BFCL on the same work (`@envace/side-by-side`): single-turn decode +
// AST check of every perturbed output of simple_python, multiple and parallel (bfcl-verdicts,
// written as a prompting model's text), and the gold replay + check of multi_turn_base. Upstream
// runs when ENVACE_BFCL_UPSTREAM names a berkeley-function-call-leaderboard folder (gorilla
// 6ea57973c7a6) and ENVACE_BFCL_PYTHON the Python to run it with (default python3); otherwise ours
// alone.
import { PyHashDict, pyRepr } from "@envace/python-text";
import { readJsonLines } from "@envace/records";
import { compareSideBySide } from "@envace/side-by-side";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as z from "zod";
import { decodeSingleTurnResult } from "../decode.js";
import type { DecodedCall } from "../decode.js";
import { parsePyJson } from "../py/json.js";
import { missingDataNote, sharedDataDir } from "../shared-data.js";
import type { SpeedCase } from "./worker.bench.js";

const CATEGORIES = ["simple_python", "multiple", "parallel"];

/** A decoded call as a prompting model writes it: `f(a=1, b='x')`, values by Python repr. */
export function callText(call: DecodedCall): string {
  return `${call.name}(${[...call.args].map(([key, value]) => `${key}=${pyRepr(value)}`).join(", ")})`;
}

const PyRecord = z.instanceof(PyHashDict);

function jsonLines(file: string): PyHashDict[] {
  return readJsonLines(file, PyRecord, { source: "user", parse: parsePyJson });
}

/** Every perturbation case of the Python AST categories, with upstream's verdict. */
function speedCases(verdictsDir: string): SpeedCase[] {
  const cases: SpeedCase[] = [];
  for (const category of CATEGORIES) {
    const dir = join(verdictsDir, category);
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith(".expected.jsonl"))
      .sort()) {
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

const data = sharedDataDir();
if (!data) {
  console.log(missingDataNote("the side-by-side BFCL benchmark"));
  process.exit(0);
}
const bfcl = join(data, "bfcl");
const tmp = mkdtempSync(join(tmpdir(), "envace-bfcl-speed-"));
const casesFile = join(tmp, "cases.jsonl");
writeFileSync(
  casesFile,
  speedCases(join(data, "bfcl-verdicts"))
    .map((c) => JSON.stringify(c))
    .join("\n") + "\n",
);
// ENVACE_SPEED_KEEP=1 keeps the cases and the bundle, to profile the worker by hand.
const keep = process.env.ENVACE_SPEED_KEEP === "1";
await compareSideBySide({
  title: "BFCL side by side",
  worker: join(import.meta.dirname, "worker.bench.ts"),
  upstream: {
    driver: join(import.meta.dirname, "upstream_driver.py"),
    checkoutVariable: "ENVACE_BFCL_UPSTREAM",
    pythonVariable: "ENVACE_BFCL_PYTHON",
    what: "a berkeley-function-call-leaderboard folder",
  },
  workloads: [
    {
      label: "BFCL single-turn decode + AST check",
      agreement: "verdicts equal to the labels",
      ours: ["single", casesFile, bfcl],
      upstream: ["single", casesFile, bfcl],
    },
    { label: "BFCL multi_turn_base gold replay + check", agreement: "entries valid", ours: ["multi", bfcl], upstream: ["multi", bfcl] },
  ],
  runs: Number(process.env.ENVACE_SPEED_RUNS ?? 9),
  passes: Number(process.env.ENVACE_SPEED_PASSES ?? 30),
  keep,
});
if (keep) console.log(`cases kept in ${tmp}`);
else rmSync(tmp, { recursive: true, force: true });
