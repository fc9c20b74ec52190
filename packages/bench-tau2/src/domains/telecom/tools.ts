import { randomBytes } from "node:crypto";
import {
  abs,
  add,
  attributeError,
  formatFixed,
  mul,
  type PyDict,
  pyEquals,
  pyStr,
  pyTypeName,
  type PyValue,
  sub,
  truthy,
  typeError,
  valueError,
} from "@envace/python-text";
import type { Database, DbRoot } from "../../database.js";
import { Toolkit, type EnvFunction, type ToolDefinition } from "../../toolkit.js";
import { INTEGER, lookupTool, param, STRING, transferToHumanAgents } from "../common.js";
import type { Bill, Customer, Line, Plan, TelecomDb } from "./model.js";

// The telecom agent's tools (`TelecomTools`): customers, lines, bills and plans. Upstream's
// clock stands still at 2025-02-25, so every date a tool writes is fixed.

type AnyDb = Database<DbRoot>;

const TODAY = "2025-02-25";

/** The agent database as its lists of models; tools change them in place (each environment has its own copy). */
export function telecomDb(db: AnyDb): TelecomDb {
  return db.tables as unknown as TelecomDb;
}

/** `get_customer_by_id`. */
export function customerById(db: TelecomDb, id: PyValue): Customer {
  const customer = db.customers.find((candidate) => candidate.customer_id === id);
  if (customer === undefined) throw valueError(`Customer with ID ${pyStr(id)} not found`);
  return customer;
}

/** `get_customer_by_phone`: a customer's contact number or the number of one of their lines. */
export function customerByPhone(db: TelecomDb, phone: PyValue): Customer {
  for (const customer of db.customers) {
    if (customer.phone_number === phone) return customer;
    for (const lineId of customer.line_ids) {
      if (lineById(db, lineId).phone_number === phone) return customer;
    }
  }
  throw valueError(`Customer with phone number ${pyStr(phone)} not found`);
}

function finder<T>(what: string, key: (item: T) => string): (items: readonly T[], id: PyValue) => T {
  return (items, id) => {
    const found = items.find((item) => key(item) === id);
    if (found === undefined) throw valueError(`${what} ${pyStr(id)} not found`);
    return found;
  };
}

const findLine = finder<Line>("Line with ID", (line) => line.line_id);
const findPlan = finder<Plan>("Plan with ID", (plan) => plan.plan_id);
const findBill = finder<Bill>("Bill with ID", (bill) => bill.bill_id);
const findDevice = finder<TelecomDb["devices"][number]>("Device with ID", (device) => device.device_id);

export const lineById = (db: TelecomDb, id: PyValue): Line => findLine(db.lines, id);
export const planById = (db: TelecomDb, id: PyValue): Plan => findPlan(db.plans, id);
export const billById = (db: TelecomDb, id: PyValue): Bill => findBill(db.bills, id);

/** `_get_line_by_phone`. */
export function lineByPhone(db: TelecomDb, phone: PyValue): Line {
  const line = db.lines.find((candidate) => candidate.phone_number === phone);
  if (line === undefined) throw valueError(`Line with phone number ${pyStr(phone)} not found`);
  return line;
}

/** `_get_target_line`: the line, which must be one of the customer's. */
function targetLine(db: TelecomDb, customerId: PyValue, lineId: PyValue): Line {
  const customer = customerById(db, customerId);
  if (!customer.line_ids.some((id) => pyEquals(id, lineId))) throw valueError(`Line ${pyStr(lineId)} not found for customer ${pyStr(customerId)}`);
  return lineById(db, lineId);
}

/** The line the `customer_id` and `line_id` arguments name. */
function argLine(db: TelecomDb, args: ReadonlyMap<string, PyValue>): Line {
  return targetLine(db, args.get("customer_id")!, args.get("line_id")!);
}

/** `_get_bills_awaiting_payment`, in the customer's `bill_ids` order. */
export function billsAwaitingPayment(db: TelecomDb, customer: Customer): Bill[] {
  return customer.bill_ids.map((id) => billById(db, id)).filter((bill) => bill.status === "Awaiting Payment");
}

function dict(entries: [string, PyValue][]): PyDict {
  return new Map(entries);
}

function model(value: object): PyValue {
  return value as unknown as PyValue;
}

/** What a tool that changes a line's status returns: a message and the line. */
function lineChanged(message: string, line: Line): PyDict {
  return dict([
    ["message", message],
    ["line", model(line)],
  ]);
}

