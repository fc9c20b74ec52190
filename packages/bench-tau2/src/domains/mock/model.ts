import { z } from "zod";
import { pyDict, pyModel, pyOptional, pyStr, pyStrictModel } from "../../python/schema.js";

// The mock domain: a task list (agent side) and a notification inbox (user side).

export const TaskStatus = z.enum(["pending", "completed"]);

export const MockTask = pyModel({
  task_id: pyStr,
  title: pyStr,
  description: pyOptional(pyStr),
  status: TaskStatus,
});
export type MockTask = z.infer<typeof MockTask>;

export const MockUser = pyModel({
  user_id: pyStr,
  name: pyStr,
  tasks: z.array(pyStr),
});
export type MockUser = z.infer<typeof MockUser>;

export const MockDb = pyStrictModel({
  tasks: pyDict(MockTask),
  users: pyDict(MockUser),
});
export type MockDb = z.infer<typeof MockDb>;

export const Notification = pyStrictModel({
  notification_id: pyStr,
  message: pyStr,
  status: z.enum(["unread", "read"]).default("unread"),
  task_id: pyOptional(pyStr),
});
export type Notification = z.infer<typeof Notification>;

export const MockUserDb = pyStrictModel({
  notifications: pyDict(Notification).default(() => new Map()),
});
export type MockUserDb = z.infer<typeof MockUserDb>;
