import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseJsonLines } from "@envace/records";
import { z } from "zod";

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

/** The shared data folder; when it is absent, undefined after printing that `what` is skipped. */
export function sharedDataOrSkip(what: string): string | undefined {
  const data = sharedData();
  if (data === undefined) console.log(skipNote(what));
  return data;
}

/** Upstream's conformance labels of a domain (`tau2-labels/<domain>.jsonl`); a missing file is an error, not no labels. */
export function readLabels<S extends z.ZodType>(data: string, domain: string, schema: S): z.output<S>[] {
  const file = join(data, "tau2-labels", `${domain}.jsonl`);
  return parseJsonLines(schema, readFileSync(file, "utf8"), file, { source: "user" });
}

/** One line of `tau2-labels/<retail|mock>.jsonl`: upstream's answer to each gold action, and its database hashes. */
export const ReplayLabel = z.object({
  id: z.string(),
  initial_db_hash: z.string(),
  calls: z.array(z.object({ name: z.string(), content: z.string(), error: z.boolean() })),
  final_db_hash: z.string(),
});
export type ReplayLabel = z.infer<typeof ReplayLabel>;
