export * from "./pass-hat-k.js";
export * from "./reward.js";

export * from "./checklist/aggregate.js";
export * from "./checklist/assistant-parts.js";
export * from "./checklist/call-log.js";
export * from "./checklist/checklist-judge.js";
export * from "./checklist/cm2.js";
export * from "./checklist/dialogue.js";
export * from "./checklist/judge-client.js";
export * from "./checklist/predicates.js";
export * from "./checklist/prompt.js";
export * from "./checklist/verdict.js";
export * from "./checklist/verdict-cache.js";

export * from "./evaluators/action-match.js";
export * from "./evaluators/communicate-info.js";
export * from "./evaluators/product.js";
export * from "./evaluators/state-match.js";
export * from "./function-call/index.js";
