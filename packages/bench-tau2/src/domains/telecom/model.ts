import { z } from "zod";
import { pyBool, pyDate, pyDateTime, pyDict, pyFloat, pyInt, pyOptional, pyStr, pyStrictModel } from "../../python/schema.js";

// The telecom databases, field for field and in upstream's declaration order. Every model
// forbids unknown fields (upstream's `BaseModelNoExtra`). The agent's side is lists of plans,
// customers, lines, bills and devices; the user's side is the phone and its surroundings.

export const Address = pyStrictModel({ street: pyStr, city: pyStr, state: pyStr, zip_code: pyStr });

export const Plan = pyStrictModel({
  plan_id: pyStr,
  name: pyStr,
  data_limit_gb: pyFloat,
  price_per_month: pyFloat,
  data_refueling_price_per_gb: pyFloat,
});
export type Plan = z.infer<typeof Plan>;

export const Device = pyStrictModel({
  device_id: pyStr,
  device_type: z.enum(["phone", "router", "tablet", "watch", "other"]),
  model: pyStr,
  imei: pyOptional(pyStr),
  is_esim_capable: pyBool,
  activated: pyBool.default(false),
  activation_date: pyOptional(pyDateTime),
  last_esim_transfer_date: pyOptional(pyDateTime),
});

export const LINE_STATUSES = ["Active", "Suspended", "Pending Activation", "Closed"] as const;

export const Line = pyStrictModel({
  line_id: pyStr,
  phone_number: pyStr,
  status: z.enum(LINE_STATUSES).default("Pending Activation"),
  plan_id: pyStr,
  device_id: pyOptional(pyStr),
  data_used_gb: pyFloat.default(0),
  data_refueling_gb: pyFloat.default(0),
  roaming_enabled: pyBool.default(false),
  contract_end_date: pyOptional(pyDate),
  last_plan_change_date: pyOptional(pyDate),
  last_sim_replacement_date: pyOptional(pyDate),
  suspension_start_date: pyOptional(pyDate),
});
export type Line = z.infer<typeof Line>;

export const LineItem = pyStrictModel({ description: pyStr, amount: pyFloat, date: pyDate, item_type: pyStr });

export const BILL_STATUSES = ["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"] as const;

export const Bill = pyStrictModel({
  bill_id: pyStr,
  customer_id: pyStr,
  period_start: pyDate,
  period_end: pyDate,
  issue_date: pyDate,
  total_due: pyFloat,
  due_date: pyDate,
  line_items: z.array(LineItem).default(() => []),
  status: z.enum(BILL_STATUSES).default("Draft"),
});
export type Bill = z.infer<typeof Bill>;

export const PaymentMethod = pyStrictModel({
  method_type: z.enum(["Credit Card", "Debit Card", "PayPal"]),
  account_number_last_4: pyStr,
  expiration_date: pyStr,
});

export const Customer = pyStrictModel({
  customer_id: pyStr,
  full_name: pyStr,
  date_of_birth: pyStr,
  email: pyStr,
  phone_number: pyStr,
  address: Address,
  account_status: z.enum(["Active", "Suspended", "Pending Verification", "Closed"]).default("Pending Verification"),
  payment_methods: z.array(PaymentMethod).default(() => []),
  line_ids: z.array(pyStr).default(() => []),
  bill_ids: z.array(pyStr).default(() => []),
  // Upstream's default is a date (2025-01-01), which pydantic does not validate into a datetime.
  created_at: pyDateTime.default("2025-01-01"),
  last_extension_date: pyOptional(pyDate),
  goodwill_credit_used_this_year: pyFloat.default(0),
});
export type Customer = z.infer<typeof Customer>;

export const TelecomDb = pyStrictModel({
  plans: z.array(Plan).default(() => []),
  customers: z.array(Customer).default(() => []),
  lines: z.array(Line).default(() => []),
  bills: z.array(Bill).default(() => []),
  devices: z.array(Device).default(() => []),
});
export type TelecomDb = z.infer<typeof TelecomDb>;

// --- the user's side ----------------------------------------------------------------------

export const SIGNAL_STRENGTHS = ["none", "poor", "fair", "good", "excellent"] as const;
export type SignalStrength = (typeof SIGNAL_STRENGTHS)[number];
export const NETWORK_TECHNOLOGIES = ["none", "2G", "3G", "4G", "5G"] as const;
export type NetworkTechnology = (typeof NETWORK_TECHNOLOGIES)[number];
export const NETWORK_MODES = ["4g_5g_preferred", "4g_only", "3g_only", "2g_only"] as const;
export const PERFORMANCE_LEVELS = ["unknown", "poor", "fair", "good", "excellent"] as const;

