import { EnvaceError } from "@envace/errors";

/** A task lacks a part the call needs: its reference dialogue, checklists or expected state. */
export class TaskContentError extends EnvaceError {
  override readonly code = "task-content";
}
