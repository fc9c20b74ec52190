import { iterate, operator, pyEquals, PyException, PyHashDict, type PyObject, PySet, pyStr, truthy, typeError } from "@envace/python-text";
import { PythonRandom } from "../../py/random.js";
import { StateEnvironment } from "../environment.js";
import { asList, asStr, dictGet, noAttribute } from "../python-access.js";
import { randomFrom } from "./seed.js";

const DEFAULT_STATE = (): PyHashDict =>
  PyHashDict.of({
    generated_ids: new PySet(),
    user_count: 4n,
    user_map: PyHashDict.of({ Alice: "USR001", Bob: "USR002", Catherine: "USR003", Daniel: "USR004" }),
    inbox: [
      PyHashDict.of({ USR002: "My name is Alice. I want to connect." }),
      PyHashDict.of({ USR003: "Could you upload the file?" }),
      PyHashDict.of({ USR004: "Could you upload the file?" }),
    ],
    message_count: 3n,
    current_user: null,
  });

/** The first `(key, value)` of a one-entry message dict (`list(message.items())[0]`). */
function firstItem(message: PyObject): [PyObject, PyObject] {
  if (!(message instanceof PyHashDict)) throw noAttribute(message, "items");
  const first = [...message][0];
  if (first === undefined) throw new PyException("IndexError", "list index out of range");
  return first;
}

/** Workspace messaging between users (upstream `MessageAPI`). */
export class MessageAPI extends StateEnvironment {
  readonly className = "MessageAPI";
  private random = new PythonRandom(200191);

  override load(config: PyHashDict): void {
    this.random = randomFrom(dictGet(config, "random_seed", 200191n));
    this.loadState(config, ["generated_ids", "user_count", "user_map", "inbox", "message_count", "current_user"], DEFAULT_STATE());
  }

  constructor(...args: ConstructorParameters<typeof StateEnvironment>) {
    super(...args);
    this.define("list_users", [], () => PyHashDict.of({ user_list: iterate(this.get("user_map")) }));
    this.define("get_user_id", ["user"], (user) => {
      if (!operator.contains(this.get("user_map"), user)) return PyHashDict.of({ error: `User '${pyStr(user)}' not found in the workspace.` });
      return PyHashDict.of({ user_id: dictGet(this.get("user_map"), user) });
    });
    this.define("message_login", ["user_id"], (userId) => {
      if (!operator.contains(this.userIds(), userId)) return PyHashDict.of({ login_status: false, message: `User ID '${pyStr(userId)}' not found.` });
      this.state.set("current_user", userId);
      return PyHashDict.of({ login_status: true, message: `User '${pyStr(userId)}' logged in successfully.` });
    });
    this.define("message_get_login_status", [], () => PyHashDict.of({ login_status: truthy(this.get("current_user")) }));
    this.define("send_message", ["receiver_id", "message"], (receiverId, message) => {
      if (!truthy(this.get("current_user"))) return PyHashDict.of({ error: "No user is currently logged in." });
      if (!operator.contains(this.userIds(), receiverId)) return PyHashDict.of({ error: `Receiver ID '${pyStr(receiverId)}' not found.` });
      const messageId = this.generateId();
      asList(this.get("inbox"), "append").push(new PyHashDict([[receiverId, message]]));
      this.state.set("message_count", operator.add(this.get("message_count"), 1n));
      return PyHashDict.of({ sent_status: true, message_id: messageId, message: `Message sent to '${pyStr(receiverId)}' successfully.` });
    });
    this.define("delete_message", ["receiver_id"], (receiverId) => {
      if (!truthy(this.get("current_user"))) return PyHashDict.of({ error: "No user is currently logged in." });
      const inbox = asList(this.get("inbox"), "remove");
      for (const message of [...inbox].reverse()) {
        const [receiver] = firstItem(message);
        if (pyEquals(receiver, receiverId)) {
          // `list.remove` drops the first equal message, not necessarily this one.
          const index = inbox.findIndex((m) => pyEquals(m, message));
          inbox.splice(index, 1);
          return PyHashDict.of({
            deleted_status: true,
            receiver_id: receiver,
            message: `Receiver ${pyStr(receiverId)}'s latest message deleted successfully.`,
          });
        }
      }
      return PyHashDict.of({ error: `Receiver ID ${pyStr(receiverId)} not found.` });
    });
    this.define("view_messages_sent", [], () => {
      if (!truthy(this.get("current_user"))) return PyHashDict.of({ error: "No user is currently logged in." });
      const sent = new PyHashDict();
      for (const message of iterate(this.get("inbox"))) {
        const [receiver, content] = firstItem(message);
        if (!sent.has(receiver)) sent.set(receiver, [content]);
        else asList(sent.get(receiver)!, "append").push(content);
      }
      return PyHashDict.of({ messages: sent });
    });
    this.define("add_contact", ["user_name"], (userName) => {
      const userMap = this.get("user_map");
      if (operator.contains(userMap, userName)) return PyHashDict.of({ error: `User name '${pyStr(userName)}' already exists.` });
      const count = operator.add(this.get("user_count"), 1n);
      this.state.set("user_count", count);
      const userId = `USR${pyStr(count).padStart(3, "0")}`;
      if (operator.contains(this.userIds(), userId)) return PyHashDict.of({ error: `User ID '${userId}' already exists.` });
      if (!(userMap instanceof PyHashDict)) throw typeError("object does not support item assignment");
      userMap.set(userName, userId);
      return PyHashDict.of({ added_status: true, user_id: userId, message: `Contact '${pyStr(userName)}' added successfully.` });
    });
    this.define("search_messages", ["keyword"], (keyword) => {
      if (!truthy(this.get("current_user"))) return PyHashDict.of({ error: "No user is currently logged in." });
      const needle = asStr(keyword, "lower").toLowerCase();
      const results: PyObject[] = [];
      for (const message of iterate(this.get("inbox"))) {
        const [receiverId, content] = firstItem(message);
        if (asStr(content, "lower").toLowerCase().includes(needle)) results.push(PyHashDict.of({ receiver_id: receiverId, message: content }));
      }
      return PyHashDict.of({ results });
    });
    this.define("get_message_stats", [], () => {
      if (!truthy(this.get("current_user"))) return PyHashDict.of({ error: "No user is currently logged in." });
      const contacts = new PySet();
      let received = 0;
      for (const message of iterate(this.get("inbox"))) {
        contacts.add(firstItem(message)[0]);
        received++;
      }
      return PyHashDict.of({ stats: PyHashDict.of({ received_count: BigInt(received), total_contacts: BigInt(contacts.size) }) });
    });
  }

  private userIds(): PyObject[] {
    const userMap = this.get("user_map");
    if (!(userMap instanceof PyHashDict)) throw noAttribute(userMap, "values");
    return userMap.values();
  }

  private generateId(): PyObject {
    const ids = this.get("generated_ids");
    let id = this.random.randint(10000, 99999);
    while (operator.contains(ids, id)) id = this.random.randint(10000, 99999);
    if (!(ids instanceof PySet)) throw noAttribute(ids, "add");
    ids.add(id);
    return PyHashDict.of({ new_id: id });
  }
}
