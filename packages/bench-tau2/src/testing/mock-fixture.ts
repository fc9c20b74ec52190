import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A mock-domain folder in upstream's format, written by the tests (they must not depend on the
// shared data for the evaluator's and the orchestrator's rules).

export const mockDb = {
  tasks: { task_1: { task_id: "task_1", title: "Write report", description: "Quarterly", status: "pending" } },
  users: { user_1: { user_id: "user_1", name: "Ada", tasks: ["task_1"] } },
};

export const mockUserDb = {
  notifications: { notif_1: { notification_id: "notif_1", message: "Task 'Write report' is yours.", status: "unread", task_id: "task_1" } },
};

export const mockTasks = [
  {
    id: "complete",
    user_scenario: { persona: "Terse.", instructions: "Ask the agent to mark task_1 completed, then dismiss your notification notif_1." },
    evaluation_criteria: {
      actions: [
        { action_id: "a0", name: "update_task_status", arguments: { task_id: "task_1", status: "completed" } },
        { action_id: "a1", requestor: "user", name: "dismiss_notification", arguments: { notification_id: "notif_1" } },
      ],
      env_assertions: [
        { env_type: "assistant", func_name: "assert_task_status", arguments: { task_id: "task_1", expected_status: "completed" } },
        { env_type: "user", func_name: "assert_notification_status", arguments: { notification_id: "notif_1", expected_status: "read" } },
      ],
      communicate_info: ["completed"],
      nl_assertions: ["The agent confirms the task is done."],
      reward_basis: ["DB", "ENV_ASSERTION", "COMMUNICATE"],
    },
  },
  {
    id: "create",
    user_scenario: { instructions: "Have the agent create a task called 'Plan' for user_1." },
    evaluation_criteria: {
      actions: [{ action_id: "c0", name: "create_task", arguments: { user_id: "user_1", title: "Plan" }, compare_args: ["title"] }],
      nl_assertions: ["The agent says the task exists."],
      reward_basis: ["DB", "ACTION", "NL_ASSERTION"],
    },
  },
  {
    id: "history",
    user_scenario: { instructions: "You already asked for a task; now say thanks and stop." },
    initial_state: {
      message_history: [
        { role: "user", content: "Create a task 'Plan' for user_1." },
        { role: "assistant", tool_calls: [{ id: "h1", name: "create_task", arguments: { user_id: "user_1", title: "Plan" } }] },
        { role: "tool", id: "h1", content: '{"task_id":"task_2","title":"Plan","description":null,"status":"pending"}' },
        { role: "assistant", content: "Created task_2." },
      ],
    },
    evaluation_criteria: {
      actions: [{ action_id: "x0", name: "update_task_status", arguments: { task_id: "task_2", status: "completed" } }],
      reward_basis: ["DB"],
    },
  },
  { id: "free", user_scenario: { instructions: "Chat." }, evaluation_criteria: null },
];

export const mockPolicy = "# Mock policy (test)\n\nTasks have a title and a status.\n";

/** Write a τ² data folder (`mock/` and `user_simulator/`); returns the data root. */
export function writeMockData(): string {
  const root = mkdtempSync(join(tmpdir(), "tau2-mock-"));
  const dir = join(root, "mock");
  mkdirSync(dir);
  writeFileSync(join(dir, "db.json"), JSON.stringify(mockDb));
  writeFileSync(join(dir, "user_db.json"), JSON.stringify(mockUserDb));
  writeFileSync(join(dir, "tasks.json"), JSON.stringify(mockTasks, null, 2));
  writeFileSync(join(dir, "policy.md"), mockPolicy);
  mkdirSync(join(root, "user_simulator"));
  writeFileSync(join(root, "user_simulator", "simulation_guidelines.md"), "# Guidelines\nPlay the customer.");
  writeFileSync(join(root, "user_simulator", "simulation_guidelines_tools.md"), "# Guidelines (tools)\nPlay the customer; use your tools.");
  return root;
}
