import { PythonRandom } from "../../py/random.js";
import { pyStr } from "../../py/repr.js";
import * as ops from "../../py/ops.js";
import { deepCopy, PyDict, PyError, pyEquals, PySet, truthy } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { asList, asStr, dictGet, has, iter, noAttribute } from "../python-access.js";
import { randomFrom } from "./seed.js";

const DEFAULT_STATE = (): PyDict =>
  PyDict.of({
    generated_ids: new PySet(),
    user_count: 4,
    user_map: PyDict.of({ Alice: "USR001", Bob: "USR002", Catherine: "USR003", Daniel: "USR004" }),
    inbox: [PyDict.of({ USR002: "My name is Alice. I want to connect." }), PyDict.of({ USR003: "Could you upload the file?" }), PyDict.of({ USR004: "Could you upload the file?" })],
    message_count: 3,
    current_user: null,
  });

/** The first `(key, value)` of a one-entry message dict (`list(message.items())[0]`). */
function firstItem(message: Py): [Py, Py] {
  if (!(message instanceof PyDict)) throw noAttribute(message, "items");
  const first = [...message][0];
  if (first === undefined) throw new PyError("IndexError", "list index out of range");
  return first;
}

/** Workspace messaging between users (upstream `MessageAPI`). */
export class MessageAPI extends BfclEnvironment {
  readonly className = "MessageAPI";
  private random = new PythonRandom(200191);
  private state = new Map<string, Py>();

  override load(config: PyDict): void {
    const defaults = DEFAULT_STATE();
    this.random = randomFrom(dictGet(config, "random_seed", 200191));
    for (const key of ["generated_ids", "user_count", "user_map", "inbox", "message_count", "current_user"]) {
      this.state.set(key, config.has(key) ? config.get(key)! : deepCopy(defaults.get(key)!));
    }
  }

  override publicState(): Map<string, Py> {
    return new Map(this.state);
  }

  private get(key: string): Py {
    return this.state.get(key) ?? null;
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("list_users", [], () => PyDict.of({ user_list: iter(this.get("user_map")) }));
    this.define("get_user_id", ["user"], (user) => {
      if (!has(this.get("user_map"), user)) return PyDict.of({ error: `User '${pyStr(user)}' not found in the workspace.` });
      return PyDict.of({ user_id: dictGet(this.get("user_map"), user) });
    });
    this.define("message_login", ["user_id"], (userId) => {
      if (!has(this.userIds(), userId)) return PyDict.of({ login_status: false, message: `User ID '${pyStr(userId)}' not found.` });
      this.state.set("current_user", userId);
      return PyDict.of({ login_status: true, message: `User '${pyStr(userId)}' logged in successfully.` });
    });
    this.define("message_get_login_status", [], () => PyDict.of({ login_status: truthy(this.get("current_user")) }));
    this.define("send_message", ["receiver_id", "message"], (receiverId, message) => {
      if (!truthy(this.get("current_user"))) return PyDict.of({ error: "No user is currently logged in." });
      if (!has(this.userIds(), receiverId)) return PyDict.of({ error: `Receiver ID '${pyStr(receiverId)}' not found.` });
      const messageId = this.generateId();
      asList(this.get("inbox"), "append").push(new PyDict([[receiverId, message]]));
      this.state.set("message_count", ops.add(this.get("message_count"), 1));
      return PyDict.of({ sent_status: true, message_id: messageId, message: `Message sent to '${pyStr(receiverId)}' successfully.` });
    });
    this.define("delete_message", ["receiver_id"], (receiverId) => {
      if (!truthy(this.get("current_user"))) return PyDict.of({ error: "No user is currently logged in." });
      const inbox = asList(this.get("inbox"), "remove");
      for (const message of [...inbox].reverse()) {
        const [receiver] = firstItem(message);
        if (pyEquals(receiver, receiverId)) {
          // `list.remove` drops the first equal message, not necessarily this one.
          const index = inbox.findIndex((m) => pyEquals(m, message));
          inbox.splice(index, 1);
          return PyDict.of({ deleted_status: true, receiver_id: receiver, message: `Receiver ${pyStr(receiverId)}'s latest message deleted successfully.` });
        }
      }
      return PyDict.of({ error: `Receiver ID ${pyStr(receiverId)} not found.` });
    });
    this.define("view_messages_sent", [], () => {
      if (!truthy(this.get("current_user"))) return PyDict.of({ error: "No user is currently logged in." });
      const sent = new PyDict();
      for (const message of iter(this.get("inbox"))) {
        const [receiver, content] = firstItem(message);
        if (!sent.has(receiver)) sent.set(receiver, [content]);
        else asList(sent.get(receiver)!, "append").push(content);
      }
      return PyDict.of({ messages: sent });
    });
    this.define("add_contact", ["user_name"], (userName) => {
      const userMap = this.get("user_map");
      if (has(userMap, userName)) return PyDict.of({ error: `User name '${pyStr(userName)}' already exists.` });
      const count = ops.add(this.get("user_count"), 1);
      this.state.set("user_count", count);
      const userId = `USR${pyStr(count).padStart(3, "0")}`;
      if (has(this.userIds(), userId)) return PyDict.of({ error: `User ID '${userId}' already exists.` });
      if (!(userMap instanceof PyDict)) throw new PyError("TypeError", "object does not support item assignment");
      userMap.set(userName, userId);
      return PyDict.of({ added_status: true, user_id: userId, message: `Contact '${pyStr(userName)}' added successfully.` });
    });
    this.define("search_messages", ["keyword"], (keyword) => {
      if (!truthy(this.get("current_user"))) return PyDict.of({ error: "No user is currently logged in." });
      const needle = asStr(keyword, "lower").toLowerCase();
      const results: Py[] = [];
      for (const message of iter(this.get("inbox"))) {
        const [receiverId, content] = firstItem(message);
        if (asStr(content, "lower").toLowerCase().includes(needle)) results.push(PyDict.of({ receiver_id: receiverId, message: content }));
      }
      return PyDict.of({ results });
    });
    this.define("get_message_stats", [], () => {
      if (!truthy(this.get("current_user"))) return PyDict.of({ error: "No user is currently logged in." });
      const contacts = new PySet();
      let received = 0;
      for (const message of iter(this.get("inbox"))) {
        contacts.add(firstItem(message)[0]);
        received++;
      }
      return PyDict.of({ stats: PyDict.of({ received_count: received, total_contacts: contacts.size }) });
    });
  }

  private userIds(): Py[] {
    const userMap = this.get("user_map");
    if (!(userMap instanceof PyDict)) throw noAttribute(userMap, "values");
    return userMap.values();
  }

  private generateId(): Py {
    const ids = this.get("generated_ids");
    let id = this.random.randint(10000, 99999);
    while (has(ids, id)) id = this.random.randint(10000, 99999);
    if (!(ids instanceof PySet)) throw noAttribute(ids, "add");
    ids.add(id);
    return PyDict.of({ new_id: id });
  }
}
