// A soak run of `envace train`, as a user would meet it: CM2 data scored by a checklist judge
// on loopback, more tasks per step than divide the data evenly, rollouts at temperature 0.7 with
// a KL term, and the process killed with SIGKILL twice at random points and started again.
// It checks that every step is logged exactly once, that the policy ratio starts every step at
// 1 and that the KL to the reference starts at 0, and prints what it measured.
//
//   node --conditions=@envace/source --import tsx apps/trainer/src/testing/soak.ts [--steps 40] [--seed 1]
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generateTasks, toCm2Record } from "@envace/bench-builtin";
import { startScriptedServer, type RecordedRequest } from "@envace/scripted-server";
import { Rng } from "@envace/training";
import { seedOfText } from "@envace/trajectory";
import { readMetrics } from "../run/metrics-log.js";
import { verdictReply } from "./judge.js";

const { values } = parseArgs({ options: { steps: { type: "string", default: "40" }, seed: { type: "string", default: "1" } } });
const steps = Number(values.steps);
const rng = Rng.fromSeed(Number(values.seed));
const cli = fileURLToPath(new URL("../cli.ts", import.meta.url));

// The judge: a fixed answer per question and dialogue, so a resumed run meets the same verdicts.
function judge(request: RecordedRequest) {
  const answer = seedOfText(JSON.stringify(request.body)) % 3 !== 0;
  return verdictReply(answer);
}

const dir = mkdtempSync(join(tmpdir(), "envace-soak-"));
const data = join(dir, "train.jsonl");
writeFileSync(
  data,
  generateTasks({ seed: 5, count: 13, split: "train" })
    .map((t) => `${JSON.stringify(toCm2Record(t))}\n`)
    .join(""),
);
const server = await startScriptedServer({ script: judge });
const config = join(dir, "soak.yaml");
writeFileSync(
  config,
  `seed: 3
init_from: null
data: { source: cm2, path: ${data} }
reward: { type: checklist, judge: { base_url: ${server.baseURL}, model: judge } }
model: { type: tiny, vocab_size: 512, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, max_position_embeddings: 1024, initializer_range: 0.02 }
sft: { enabled: true, epochs: 1, batch_size: 16, lr: 0.01 }
rollout: { tasks_per_step: 5, rollouts_per_task: 2, temperature: 0.7, max_turns: 3, max_response_tokens: 24, max_prompt_tokens: 1000, engine: tfjs }
actor: { lr: 0.0001, kl_coef: 0.001 }
eval: { every_steps: 0 }
trainer: { total_steps: ${steps}, save_every: 1 }
`,
);
const out = join(dir, "run");

/** Run `envace train` to the end, or kill it with SIGKILL after `killAfterMs`; returns how it ended. */
function train(killAfterMs?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", cli, "train", "--config", config, "--out", out], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL") resolve("killed");
      else if (code === 0) resolve("finished");
      else reject(new Error(`envace train exited with ${code}:\n${stderr.split("\n").slice(-5).join("\n")}`));
    });
  });
}

const started = Date.now();
const ends: string[] = [];
for (let kill = 0; kill < 2; kill++) {
  // Late enough to be past SFT, early enough to land inside the 40 steps (each takes a fraction of a second).
  const after = 6_000 + (rng.nextUint32() % 6_000);
  const end = await train(after);
  const { records } = readMetrics(join(out, "metrics.jsonl"));
  ends.push(`${end} after ${(after / 1000).toFixed(1)} s at step ${Math.max(0, ...records.filter((r) => r.kind === "train").map((r) => r.step))}`);
}
ends.push(await train());
await server.close();

const trainRecords = readMetrics(join(out, "metrics.jsonl")).records.filter((r) => r.kind === "train");
const logged = trainRecords.map((r) => r.step);
const once = logged.length === steps && logged.every((s, i) => s === i + 1);
const deviation = Math.max(
  ...trainRecords.map((r) => {
    const ratio = r.ratio as { min: number; max: number };
    return Math.max(Math.abs(ratio.min - 1), Math.abs(ratio.max - 1));
  }),
);
const firstKl = trainRecords[0]?.ref_kl;
const masked = trainRecords.reduce((sum, r) => sum + (r.masked as number), 0);
console.log(`runs: ${ends.join("; ")}`);
console.log(`steps logged: ${logged.length} of ${steps}, each exactly once: ${once}`);
console.log(`largest |ratio − 1| at the start of a step: ${deviation.toExponential(2)}`);
console.log(`reference KL: step 1 ${String(firstKl)}, step ${steps} ${String(trainRecords.at(-1)?.ref_kl)}; masked rollouts ${masked}`);
console.log(`wall time ${((Date.now() - started) / 1000).toFixed(0)} s; run directory ${out}`);
process.exitCode = once && deviation < 1e-4 && firstKl === 0 ? 0 : 1;
