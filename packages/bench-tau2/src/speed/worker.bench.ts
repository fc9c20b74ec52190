// Our side of the τ² side-by-side benchmark (speed.bench.ts): the same work as upstream_driver.py —
// for every retail task, a fresh environment from the task's initial state, its gold actions
// replayed in order, each answer and the database hashes compared with upstream's labels — printed
// as the same JSON line. Bundled before it is run, so a whole-process time is node's start-up plus
// our code, not a TypeScript loader.
import { join } from "node:path";
import { reportPasses } from "@envace/side-by-side/worker";
import { Tau2Environment } from "../environment.js";
import { loadDomain, type Tau2Domain } from "../load.js";
import { readLabels, ReplayLabel } from "../testing/shared-data.js";

// Node's clock starts with the process: this is start-up plus loading our code.
const importMs = performance.now();

async function load(data: string): Promise<{ domain: Tau2Domain; labels: Map<string, ReplayLabel> }> {
  const domain = await loadDomain("retail", { data: join(data, "tau2") });
  return { domain, labels: new Map(readLabels(data, "retail", ReplayLabel).map((label) => [label.id, label])) };
}

/** Tasks whose replay matches upstream's labels in every answer, error flag and hash. */
function replayPass({ domain, labels }: Awaited<ReturnType<typeof load>>): number {
  let agree = 0;
  for (const task of domain.tasks) {
    const label = labels.get(task.id)!;
    const environment = Tau2Environment.forTask(domain, task);
    const actions = task.evaluation_criteria?.actions ?? [];
    let same = environment.dbHash() === label.initial_db_hash && actions.length === label.calls.length;
    actions.forEach((action, index) => {
      const answer = environment.respond({ id: action.action_id, name: action.name, arguments: action.arguments, requestor: action.requestor });
      same &&= answer.content === label.calls[index]?.content && answer.error === label.calls[index].error;
    });
    if (same && environment.dbHash() === label.final_db_hash) agree++;
  }
  return agree;
}

if (process.argv[1] === import.meta.filename) {
  const [data, passes] = process.argv.slice(2);
  await reportPasses(
    importMs,
    Number(passes),
    () => load(data!),
    replayPass,
    (loaded) => loaded.domain.tasks.length,
  );
}
