import * as ops from "../../py/ops.js";
import { pyStr } from "../../py/repr.js";
import { deepCopy, pyEquals, PyDict, truthy } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { asDict, asList, asStr, item, iter, setItem } from "../python-access.js";

const DEFAULT_STATE = (): PyDict => PyDict.of({ ticket_queue: [], ticket_counter: 1, current_user: null });
const KEYS = ["ticket_queue", "ticket_counter", "current_user"];
const EDITABLE = ["title", "description", "status", "priority"];

/** A support-ticket queue (upstream `TicketAPI`). */
export class TicketAPI extends BfclEnvironment {
  readonly className = "TicketAPI";
  private readonly state = new Map<string, Py>();

  override load(config: PyDict): void {
    const defaults = DEFAULT_STATE();
    for (const key of KEYS) this.state.set(key, config.has(key) ? config.get(key)! : deepCopy(defaults.get(key)!));
  }

  override publicState(): Map<string, Py> {
    return new Map(this.state);
  }

  private get(key: string): Py {
    return this.state.get(key) ?? null;
  }

  private find(ticketId: Py): Py {
    for (const ticket of iter(this.get("ticket_queue"))) if (pyEquals(item(ticket, "id"), ticketId)) return ticket;
    return null;
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("create_ticket", ["title", { name: "description", default: "" }, { name: "priority", default: 1 }], (title, description, priority) => {
      if (!truthy(this.get("current_user"))) return PyDict.of({ error: "User not authenticated. Please log in to create a ticket." });
      if (ops.compare("<", priority, 1) || ops.compare(">", priority, 5)) return PyDict.of({ error: "Invalid priority. Priority must be between 1 and 5." });
      const ticket = PyDict.of({ id: this.get("ticket_counter"), title, description, status: "Open", priority, created_by: this.get("current_user") });
      asList(this.get("ticket_queue"), "append").push(ticket);
      this.state.set("ticket_counter", ops.add(this.get("ticket_counter"), 1));
      return ticket;
    });
    this.define("get_ticket", ["ticket_id"], (ticketId) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      return ticket;
    });
    this.define("close_ticket", ["ticket_id"], (ticketId) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      if (pyEquals(item(ticket, "status"), "Closed")) return PyDict.of({ error: `Ticket with ID ${pyStr(ticketId)} is already closed.` });
      setItem(ticket, "status", "Closed");
      return PyDict.of({ status: `Ticket ${pyStr(ticketId)} has been closed successfully.` });
    });
    this.define("resolve_ticket", ["ticket_id", "resolution"], (ticketId, resolution) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      if (pyEquals(item(ticket, "status"), "Resolved")) return PyDict.of({ error: `Ticket with ID ${pyStr(ticketId)} is already resolved.` });
      setItem(ticket, "status", "Resolved");
      setItem(ticket, "resolution", resolution);
      return PyDict.of({ status: `Ticket ${pyStr(ticketId)} has been resolved successfully.` });
    });
    this.define("edit_ticket", ["ticket_id", "updates"], (ticketId, updates) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      const changes = asDict(updates, "keys");
      // Upstream joins a set, whose order depends on string hashing; key order is used here.
      const invalid = changes.keys().filter((key) => !EDITABLE.some((field) => pyEquals(field, key)));
      if (invalid.length > 0) return PyDict.of({ error: `Invalid fields for update: ${invalid.map((k) => asStr(k, "join")).join(", ")}` });
      for (const [key, value] of changes) if (value !== null) setItem(ticket, key, value);
      return PyDict.of({ status: `Ticket ${pyStr(ticketId)} has been updated successfully.` });
    });
    this.define("ticket_login", ["username", "password"], (username, password) => {
      if (truthy(username) && truthy(password)) {
        this.state.set("current_user", username);
        return PyDict.of({ success: true });
      }
      return PyDict.of({ success: false });
    });
    this.define("ticket_get_login_status", [], () => PyDict.of({ login_status: truthy(this.get("current_user")) }));
    this.define("logout", [], () => {
      if (truthy(this.get("current_user"))) {
        this.state.set("current_user", null);
        return PyDict.of({ success: true });
      }
      return PyDict.of({ success: false });
    });
    this.define("get_user_tickets", [{ name: "status", default: null }], (status) => {
      if (!truthy(this.get("current_user"))) return [PyDict.of({ error: "User not authenticated. Please log in to view tickets." })];
      let tickets = iter(this.get("ticket_queue")).filter((ticket) => pyEquals(item(ticket, "created_by"), this.get("current_user")));
      if (truthy(status)) {
        const wanted = asStr(status, "lower").toLowerCase();
        tickets = tickets.filter((ticket) => asStr(item(ticket, "status"), "lower").toLowerCase() === wanted);
      }
      return tickets;
    });
  }
}
