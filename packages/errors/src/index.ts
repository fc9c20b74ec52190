export { EnvaceError, InvariantError, isRetryableStatus } from "./envace-error.js";
