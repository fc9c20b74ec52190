/**
 * What the built-in domain costs inside the 15-minute CPU main job, and how big its data is.
 * Prints generation, environment and scoring throughput (the async `Environment` against the
 * synchronous shop it wraps, in the same run), the task statistics and the size budget.
 */
import { cpus, loadavg } from "node:os";
import {
  BuiltinEnvironment,
  GOLD_CHAR_BUDGET,
  SYSTEM_PROMPT_SHORT,
  Shop,
  TOOL_SPECS,
  builtinMeta,
  domainCorpus,
  generateTasks,
  goldTrajectory,
  scoreChecklist,
  scoreTrajectory,
  taskStats,
  vocabulary,
} from "@envace/bench-builtin";

function time<T>(run: () => T): [T, number] {
  const start = performance.now();
  const value = run();
  return [value, performance.now() - start];
}

async function timeAsync<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await run();
  return [value, performance.now() - start];
}

const rate = (count: number, ms: number) => `${Math.round((count / ms) * 1000).toLocaleString("en")}/s`;
const MAIN_JOB_MS = 15 * 60 * 1000;

const COUNT = 4000;
generateTasks({ seed: 0, count: 200, split: "train" }); // warm up the JIT
const [train, trainMs] = time(() => generateTasks({ seed: 1, count: COUNT, split: "train" }));
const [test, testMs] = time(() => generateTasks({ seed: 1, count: COUNT / 4, split: "test" }));
const [golds, goldMs] = time(() => train.map(goldTrajectory));
const [corpus, corpusMs] = time(() => domainCorpus({ tasks: 1000 }));

const calls = train.flatMap((task) => (task.goldActions ?? []).map((call) => [task, call] as const));
train.forEach(builtinMeta); // parse every task's metadata once, outside the timed loops

function viaShop(): void {
  let shop: Shop | undefined;
  let last = "";
  for (const [task, call] of calls) {
    if (task.id !== last) shop = new Shop(builtinMeta(task).world);
    last = task.id;
    shop!.call(call.name, call.arguments);
  }
}

async function viaEnvironment(): Promise<void> {
  const env = new BuiltinEnvironment();
  let last = "";
  for (const [task, call] of calls) {
    if (task.id !== last) await env.reset(task);
    last = task.id;
    await env.call(call);
  }
}

// Alternate the two and keep each one's best of five, so JIT warm-up and load spikes do not
// decide the comparison.
let shopMs = Infinity;
let envMs = Infinity;
for (let round = 0; round < 5; round++) {
  shopMs = Math.min(shopMs, time(viaShop)[1]);
  envMs = Math.min(envMs, (await timeAsync(viaEnvironment))[1]);
}
const [, scoreMs] = time(() => golds.forEach((gold) => scoreTrajectory(gold.task, gold.trajectory)));
const [, checklistMs] = time(() => golds.forEach((gold) => scoreChecklist(gold.task, gold.trajectory)));

const generationShare = ((trainMs + testMs + goldMs + corpusMs) / MAIN_JOB_MS) * 100;
console.log(`@envace/bench-builtin — measured on this machine (${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)})`);
console.log(`generate ${COUNT} train tasks      ${trainMs.toFixed(0)} ms  (${rate(COUNT, trainMs)})`);
console.log(`generate ${COUNT / 4} test tasks       ${testMs.toFixed(0)} ms  (${rate(COUNT / 4, testMs)})`);
console.log(`gold trajectories (${COUNT})        ${goldMs.toFixed(0)} ms  (${rate(COUNT, goldMs)})`);
console.log(`tokenizer corpus (1000 dialogues)  ${corpusMs.toFixed(0)} ms  (${corpus.length} documents)`);
console.log(`  → all of the above: ${generationShare.toFixed(2)}% of the 15-minute main job`);
console.log(`tool calls via Shop (sync)         ${rate(calls.length, shopMs)}  (${calls.length} gold calls, resets included; best of 5)`);
console.log(`tool calls via BuiltinEnvironment  ${rate(calls.length, envMs)}  (${(envMs / shopMs).toFixed(2)}× the sync shop's time)`);
console.log(`outcome check by replay            ${rate(COUNT, scoreMs)} trajectories`);
console.log(`checklist predicates               ${rate(COUNT, checklistMs)} trajectories`);

const stats = taskStats([...train, ...test]);
const short = taskStats(generateTasks({ seed: 1, count: COUNT, split: "train", systemPrompt: SYSTEM_PROMPT_SHORT }));
console.log("\ntask statistics (train + test):");
console.log(`  families   ${JSON.stringify(stats.families)}`);
console.log(`  outcomes   ${JSON.stringify(stats.outcomes)}`);
console.log(
  `  gold calls min ${stats.calls.min}, mean ${stats.calls.mean.toFixed(2)}, max ${stats.calls.max}; tasks per count ${JSON.stringify(stats.calls.histogram)}`,
);
console.log(
  `  failing precondition (correct answer: no write) ${(stats.failingPreconditionFraction * 100).toFixed(1)}%; writes are ${(stats.writeCallFraction * 100).toFixed(1)}% of gold calls`,
);
console.log("\nsize (plain rendering, renderPlain):");
console.log(`  chars, default system prompt   max ${stats.chars.max} (budget ${GOLD_CHAR_BUDGET}), mean ${stats.chars.mean.toFixed(0)}`);
console.log(`  chars, without system prompt   max ${stats.charsWithoutSystem.max}, mean ${stats.charsWithoutSystem.mean.toFixed(0)}`);
console.log(`  chars, short system prompt     max ${short.chars.max}, mean ${short.chars.mean.toFixed(0)}`);
console.log(`  words (word-level token proxy) max ${stats.words.max}, mean ${stats.words.mean.toFixed(0)}; short prompt max ${short.words.max}`);
console.log(`  tool specs as JSON             ${JSON.stringify(TOOL_SPECS).length} chars`);
console.log(`  vocabulary (wordsOf the corpus) ${vocabulary().length} words`);
