export * from "./backend.js";
