import { existsSync } from "node:fs";
import { resolve } from "node:path";

/**
 * The shared benchmark data folder used by this package's tests and benchmark: `ENVACE_DATA`,
 * or `../shared/data` next to the repository root. Undefined when it is absent (as on a fresh
 * clone), so callers can skip with a message.
 */
export function sharedDataDir(): string | undefined {
  const repoRoot = resolve(import.meta.dirname, "../../..");
  const dir = resolve(repoRoot, process.env.ENVACE_DATA ?? "../shared/data");
  return existsSync(resolve(dir, "bfcl")) ? dir : undefined;
}

/** The message tests print when they skip for lack of data. */
export function missingDataNote(what: string): string {
  return `skipping ${what}: benchmark data not found (set ENVACE_DATA to the shared data folder, e.g. ../shared/data)`;
}
