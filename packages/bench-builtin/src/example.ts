import { InvariantError } from "@envace/errors";
import { BuiltinEnvironment, checkOutcome, generateTasks, goldTrajectory, renderPlain } from "@envace/bench-builtin";

// One training task, and its gold solution as a plain-text dialogue.
const [task] = generateTasks({ seed: 1, count: 1, split: "train" });
if (!task) throw new InvariantError("no task generated");
const gold = goldTrajectory(task);
console.log(renderPlain(gold.messages));

// Replay the gold calls against the real environment, then check the outcome.
const env = new BuiltinEnvironment();
await env.reset(task);
for (const call of task.goldActions ?? []) await env.call(call);
const reply = gold.examples.at(-1)?.text ?? "";
console.log(checkOutcome(task, { state: await env.state(), reply }));
