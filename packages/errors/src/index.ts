export { EnvaceError, InvariantError, isRetryableStatus, LocatedError } from "./envace-error.js";
