import { hasKey, len, pyEquals, type PyModel, pyStr, type PyValue, valueError } from "@envace/python-text";
import type { Database, DbRoot } from "../../database.js";
import { construct, literal, optional, str, strFields, type ModelSpec } from "../../python/pydantic.js";
import { Toolkit, type ToolDefinition } from "../../toolkit.js";
import { param, STRING, transferToHumanAgents } from "../common.js";

// The mock domain's tools. They reach their tables through `Database.table` because upstream
// may hand a toolkit the other side's database (see `Tau2Environment.setState`).

const TASK: ModelSpec = {
  name: "Task",
  fields: [
    ...strFields("task_id", "title"),
    { name: "description", type: optional(str), default: null },
    { name: "status", type: literal("pending", "completed") },
  ],
};

const NOTIFICATION: ModelSpec = {
  name: "Notification",
  fields: [
    ...strFields("notification_id", "message"),
    { name: "status", type: literal("unread", "read"), default: "unread" },
    { name: "task_id", type: optional(str), default: null },
  ],
};

type AnyDb = Database<DbRoot>;

function tasks(db: AnyDb): Map<string, PyModel> {
  return db.table("tasks") as Map<string, PyModel>;
}

function users(db: AnyDb): Map<string, PyModel> {
  return db.table("users") as Map<string, PyModel>;
}

function notifications(db: AnyDb): Map<string, PyModel> {
  return db.table("notifications") as Map<string, PyModel>;
}

function requireUser(db: AnyDb, userId: PyValue): string {
  if (!hasKey(users(db), userId)) throw valueError(`User ${pyStr(userId)} not found`);
  return userId as string;
}

function requireTask(db: AnyDb, taskId: PyValue): string {
  if (!hasKey(tasks(db), taskId)) throw valueError(`Task ${pyStr(taskId)} not found`);
  return taskId as string;
}

function requireNotification(db: AnyDb, notificationId: PyValue): string {
  if (!hasKey(notifications(db), notificationId)) throw valueError(`Notification ${pyStr(notificationId)} not found`);
  return notificationId as string;
}

const agentTools: ToolDefinition<DbRoot>[] = [
  {
    name: "create_task",
    kind: "write",
    description: "Create a new task for a user. Returns the created task.",
    params: [
      param("user_id", STRING, "The id of the user who creates the task."),
      param("title", STRING, "The title of the task."),
      { ...param("description", STRING, "An optional description of the task."), default: null },
    ],
    run: (db, args) => {
      const userId = requireUser(db, args.get("user_id")!);
      const taskId = `task_${tasks(db).size + 1}`;
      const task = construct(
        TASK,
        new Map<string, PyValue>([
          ["task_id", taskId],
          ["title", args.get("title")!],
          ["description", args.get("description")!],
          ["status", "pending"],
        ]),
      );
      tasks(db).set(taskId, task);
      ((db.mutable("users", userId) as PyModel).tasks as PyValue[]).push(taskId);
      return task;
    },
  },
  {
    name: "get_users",
    kind: "read",
    description: "Get every user in the database.",
    params: [],
    run: (db) => [...users(db).values()],
  },
  {
    name: "update_task_status",
    kind: "write",
    description: "Update the status of a task. Returns the updated task.",
    params: [
      param("task_id", STRING, "The id of the task to update."),
      param("status", { enum: ["pending", "completed"], type: "string" }, "The new status of the task."),
    ],
    run: (db, args) => {
      const taskId = requireTask(db, args.get("task_id")!);
      const task = db.mutable("tasks", taskId) as PyModel;
      // Upstream assigns the status without validation.
      task.status = args.get("status")!;
      return task;
    },
  },
  transferToHumanAgents(),
];

/** The mock domain's agent tools. */
export const mockTools = new Toolkit<DbRoot>("MockTools", agentTools, [
  {
    name: "assert_number_of_tasks",
    params: [{ name: "user_id" }, { name: "expected_number" }],
    run: (db, args) => {
      const userId = requireUser(db, args.get("user_id")!);
      return pyEquals(BigInt(len(users(db).get(userId)!.tasks!)), args.get("expected_number")!);
    },
  },
  {
    name: "assert_task_status",
    params: [{ name: "task_id" }, { name: "expected_status" }],
    run: (db, args) => {
      const taskId = requireTask(db, args.get("task_id")!);
      return pyEquals(tasks(db).get(taskId)!.status!, args.get("expected_status")!);
    },
  },
]);

/** The mock domain's user-side tools: the user's notification inbox. */
export const mockUserTools = new Toolkit<DbRoot>(
  "MockUserTools",
  [
    {
      name: "check_notifications",
      kind: "read",
      description: "Check every notification in the inbox.",
      params: [],
      run: (db) => [...notifications(db).values()],
    },
    {
      name: "dismiss_notification",
      kind: "write",
      description: "Dismiss a notification (mark it as read).",
      params: [param("notification_id", STRING, "The id of the notification to dismiss.")],
      run: (db, args) => {
        const notificationId = requireNotification(db, args.get("notification_id")!);
        (db.mutable("notifications", notificationId) as PyModel).status = "read";
        return `Notification ${notificationId} dismissed`;
      },
    },
  ],
  [
    {
      name: "add_notification",
      params: [{ name: "notification_id" }, { name: "message" }, { name: "task_id", default: null }],
      run: (db, args) => {
        const notification = construct(NOTIFICATION, new Map(args));
        notifications(db).set(args.get("notification_id") as string, notification);
        return notification;
      },
    },
    {
      name: "assert_notification_status",
      params: [{ name: "notification_id" }, { name: "expected_status" }],
      run: (db, args) => {
        const notificationId = requireNotification(db, args.get("notification_id")!);
        return pyEquals(notifications(db).get(notificationId)!.status!, args.get("expected_status")!);
      },
    },
  ],
);
