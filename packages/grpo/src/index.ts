export * from "./advantages.js";
export * from "./loss-config.js";
export * from "./loss.js";
export * from "./metrics.js";
export * from "./policies.js";
export * from "./sequences.js";
export * from "./sum-losses.js";
