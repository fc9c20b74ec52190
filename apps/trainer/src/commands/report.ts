// `envace report <run dir>… [--out <file>]`: a self-contained HTML report of one or more runs.
import { join, resolve } from "node:path";
import { writeFileAtomically } from "@envace/records";
import { buildReport } from "../report/build.js";
import { renderReportHtml } from "../report/html.js";
import { loadRun } from "../report/load.js";

/** Write the report and return its path. One run: `<run>/report.html` unless `out` is given. */
export function writeReport(runDirs: readonly string[], out?: string): string {
  const runs = runDirs.map(loadRun);
  const path = resolve(out ?? (runDirs.length === 1 ? join(runDirs[0]!, "report.html") : "envace-report.html"));
  // Whole or not at all: a report cut short by a crash would open as a broken page.
  writeFileAtomically(path, renderReportHtml(buildReport(runs)));
  return path;
}

/** The arguments of `envace report`, as cli.ts declares them. */
export interface ReportOptions {
  runDirs: string[];
  out?: string;
}

export function run(options: ReportOptions): Promise<void> {
  console.log(`report: ${writeReport(options.runDirs, options.out)}`);
  return Promise.resolve();
}
