// A training process for the resume test: trains until `steps` optimizer steps, resuming from
// the newest checkpoint in the run folder, saving one after every step and printing each loss.
import { InProcessBackend } from "../in-process.js";
import { checkpointDir, latestCheckpoint, resumeConfig, trainStep } from "./resume-fixture.js";

const [runDir, stepsArg] = process.argv.slice(2);
if (!runDir || !stepsArg) throw new Error("usage: resume-child <run-dir> <steps>");
const latest = await latestCheckpoint(runDir);
const backend = latest ? await InProcessBackend.load(latest.dir) : await InProcessBackend.create(resumeConfig, { seed: 3 });
process.stdout.write(`${JSON.stringify({ resumedFrom: latest?.step ?? null })}\n`);
while (backend.optimizerStep < Number(stepsArg)) {
  const loss = await trainStep(backend);
  await backend.saveCheckpoint(checkpointDir(runDir, backend.optimizerStep));
  process.stdout.write(`${JSON.stringify({ step: backend.optimizerStep, loss })}\n`);
}
