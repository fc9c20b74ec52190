export { ConfigError, loadYamlConfig, parseConfigValue, parseYamlConfig, type ConfigErrorFactory } from "./yaml-config.js";