/** Suspending and resuming: the line must be in one of `from`; suspending starts the suspension today, resuming ends it. */
function switchLine(
  db: TelecomDb,
  args: ReadonlyMap<string, PyValue>,
  from: readonly Line["status"][],
  refusal: string,
  to: "Active" | "Suspended",
  message: string,
): PyDict {
  const line = argLine(db, args);
  if (!from.includes(line.status)) throw valueError(refusal);
  line.status = to;
  line.suspension_start_date = to === "Suspended" ? TODAY : null;
  return lineChanged(message, line);
}

function asFloat(value: PyValue): number {
  return Number(value);
}

/** `_apply_one_time_charge`: onto the customer's first draft bill, or a new one for next month. */
function applyOneTimeCharge(db: TelecomDb, customerId: PyValue, amount: number, description: string): void {
  const customer = customerById(db, customerId);
  let draft = customer.bill_ids.map((id) => billById(db, id)).find((bill) => bill.status === "Draft");
  if (draft === undefined) {
    // Upstream names the bill after a random uuid4.
    const id = `B${randomBytes(4).toString("hex")}`;
    draft = {
      bill_id: id,
      customer_id: customerId as string,
      period_start: "2025-03-01",
      period_end: "2025-03-31",
      issue_date: "2025-03-01",
      total_due: 0,
      due_date: "2025-03-15",
      line_items: [],
      status: "Draft",
    };
    db.bills.push(draft);
    customer.bill_ids.push(id);
  }
  draft.line_items.push({ description, amount, date: TODAY, item_type: amount < 0 ? "Credit" : "Charge" });
  draft.total_due += amount;
}

const CUSTOMER_ID = param("customer_id", STRING, "The customer's ID.");
const LINE_ID = param("line_id", STRING, "The line's ID.");

function agentTool(
  definition: Omit<ToolDefinition<DbRoot>, "run"> & { run: (db: TelecomDb, args: ReadonlyMap<string, PyValue>) => PyValue },
): ToolDefinition<DbRoot> {
  return { ...definition, run: (db, args) => definition.run(telecomDb(db), args) };
}

/** A customer, line, device, bill or plan, told apart by its ID's first letter. */
function detailsById(db: TelecomDb, id: PyValue): PyValue {
  if (typeof id !== "string") throw attributeError(`'${pyTypeName(id)}' object has no attribute 'startswith'`);
  if (id.startsWith("L")) return model(lineById(db, id));
  if (id.startsWith("D")) return model(findDevice(db.devices, id));
  if (id.startsWith("B")) return model(billById(db, id));
  if (id.startsWith("C")) return model(customerById(db, id));
  if (id.startsWith("P")) return model(planById(db, id));
  throw valueError(`Unknown ID format or type: ${id}`);
}

function lowered(value: PyValue): string {
  if (typeof value !== "string") throw attributeError(`'${pyTypeName(value)}' object has no attribute 'lower'`);
  return value.toLowerCase();
}

function slice<T>(items: T[], limit: PyValue): T[] {
  if (limit === null) return items;
  if (typeof limit !== "bigint" && typeof limit !== "boolean") throw typeError("slice indices must be integers or None or have an __index__ method");
  return items.slice(0, Number(limit));
}

/** `enable_roaming` or `disable_roaming`: set the line's roaming, saying when it already was. */
function roamingTool(enable: boolean): ToolDefinition<DbRoot> {
  const verb = enable ? "enable" : "disable";
  return agentTool({
    name: `${verb}_roaming`,
    kind: "write",
    description: `${enable ? "Enable" : "Disable"} international roaming on a line.`,
    params: [CUSTOMER_ID, LINE_ID],
    run: (db, args) => {
      const line = argLine(db, args);
      if (line.roaming_enabled === enable) return `Roaming was already ${verb}d`;
      line.roaming_enabled = enable;
      return `Roaming ${verb}d successfully`;
    },
  });
}

