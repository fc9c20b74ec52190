import type { Database, DbRoot } from "../../database.js";
import { billById, billsAwaitingPayment, customerByPhone, lineByPhone, planById, telecomDb } from "./tools.js";
import { userState } from "./user-tools.js";

/**
 * Upstream's `TelecomEnvironment.sync_tools`, run after every tool call that returns, every
 * initialisation action and assertion: once the user has a phone number, the phone learns
 * whether its line is active, may roam and is over its data allowance; a paid payment request
 * marks its bill paid; then the customer's first bill awaiting payment becomes the request.
 */
export function syncTelecom(agent: Database<DbRoot>, user: Database<DbRoot>): void {
  const { surroundings } = userState(user);
  const phone = surroundings.phone_number;
  if (phone === null) return;
  const db = telecomDb(agent);
  const line = lineByPhone(db, phone);
  surroundings.line_active = line.status === "Active";
  surroundings.roaming_allowed = line.roaming_enabled;
  const plan = planById(db, line.plan_id);
  surroundings.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb;
  if (surroundings.payment_request?.paid === true) {
    billById(db, surroundings.payment_request.bill_id).status = "Paid";
    surroundings.payment_request = null;
  }
  if (surroundings.payment_request === null) {
    const bill = billsAwaitingPayment(db, customerByPhone(db, phone))[0];
    if (bill !== undefined) surroundings.payment_request = { bill_id: bill.bill_id, amount_due: bill.total_due, paid: false };
  }
}
