export * from "./alternatives.js";
export * from "./match.js";
export * from "./types.js";