const tools: ToolDefinition<DbRoot>[] = [
  agentTool({
    name: "get_customer_by_phone",
    kind: "read",
    description: "Find a customer by their contact phone number or the number of one of their lines.",
    params: [param("phone_number", STRING, "The phone number to look up.")],
    run: (db, args) => model(customerByPhone(db, args.get("phone_number")!)),
  }),
  agentTool({
    name: "get_customer_by_id",
    kind: "read",
    description: "Get a customer by their ID.",
    params: [CUSTOMER_ID],
    run: (db, args) => model(customerById(db, args.get("customer_id")!)),
  }),
  agentTool({
    name: "get_customer_by_name",
    kind: "read",
    description: "Find customers by full name and date of birth (YYYY-MM-DD).",
    params: [param("full_name", STRING, "The customer's full name."), param("dob", STRING, "The date of birth, YYYY-MM-DD.")],
    run: (db, args) => {
      const name = args.get("full_name")!;
      const dob = args.get("dob")!;
      return db.customers.filter((customer) => customer.full_name.toLowerCase() === lowered(name) && customer.date_of_birth === dob).map(model);
    },
  }),
  lookupTool(
    "get_details_by_id",
    "Get a customer, line, device, bill or plan by its ID (C…, L…, D…, B…, P…).",
    param("id", STRING, "The ID to look up."),
    (db, id) => detailsById(telecomDb(db), id),
  ),
  agentTool({
    name: "suspend_line",
    kind: "write",
    description: "Suspend an active line (at most 6 months; a $5/month holding fee applies).",
    params: [CUSTOMER_ID, LINE_ID, param("reason", STRING, "Why the line is suspended.")],
    run: (db, args) =>
      switchLine(db, args, ["Active"], "Line must be active to suspend", "Suspended", "Line suspended successfully. $5/month holding fee will apply."),
  }),
  agentTool({
    name: "resume_line",
    kind: "write",
    description: "Resume a suspended (or pending activation) line.",
    params: [CUSTOMER_ID, LINE_ID],
    run: (db, args) => switchLine(db, args, ["Suspended", "Pending Activation"], "Line must be suspended to resume", "Active", "Line resumed successfully"),
  }),
  agentTool({
    name: "get_bills_for_customer",
    kind: "read",
    description: "Get a customer's bills, most recent first.",
    params: [CUSTOMER_ID, { ...param("limit", INTEGER, "The most bills to return."), default: 12n }],
    run: (db, args) => {
      const customer = customerById(db, args.get("customer_id")!);
      const bills = customer.bill_ids.map((id) => billById(db, id));
      // Python's sorted(reverse=True) is stable: equal dates keep their order.
      const sorted = [...bills].sort((a, b) => (a.issue_date < b.issue_date ? 1 : a.issue_date > b.issue_date ? -1 : 0));
      return slice(sorted, args.get("limit")!).map(model);
    },
  }),
  agentTool({
    name: "send_payment_request",
    kind: "write",
    description: "Send the customer a payment request for one of their bills (only one bill may await payment at a time). Check the bill's status first.",
    params: [CUSTOMER_ID, param("bill_id", STRING, "The bill's ID.")],
    run: (db, args) => {
      const customerId = args.get("customer_id")!;
      const billId = args.get("bill_id")!;
      const customer = customerById(db, customerId);
      if (billsAwaitingPayment(db, customer).length !== 0) throw valueError("A bill is already awaiting payment for this customer");
      if (!customer.bill_ids.some((id) => pyEquals(id, billId))) throw valueError(`Bill ${pyStr(billId)} not found for customer ${pyStr(customerId)}`);
      const bill = billById(db, billId);
      bill.status = "Awaiting Payment";
      return `Payment request sent to the customer for bill ${bill.bill_id}`;
    },
  }),
  agentTool({
    name: "get_data_usage",
    kind: "read",
    description: "Get a line's data usage this billing cycle: used, limit, refuelled, and the cycle's end date.",
    params: [CUSTOMER_ID, LINE_ID],
    run: (db, args) => {
      const lineId = args.get("line_id")!;
      const line = targetLine(db, args.get("customer_id")!, lineId);
      const plan = planById(db, line.plan_id);
      return dict([
        ["line_id", lineId],
        ["data_used_gb", line.data_used_gb],
        ["data_limit_gb", plan.data_limit_gb],
        ["data_refueling_gb", line.data_refueling_gb],
        ["cycle_end_date", "2025-02-28"],
      ]);
    },
  }),
  roamingTool(true),
  roamingTool(false),
  transferToHumanAgents(),
  agentTool({
    name: "refuel_data",
    kind: "write",
    description: "Add data to a line for this cycle, charged to the customer's next bill at the plan's refuelling price.",
    params: [CUSTOMER_ID, LINE_ID, param("gb_amount", { type: "number" }, "How many GB to add.")],
    run: (db, args) => {
      const customerId = args.get("customer_id")!;
      const lineId = args.get("line_id")!;
      const amount = args.get("gb_amount")!;
      const line = targetLine(db, customerId, lineId);
      if (typeof amount !== "number" && typeof amount !== "bigint" && typeof amount !== "boolean") {
        throw typeError(`'<=' not supported between instances of '${pyTypeName(amount)}' and 'int'`);
      }
      if (Number(amount) <= 0) throw valueError("Refuel amount must be positive");
      const plan = planById(db, line.plan_id);
      const charge = asFloat(mul(amount, plan.data_refueling_price_per_gb));
      line.data_refueling_gb = asFloat(add(line.data_refueling_gb, amount));
      applyOneTimeCharge(db, customerId, charge, `Data refueling: ${pyStr(amount)} GB at $${pyStr(plan.data_refueling_price_per_gb)}/GB`);
      return dict([
        ["message", `Successfully added ${pyStr(amount)} GB of data for line ${pyStr(lineId)} for $${formatFixed(charge, 2)}`],
        ["new_data_refueling_gb", line.data_refueling_gb],
        ["charge", charge],
      ]);
    },
  }),
];

