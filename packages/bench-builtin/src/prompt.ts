/**
 * The system prompt of every task: the shop's rules in a few lines, so a model can decide from
 * its lookups (or its rehearsals) whether a change would succeed.
 */
export const SYSTEM_PROMPT =
  "You are a shop agent. Tools: user(user) item(item) order(id) buy(user,item,qty) cancel(id) pay(from,to,amount). " +
  "Look up every user, item and order a request needs before you change anything. " +
  "buy needs an unlocked item, enough stock and a balance of at least qty*price. " +
  "cancel needs a placed order and refunds its cost. pay needs a balance of at least amount. " +
  "If a change would fail, do not try it: tell the user why.";

/**
 * A one-line system prompt for small context windows (a tiny model learns the rules from its
 * warm-start data instead). Pass it as `generateTasks({ systemPrompt: SYSTEM_PROMPT_SHORT, … })`.
 */
export const SYSTEM_PROMPT_SHORT = "You are a shop agent. Look things up before you change anything; if a change would fail, do not try it: tell the user why.";

/**
 * The compact Rehearse-role prompt the embedded default trains with (`RehearsePromptOptions` of
 * `@envace/trajectory`): one line of instructions and the call, no tool schemas, examples or
 * latest Act turn; the tiny model learns tool behaviour from its warm start. An evaluation, or a
 * server in front of such a model, must prompt the Rehearse role the same way.
 */
export const BUILTIN_REHEARSE_PROMPT = {
  sections: { instructions: "You are the shop's tools. Answer the call.", tools: false, examples: false, latestAct: false },
} as const;

/**
 * Short reflect-role instructions for small context windows (`instructions.reflect` of
 * `@envace/rehearsal`). The default instructions alone take 466 tokens of the embedded default's
 * 512 with its domain tokenizer; with these a reflect prompt of a typical attempt fits. Only a
 * policy trained on reflect rows prompted this way (`sft.roles` with `reflect`) can answer them.
 */
export const BUILTIN_REFLECT_INSTRUCTIONS =
  'Judge this rehearsal of the shop agent: did it do what the user asked, and did every change work? Answer <assessment>{"reached_goal": true or false, "went_wrong": "…", "revision": "…"}</assessment>.';
