import { iterate, operator, pyEquals, PyHashDict, type PyObject, pyStr, truthy } from "@envace/python-text";
import { StateEnvironment } from "../environment.js";
import { asDict, asList, asStr } from "../python-access.js";

const DEFAULT_STATE = (): PyHashDict => PyHashDict.of({ ticket_queue: [], ticket_counter: 1n, current_user: null });
const KEYS = ["ticket_queue", "ticket_counter", "current_user"];
const EDITABLE = ["title", "description", "status", "priority"];

/** A support-ticket queue (upstream `TicketAPI`). */
export class TicketAPI extends StateEnvironment {
  readonly className = "TicketAPI";

  override load(config: PyHashDict): void {
    this.loadState(config, KEYS, DEFAULT_STATE());
  }

  private find(ticketId: PyObject): PyObject {
    for (const ticket of iterate(this.get("ticket_queue"))) if (pyEquals(operator.getitem(ticket, "id"), ticketId)) return ticket;
    return null;
  }

  constructor(...args: ConstructorParameters<typeof StateEnvironment>) {
    super(...args);
    this.define("create_ticket", ["title", { name: "description", default: "" }, { name: "priority", default: 1n }], (title, description, priority) => {
      if (!truthy(this.get("current_user"))) return PyHashDict.of({ error: "User not authenticated. Please log in to create a ticket." });
      if (operator.lt(priority, 1n) || operator.gt(priority, 5n)) return PyHashDict.of({ error: "Invalid priority. Priority must be between 1 and 5." });
      const ticket = PyHashDict.of({ id: this.get("ticket_counter"), title, description, status: "Open", priority, created_by: this.get("current_user") });
      asList(this.get("ticket_queue"), "append").push(ticket);
      this.state.set("ticket_counter", operator.add(this.get("ticket_counter"), 1n));
      return ticket;
    });
    this.define("get_ticket", ["ticket_id"], (ticketId) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyHashDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      return ticket;
    });
    this.define("close_ticket", ["ticket_id"], (ticketId) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyHashDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      if (pyEquals(operator.getitem(ticket, "status"), "Closed")) return PyHashDict.of({ error: `Ticket with ID ${pyStr(ticketId)} is already closed.` });
      operator.setitem(ticket, "status", "Closed");
      return PyHashDict.of({ status: `Ticket ${pyStr(ticketId)} has been closed successfully.` });
    });
    this.define("resolve_ticket", ["ticket_id", "resolution"], (ticketId, resolution) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyHashDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      if (pyEquals(operator.getitem(ticket, "status"), "Resolved")) return PyHashDict.of({ error: `Ticket with ID ${pyStr(ticketId)} is already resolved.` });
      operator.setitem(ticket, "status", "Resolved");
      operator.setitem(ticket, "resolution", resolution);
      return PyHashDict.of({ status: `Ticket ${pyStr(ticketId)} has been resolved successfully.` });
    });
    this.define("edit_ticket", ["ticket_id", "updates"], (ticketId, updates) => {
      const ticket = this.find(ticketId);
      if (!truthy(ticket)) return PyHashDict.of({ error: `Ticket with ID ${pyStr(ticketId)} not found.` });
      const changes = asDict(updates, "keys");
      // Upstream joins a set, whose order depends on string hashing; key order is used here.
      const invalid = changes.keys().filter((key) => !EDITABLE.some((field) => pyEquals(field, key)));
      if (invalid.length > 0) return PyHashDict.of({ error: `Invalid fields for update: ${invalid.map((k) => asStr(k, "join")).join(", ")}` });
      for (const [key, value] of changes) if (value !== null) operator.setitem(ticket, key, value);
      return PyHashDict.of({ status: `Ticket ${pyStr(ticketId)} has been updated successfully.` });
    });
    this.define("ticket_login", ["username", "password"], (username, password) => {
      if (truthy(username) && truthy(password)) {
        this.state.set("current_user", username);
        return PyHashDict.of({ success: true });
      }
      return PyHashDict.of({ success: false });
    });
    this.define("ticket_get_login_status", [], () => PyHashDict.of({ login_status: truthy(this.get("current_user")) }));
    this.define("logout", [], () => {
      if (truthy(this.get("current_user"))) {
        this.state.set("current_user", null);
        return PyHashDict.of({ success: true });
      }
      return PyHashDict.of({ success: false });
    });
    this.define("get_user_tickets", [{ name: "status", default: null }], (status) => {
      if (!truthy(this.get("current_user"))) return [PyHashDict.of({ error: "User not authenticated. Please log in to view tickets." })];
      let tickets = iterate(this.get("ticket_queue")).filter((ticket) => pyEquals(operator.getitem(ticket, "created_by"), this.get("current_user")));
      if (truthy(status)) {
        const wanted = asStr(status, "lower").toLowerCase();
        tickets = tickets.filter((ticket) => asStr(operator.getitem(ticket, "status"), "lower").toLowerCase() === wanted);
      }
      return tickets;
    });
  }
}
