export * from "./chat-template.js";
export * from "./hf-tokenizer.js";
export * from "./incremental.js";
export * from "./sampler-policy.js";
