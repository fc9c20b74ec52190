export * from "./loss-config.js";
