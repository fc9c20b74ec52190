// `envace report <run dir>… [--out <file>]`: a self-contained HTML report of one or more runs.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildReport } from "../report/build.js";
import { renderReportHtml } from "../report/html.js";
import { loadRun } from "../report/load.js";

const USAGE = "usage: envace report <run dir> [<run dir>…] [--out <file>]";

/** Write the report and return its path. One run: `<run>/report.html` unless `out` is given. */
export function writeReport(runDirs: readonly string[], out?: string): string {
  const runs = runDirs.map(loadRun);
  const path = resolve(out ?? (runDirs.length === 1 ? join(runDirs[0]!, "report.html") : "envace-report.html"));
  writeFileSync(path, renderReportHtml(buildReport(runs)));
  return path;
}

export function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { out: { type: "string" } } });
  if (positionals.length === 0) {
    console.error(USAGE);
    return Promise.resolve(2);
  }
  try {
    console.log(`report: ${writeReport(positionals, values.out)}`);
    return Promise.resolve(0);
  } catch (error) {
    console.error(`envace report: ${(error as Error).message}`);
    return Promise.resolve(1);
  }
}
