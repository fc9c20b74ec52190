import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * The shared benchmark data folder for this package's tests and benchmark: `ENVACE_DATA`, or
 * `../shared/data` from the repository root. Undefined when the folder is absent (a user's clone).
 */
export function sharedData(): string | undefined {
  const dir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data");
  return existsSync(resolve(dir, "tau2")) ? dir : undefined;
}

/** The note a test prints when it skips for want of the data. */
export function skipNote(what: string): string {
  return `skipping ${what}: τ² data not found (set ENVACE_DATA to the shared data folder, e.g. ../shared/data)`;
}