const signal = z.enum(SIGNAL_STRENGTHS);
const technology = z.enum(NETWORK_TECHNOLOGIES);

export const ApnSettings = pyStrictModel({
  apn_name: z.enum(["internet", "broken"]).default("internet"),
  reset_at_reboot: pyBool.default(false),
  mms_apn: pyOptional(pyStr).default("mms"),
  mmsc_url: pyOptional(pyStr).default("http://mms.carrier.com/mms/wapenc"),
  mms_proxy: pyOptional(pyStr),
  mms_port: pyOptional(pyInt),
});

export const VpnDetails = pyStrictModel({
  server_address: pyOptional(pyStr),
  protocol: pyOptional(pyStr),
  server_performance: z.enum(PERFORMANCE_LEVELS).default("unknown"),
});

export const AppPermissions = pyStrictModel({
  sms: pyBool.default(false),
  storage: pyBool.default(false),
  phone: pyBool.default(false),
  network: pyBool.default(false),
});

export const AppStatus = pyStrictModel({
  app_name: pyStr,
  permissions: AppPermissions.default(() => ({ sms: false, storage: false, phone: false, network: false })),
});

/** Upstream's default apps: messaging (sms, storage, phone) and browser (network, storage). */
export function defaultApps(): Map<string, z.infer<typeof AppStatus>> {
  return new Map([
    ["messaging", { app_name: "messaging", permissions: { sms: true, storage: true, phone: true, network: false } }],
    ["browser", { app_name: "browser", permissions: { sms: false, storage: true, phone: false, network: true } }],
  ]);
}

export const Phone = pyStrictModel({
  sim_card_status: z.enum(["active", "missing", "locked_pin", "locked_puk"]).default("active"),
  sim_card_missing: pyBool.default(false),
  airplane_mode: pyBool.default(false),
  network_signal_strength: signal.default("good"),
  network_technology_connected: technology.default("5G"),
  network_connection_status: z.enum(["connected", "searching", "no_service", "emergency_only"]).default("connected"),
  battery_level: pyInt.default(80n),
  data_enabled: pyBool.default(true),
  roaming_enabled: pyBool.default(false),
  network_mode_preference: z.enum(NETWORK_MODES).default("4g_5g_preferred"),
  active_apn_settings: ApnSettings.default(() => ApnSettings.parse({})),
  wifi_enabled: pyBool.default(false),
  wifi_connected: pyBool.default(false),
  wifi_ssid: pyOptional(pyStr),
  wifi_signal_strength: signal.default("none"),
  wifi_calling_enabled: pyBool.default(false),
  wifi_calling_mms_over_wifi: pyBool.default(false),
  data_saver_mode: pyBool.default(false),
  vpn_enabled_setting: pyBool.default(false),
  vpn_connected: pyBool.default(false),
  vpn_details: pyOptional(VpnDetails),
  app_statuses: pyDict(AppStatus).default(defaultApps),
});
export type Phone = z.infer<typeof Phone>;

export const PaymentRequest = pyStrictModel({ bill_id: pyStr, amount_due: pyFloat, paid: pyBool.default(false) });

/** Upstream's default signal where the user is: poor 2G, fair 3G, good 4G, excellent 5G. */
export function defaultSignal(): Map<NetworkTechnology, SignalStrength> {
  return new Map([
    ["2G", "poor"],
    ["3G", "fair"],
    ["4G", "good"],
    ["5G", "excellent"],
  ]);
}

export const Surroundings = pyStrictModel({
  name: pyOptional(pyStr),
  phone_number: pyOptional(pyStr),
  is_abroad: pyBool.default(false),
  roaming_allowed: pyBool.default(false),
  signal_strength: z.map(technology, signal).default(defaultSignal),
  mobile_data_usage_exceeded: pyBool.default(false),
  line_active: pyBool.default(true),
  payment_request: pyOptional(PaymentRequest),
});
export type Surroundings = z.infer<typeof Surroundings>;

export const TelecomUserDb = pyStrictModel({
  device: Phone.default(() => Phone.parse({})),
  surroundings: Surroundings.default(() => Surroundings.parse({})),
});
export type TelecomUserDb = z.infer<typeof TelecomUserDb>;
