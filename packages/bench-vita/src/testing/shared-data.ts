import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));

/**
 * The shared benchmark data folder for this package's tests and benchmark: `ENVACE_DATA`, or
 * `../shared/data` from the repository root. Undefined when VitaBench's data is not there.
 */
export function sharedData(): string | undefined {
  const dir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data");
  return existsSync(resolve(dir, "vita")) && existsSync(resolve(dir, "vita-labels")) ? dir : undefined;
}

/** The note a test prints when it skips for want of the data. */
export function skipNote(what: string): string {
  return `skipping ${what}: VitaBench data not found (set ENVACE_DATA to the shared data folder holding vita/ and vita-labels/)`;
}
