// `envace demo`: one self-unfolded rollout on a toy bank, with a scripted policy that plays both
// the Act and the Rehearse role. Offline, no model, a fraction of a second.
import type { GenerateRequest, JsonObject, Step, Task, Tokenizer, ToolCall, Trajectory } from "@envace/protocol";
import { rehearsal, replayReference, rowsOf, ScriptedPolicy, unfold } from "@envace/trajectory";

const task: Task = {
  id: "toy-bank",
  messages: [
    { role: "system", content: "You are the assistant of a small bank. Use the tools." },
    { role: "user", content: "Send 30 to Bob, then tell me my balance." },
  ],
  tools: [
    {
      type: "function",
      function: {
        name: "get_balance",
        description: "The balance of an account.",
        parameters: { type: "object", properties: { account: { type: "string" } }, required: ["account"] },
      },
    },
    {
      type: "function",
      function: {
        name: "transfer",
        description: "Send money from the user's account.",
        parameters: {
          type: "object",
          properties: { to: { type: "string" }, amount: { type: "number", exclusiveMinimum: 0 } },
          required: ["to", "amount"],
        },
      },
    },
  ],
  // The reference dialogue's second user turn is replayed once the agent has answered the first.
  reference: [
    { role: "user", content: "Send 30 to Bob, then tell me my balance." },
    { role: "assistant", content: "Done: 90 left." },
    { role: "user", content: "Great. Also send 500 to Eve." },
    { role: "assistant", content: "That is more than your balance." },
  ],
  metadata: {},
};

const toolCall = (name: string, args: JsonObject): string => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/** The Act role's script: what a competent agent would say at each turn. */
const actTurns = [
  `<think>I need the balance and the transfer; both can go at once.</think>\n${toolCall("get_balance", { account: "me" })}\n${toolCall("transfer", { to: "Bob", amount: "thirty" })}`,
  `<think>The amount must be a number.</think>\n${toolCall("transfer", { to: "Bob", amount: 30 })}`,
  "Sent 30 to Bob. Your balance is now 90.",
  toolCall("transfer", { to: "Eve", amount: 500 }),
  "I could not send 500 to Eve: your balance is only 90.",
];

/** The Rehearse role's script: a little world model of the bank, reading the call to simulate. */
function rehearse(request: GenerateRequest, world: { balance: number }): string {
  const prompt = request.messages.at(-1)?.content ?? "";
  const call = JSON.parse(prompt.split("## Tool call to simulate\n")[1] ?? "{}") as Pick<ToolCall, "name" | "arguments">;
  let result: unknown;
  if (call.name === "get_balance") {
    result = { account: call.arguments.account, balance: world.balance };
  } else {
    const amount = Number(call.arguments.amount);
    if (amount > world.balance) {
      result = { error: { code: "INSUFFICIENT_FUNDS", message: `Balance ${world.balance} is below ${amount}.` } };
    } else {
      world.balance -= amount;
      result = { ok: true, balance: world.balance };
    }
  }
  return `<think>Apply the bank's rules to this call.</think>\n<execution_result>${JSON.stringify(result)}</execution_result>`;
}

/** One token per character, so the training rows the demo prints carry real token ids. */
const charTokenizer: Tokenizer = {
  vocabSize: 65536,
  stopTokenIds: [],
  encode: (text) => Array.from(text, (ch) => ch.charCodeAt(0)),
  decode: (tokens) => String.fromCharCode(...tokens),
};

function show(step: Step, print: (line: string) => void): void {
  const pad = (label: string): string => `[${label}]`.padEnd(11);
  if (step.type === "user") {
    print(`${pad("user")}(${step.source}) ${step.message.content}`);
    return;
  }
  const { message } = step;
  if (message.reasoning_content !== undefined) print(`${pad("act")}<think> ${message.reasoning_content}`);
  if (message.content !== null && message.content.length > 0) print(`${pad("act")}${message.content}`);
  for (const call of message.tool_calls ?? []) print(`${pad("act")}→ ${call.function.name} ${call.function.arguments}`);
  for (const outcome of step.outcomes) {
    const { result } = outcome;
    const answer = result.status === "ok" ? JSON.stringify(result.content) : `error ${result.error.code}: ${result.error.message}`;
    const label = outcome.provenance === "rehearsed" && outcome.generation === undefined ? "refused" : outcome.provenance === "rehearsed" ? "rehearse" : "env";
    print(`${pad(label)}${result.name} ← ${answer}`);
  }
}

/** The options of `envace demo`, as cli.ts declares them. */
export interface DemoOptions {
  /** Print the whole trajectory and its training rows as JSON instead of the narration. */
  json?: boolean;
}

export async function run(options: DemoOptions = {}): Promise<void> {
  const world = { balance: 120 };
  const acts = [...actTurns];
  const policy = new ScriptedPolicy("scripted-demo", (request) => (request.role === "rehearse" ? rehearse(request, world) : (acts.shift() ?? "Goodbye.")), {
    tokenizer: charTokenizer,
  });
  const json = options.json === true;
  const print = (line: string): void => {
    if (!json) console.log(line);
  };

  print("envace demo: one self-unfolded rollout. A scripted policy acts, and rehearses every tool result itself;");
  print("no real environment, no model, no network.\n");
  print(`task ${task.id}: "${task.messages.at(-1)?.content ?? ""}"`);
  print(`tools: ${task.tools.map((t) => t.function.name).join(", ")}\n`);

  const trajectory: Trajectory = await unfold({
    task,
    actor: policy,
    environment: rehearsal(policy),
    users: replayReference(),
    onStep: (step) => show(step, print),
  });
  const rows = rowsOf(trajectory);

  if (json) {
    console.log(JSON.stringify({ trajectory, rows }, null, 2));
    return;
  }
  const count = (role: string): number => rows.filter((row) => row.role === role).length;
  const termination = trajectory.termination;
  print(`\ntermination: ${termination.reason}`);
  print(`training rows: ${rows.length} (act ${count("act")}, rehearse ${count("rehearse")}), in order: ${rows.map((r) => r.role).join(" ")}`);
  print(`tokens: ${rows.reduce((sum, r) => sum + r.outputTokens.length, 0)} output tokens, every outcome marked "rehearsed"`);
}