function envFunction(
  name: string,
  params: EnvFunction<DbRoot>["params"],
  run: (db: TelecomDb, args: ReadonlyMap<string, PyValue>) => PyValue,
): EnvFunction<DbRoot> {
  return { name, params, run: (db, args) => run(telecomDb(db), args) };
}

const functions: EnvFunction<DbRoot>[] = [
  envFunction("set_data_usage", [{ name: "customer_id" }, { name: "line_id" }, { name: "data_used_gb" }], (db, args) => {
    const line = argLine(db, args);
    line.data_used_gb = args.get("data_used_gb") as number;
    return `Data usage set to ${pyStr(args.get("data_used_gb")!)} GB for line ${pyStr(args.get("line_id")!)}`;
  }),
  envFunction(
    "suspend_line_for_overdue_bill",
    [{ name: "customer_id" }, { name: "line_id" }, { name: "new_bill_id" }, { name: "contract_ended" }],
    (db, args) => {
      const customerId = args.get("customer_id")!;
      const billId = args.get("new_bill_id") as string;
      const line = lineById(db, args.get("line_id")!);
      if (line.status !== "Active") throw valueError("Line must be active to suspend for unpaid bill");
      const amount = planById(db, line.plan_id).price_per_month;
      if (amount <= 0) throw valueError("Amount must be positive for overdue bill");
      const customer = customerById(db, customerId);
      if (customer.bill_ids.some((id) => billById(db, id).status === "Overdue")) throw valueError("Customer already has an overdue bill");
      db.bills.push({
        bill_id: billId,
        customer_id: customerId as string,
        period_start: "2025-01-01",
        period_end: "2025-01-31",
        issue_date: "2025-01-01",
        total_due: 0 + amount,
        due_date: "2025-01-15",
        line_items: [{ description: `Charge for line ${line.line_id}`, amount, date: TODAY, item_type: "Charge" }],
        status: "Overdue",
      });
      customer.bill_ids.push(billId);
      line.status = "Suspended";
      line.suspension_start_date = TODAY;
      const ended = args.get("contract_ended") ?? null;
      if (truthy(ended)) line.contract_end_date = "2025-01-31";
      return `Line ${line.line_id} suspended for unpaid bill ${pyStr(billId)}. Contract ended: ${pyStr(ended)}`;
    },
  ),
  envFunction("assert_data_refueling_amount", [{ name: "customer_id" }, { name: "line_id" }, { name: "expected_amount" }], (db, args) => {
    const line = argLine(db, args);
    return Number(abs(sub(line.data_refueling_gb, args.get("expected_amount")!))) < 1e-6;
  }),
  envFunction("assert_line_status", [{ name: "customer_id" }, { name: "line_id" }, { name: "expected_status" }], (db, args) => {
    return argLine(db, args).status === args.get("expected_status");
  }),
  envFunction("assert_overdue_bill_exists", [{ name: "customer_id" }, { name: "overdue_bill_id" }], (db, args) => {
    const id = args.get("overdue_bill_id")!;
    const customer = customerById(db, args.get("customer_id")!);
    if (!customer.bill_ids.some((billId) => pyEquals(billId, id))) throw valueError(`Overdue bill ${pyStr(id)} not found`);
    if (billById(db, id).status !== "Overdue") throw valueError(`Overdue bill ${pyStr(id)} is not overdue`);
    return true;
  }),
  envFunction("assert_no_overdue_bill", [{ name: "overdue_bill_id" }], (db, args) => {
    const bill = db.bills.find((candidate) => candidate.bill_id === args.get("overdue_bill_id"));
    return bill === undefined || bill.status === "Paid";
  }),
];

/** The telecom agent's 13 tools and the helpers tasks call. */
export const telecomTools = new Toolkit<DbRoot>("TelecomTools", tools, functions);
