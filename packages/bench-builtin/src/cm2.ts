import { TaskContentError } from "@envace/protocol";
import type { Cm2Record, Task } from "@envace/protocol";

/**
 * A built-in task as a CM2 training record: the gold dialogue, the tools and the checklist, so
 * the domain can be exported as JSON Lines and read back by any CM2 consumer.
 */
export function toCm2Record(task: Task): Cm2Record {
  if (!task.reference || !task.checklists) throw new TaskContentError(`task ${task.id} has no reference dialogue or checklists`);
  return { uuid: task.id, messages: task.reference, tools: task.tools, checklists: task.checklists };
}
