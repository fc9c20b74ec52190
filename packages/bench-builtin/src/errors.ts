// The task-content error is the protocol's (the evaluators of `@envace/rewards` raise it too).
export { TaskContentError } from "@envace/protocol";
