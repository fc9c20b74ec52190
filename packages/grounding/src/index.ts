export * from "./budget.js";
export * from "./candidates.js";
export * from "./ground.js";
export * from "./replay.js";
export * from "./select.js";
export * from "./uses.js";
