import { attributeError, floatRepr, getKey, greaterThan, pyEquals, pyRepr, pyStr, pyTypeName, type PyValue, strRepr, valueError } from "@envace/python-text";
import type { Database, DbRoot } from "../../database.js";
import { bool, construct, int, optional, str, strEnum, type ModelSpec } from "../../python/pydantic.js";
import type { EnvFunction, ToolDefinition, ToolKind } from "../../toolkit.js";
import { Toolkit } from "../../toolkit.js";
import { param, STRING } from "../common.js";
import { ApnSettings, NETWORK_MODES, type Phone } from "./model.js";
import * as phone from "./phone.js";
import type { UserState } from "./phone.js";

// The telecom user's tools: the simulated phone (`TelecomUserTools`). The tools the user
// simulator may call come first, then what initialisation actions and assertions call.

type AnyDb = Database<DbRoot>;

/** The user database as its two models; tools change them in place (each environment has its own copy). */
export function userState(db: AnyDb): UserState {
  return db.tables as unknown as UserState;
}

const on = (value: boolean): string => (value ? "ON" : "OFF");

function tool(
  name: string,
  kind: ToolKind,
  description: string,
  run: (state: UserState, args: ReadonlyMap<string, PyValue>) => PyValue,
  params: ToolDefinition<DbRoot>["params"] = [],
): ToolDefinition<DbRoot> {
  return { name, kind, description, params, run: (db, args) => run(userState(db), args) };
}

function fn(name: string, params: EnvFunction<DbRoot>["params"], run: (state: UserState, args: ReadonlyMap<string, PyValue>) => PyValue): EnvFunction<DbRoot> {
  return { name, params, run: (db, args) => run(userState(db), args) };
}

/** `toggle_x` tools: flip a setting and report it with the status bar. */
function toggle(name: string, label: string, description: string, flip: (state: UserState) => boolean): ToolDefinition<DbRoot> {
  return tool(name, "write", description, (state) => phone.withStatusBar(state.device, `${label} is now ${on(flip(state))}.`));
}

const flipData = (state: UserState): boolean => {
  state.device.data_enabled = !state.device.data_enabled;
  phone.simulateNetworkSearch(state);
  return state.device.data_enabled;
};
const flipRoaming = (state: UserState): boolean => {
  state.device.roaming_enabled = !state.device.roaming_enabled;
  phone.simulateNetworkSearch(state);
  return state.device.roaming_enabled;
};
const flipDataSaver = (state: UserState): boolean => (state.device.data_saver_mode = !state.device.data_saver_mode);
const flipWifiCalling = (state: UserState): boolean => (state.device.wifi_calling_enabled = !state.device.wifi_calling_enabled);

/** `turn_x_on` / `turn_x_off`: toggle, and toggle back when it landed on the other side. */
function turn(name: string, flip: (state: UserState) => boolean, want: boolean, text: string): EnvFunction<DbRoot> {
  return fn(name, [], (state) => {
    if (flip(state) !== want) flip(state);
    return text;
  });
}

const APN_SETTINGS: ModelSpec = {
  name: "APNSettings",
  fields: [
    { name: "apn_name", type: strEnum("internet", "broken"), default: "internet" },
    { name: "reset_at_reboot", type: bool, default: false },
    { name: "mms_apn", type: optional(str), default: "mms" },
    { name: "mmsc_url", type: optional(str), default: "http://mms.carrier.com/mms/wapenc" },
    { name: "mms_proxy", type: optional(str), default: null },
    { name: "mms_port", type: optional(int), default: null },
  ],
};

const defaultApn = (): Phone["active_apn_settings"] => ApnSettings.parse({});

function lower(value: PyValue): string {
  if (typeof value !== "string") throw attributeError(`'${pyTypeName(value)}' object has no attribute 'lower'`);
  return value.toLowerCase();
}

function grantedPermissions(permissions: Record<string, boolean>): string[] {
  return Object.entries(permissions)
    .filter(([, allowed]) => allowed)
    .map(([name]) => name.replaceAll("_", " ").toLowerCase());
}

// `VpnDetails.model_dump()` keeps the enum member, whose repr is what the user reads.
function vpnDetailsRepr(details: NonNullable<Phone["vpn_details"]>): string {
  const member = `<PerformanceLevel.${details.server_performance.toUpperCase()}: ${strRepr(details.server_performance)}>`;
  const text = (value: string | null): string => (value === null ? "None" : strRepr(value));
  return `{'server_address': ${text(details.server_address)}, 'protocol': ${text(details.protocol)}, 'server_performance': ${member}}`;
}

// Upstream's `connect_vpn` hands the phone one class-level `VpnDetails` object, the same one each
// time, and `break_vpn` degrades that object in place: a phone that reconnects after `break_vpn`
// reads `poor`. Here the object is shared within one environment (upstream shares it within the
// whole Python process; see the README).
const defaultVpnDetails = new WeakMap<UserState, NonNullable<Phone["vpn_details"]>>();

function connectVpn(state: UserState): boolean | null {
  if (state.device.vpn_connected) return null;
  state.device.vpn_connected = true;
  let details = defaultVpnDetails.get(state);
  if (details === undefined) {
    details = { server_address: "192.168.1.1", protocol: "OpenVPN", server_performance: "excellent" };
    defaultVpnDetails.set(state, details);
  }
  state.device.vpn_details = details;
  return true;
}

const APP_NAME = param("app_name", STRING, "The app's name, such as messaging or browser.");

/** `check_app_*`: a report on the permissions the app has, or upstream's text for an app the phone lacks. */
function appTool(name: string, description: string, report: (app: string, granted: string[]) => string): ToolDefinition<DbRoot> {
  const run = ({ device }: UserState, args: ReadonlyMap<string, PyValue>): string => {
    const appName = args.get("app_name")!;
    const app = getKey(device.app_statuses, appName);
    if (app === undefined) return `App '${pyStr(appName)}' not found on this phone.`;
    return report(pyStr(appName), grantedPermissions(app.permissions));
  };
  return tool(name, "read", description, run, [APP_NAME]);
}

const userTools: ToolDefinition<DbRoot>[] = [
  tool(
    "check_status_bar",
    "read",
    "Show what the phone's status bar displays: signal, network type, data, Wi-Fi, VPN and battery.",
    (state) => `Status Bar: ${phone.statusBar(state.device)}`,
  ),
  tool(
    "check_network_status",
    "read",
    "Show the phone's network status: airplane mode, SIM, cellular connection, mobile data, roaming and Wi-Fi.",
    ({ device }) => {
      const lines = [
        `Airplane Mode: ${on(device.airplane_mode)}`,
        `SIM Card Status: ${phone.simStatus(device)}`,
        `Cellular Connection: ${device.network_connection_status}`,
        `Cellular Signal: ${device.network_signal_strength}`,
        `Cellular Network Type: ${device.network_technology_connected}`,
        `Mobile Data Enabled: ${device.data_enabled ? "Yes" : "No"}`,
        `Data Roaming Enabled: ${device.roaming_enabled ? "Yes" : "No"}`,
        `Wi-Fi Radio: ${on(device.wifi_enabled)}`,
        `Wi-Fi Connected: ${device.wifi_connected ? "Yes" : "No"}`,
      ];
      if (device.wifi_connected) lines.push(`Connected Wi-Fi Network: ${device.wifi_ssid ?? "None"}`);
      return lines.join("\n");
    },
  ),
  tool(
    "check_network_mode_preference",
    "read",
    "Show the phone's preferred network mode.",
    ({ device }) => `Network Mode Preference: ${device.network_mode_preference}`,
  ),
  tool(
    "set_network_mode_preference",
    "write",
    "Set the phone's preferred network mode.",
    (state, args) => {
      const mode = args.get("mode")!;
      if (typeof mode === "string") {
        if (!(NETWORK_MODES as readonly string[]).includes(mode)) {
          return phone.withStatusBar(
            state.device,
            `Failed to set network mode: '${mode}' is not a valid option. Please use one of: ${NETWORK_MODES.join(", ")}`,
          );
        }
        state.device.network_mode_preference = mode as Phone["network_mode_preference"];
        phone.simulateNetworkSearch(state);
        return phone.withStatusBar(state.device, `Preferred Network Mode set to: ${mode}`);
      }
      // Upstream assigns anything that is not text unchecked, searches, then fails on `.value`.
      (state.device as unknown as Record<string, PyValue>).network_mode_preference = mode;
      phone.simulateNetworkSearch(state);
      throw attributeError(`'${pyTypeName(mode)}' object has no attribute 'value'`);
    },
    [
      param(
        "mode",
        { anyOf: [{ enum: [...NETWORK_MODES], type: "string" }, { type: "string" }] },
        "The network mode: 4g_5g_preferred, 4g_only, 3g_only or 2g_only.",
      ),
    ],
  ),
  tool("run_speed_test", "read", "Run a speed test of the phone's mobile data connection.", (state) => phone.speedTestText(state)),
  tool("toggle_airplane_mode", "write", "Turn airplane mode on or off (the opposite of its current state).", (state) =>
    phone.withStatusBar(state.device, `Airplane Mode is now ${on(phone.toggleAirplaneMode(state))}.`),
  ),
  tool("check_sim_status", "read", "Show whether the SIM card is active, missing or locked.", ({ device }) => {
    const texts: Record<string, string> = {
      active: "Your SIM card is active and working.",
      missing: "No SIM card detected in the phone.",
      locked_pin: "The SIM card is locked with a PIN code.",
      locked_puk: "The SIM card is locked with a PUK code.",
    };
    const status = phone.simStatus(device);
    return texts[status] ?? `Unknown SIM status: ${status}`;
  }),
  tool("reseat_sim_card", "write", "Take the SIM card out and put it back in.", (state) => {
    state.device.sim_card_missing = false;
    phone.simulateNetworkSearch(state);
    return phone.withStatusBar(state.device, "SIM card re-seated successfully.");
  }),
  toggle("toggle_data", "Mobile Data", "Turn mobile data on or off (the opposite of its current state).", flipData),
  toggle("toggle_roaming", "Data Roaming", "Turn data roaming on or off (the opposite of its current state).", flipRoaming),
  tool("check_data_restriction_status", "read", "Show whether Data Saver mode is on.", ({ device }) =>
    device.data_saver_mode ? "Data Saver mode is ON (limits data usage)." : "Data Saver mode is OFF.",
  ),
  toggle("toggle_data_saver_mode", "Data Saver Mode", "Turn Data Saver mode on or off (the opposite of its current state).", flipDataSaver),
  tool("check_apn_settings", "read", "Show the phone's APN settings.", ({ device }) => {
    const apn = device.active_apn_settings;
    const mmsc = apn.mmsc_url === null || apn.mmsc_url === "" ? "Not Set" : apn.mmsc_url;
    return `Current APN Name: ${apn.apn_name}\nMMSC URL (for picture messages): ${mmsc}\n(These are technical settings, usually best left unchanged.)`;
  }),
  tool(
    "set_apn_settings",
    "write",
    "Replace the phone's APN settings.",
    (state, args) => {
      const value = args.get("apn_settings") ?? null;
      const settings = value instanceof Map ? construct(APN_SETTINGS, value) : value;
      if (typeof settings !== "object" || settings === null || Array.isArray(settings)) {
        throw attributeError(`'${pyTypeName(settings)}' object has no attribute 'apn_name'`);
      }
      state.device.active_apn_settings = settings as unknown as Phone["active_apn_settings"];
      const text = `APN settings set to: ${pyStr((settings as Record<string, PyValue>).apn_name ?? null)}`;
      phone.simulateNetworkSearch(state);
      return phone.withStatusBar(state.device, text);
    },
    [
      param(
        "apn_settings",
        { additionalProperties: true, type: "object" },
        "The APN settings: apn_name, reset_at_reboot, mms_apn, mmsc_url, mms_proxy, mms_port.",
      ),
    ],
  ),
  tool("reset_apn_settings", "write", "Reset the APN settings to the defaults (at the next reboot).", (state) => {
    state.device.active_apn_settings.reset_at_reboot = true;
    phone.simulateNetworkSearch(state);
    return phone.withStatusBar(state.device, "APN settings will reset at reboot.");
  }),
  tool("check_wifi_status", "read", "Show whether Wi-Fi is on and connected.", ({ device }) => {
    if (!device.wifi_enabled) return "Wi-Fi is turned OFF.";
    if (device.wifi_connected) return `Wi-Fi is ON and connected to '${device.wifi_ssid ?? "None"}'. Signal strength: ${device.wifi_signal_strength}.`;
    return "Wi-Fi is ON but not connected to any network.";
  }),
  tool("toggle_wifi", "write", "Turn Wi-Fi on or off (the opposite of its current state).", ({ device }) => {
    const state = phone.toggleWifi(device);
    if (state === null) return phone.withStatusBar(device, "Cannot change Wi-Fi settings while Airplane Mode is ON.");
    return phone.withStatusBar(device, `Wi-Fi is now ${on(state)}.`);
  }),
  tool(
    "check_wifi_calling_status",
    "read",
    "Show whether Wi-Fi Calling is on.",
    ({ device }) => `Wi-Fi Calling is currently turned ${on(device.wifi_calling_enabled)}.`,
  ),
  toggle("toggle_wifi_calling", "Wi-Fi Calling", "Turn Wi-Fi Calling on or off (the opposite of its current state).", flipWifiCalling),
  tool("check_vpn_status", "read", "Show whether a VPN is on and connected.", ({ device }) => {
    if (device.vpn_connected) {
      return device.vpn_details === null
        ? "VPN is ON and connected (no specific details available)."
        : `VPN is ON and connected. Details: ${vpnDetailsRepr(device.vpn_details)}`;
    }
    return device.vpn_enabled_setting ? "VPN is turned ON in settings, but currently not connected." : "VPN is turned OFF.";
  }),
  tool("connect_vpn", "write", "Connect to the VPN.", (state) =>
    connectVpn(state) === null ? "VPN already connected." : phone.withStatusBar(state.device, "VPN connected successfully."),
  ),
  tool("disconnect_vpn", "write", "Disconnect the VPN.", ({ device }) =>
    phone.withStatusBar(device, phone.disconnectVpn(device) ? "VPN disconnected successfully." : "No active VPN connection to disconnect."),
  ),
  tool(
    "check_installed_apps",
    "read",
    "List the apps installed on the phone.",
    ({ device }) => `The following apps are installed on the phone: ${[...device.app_statuses.keys()].join(", ")}`,
  ),
  appTool("check_app_status", "Show an app's status and the permissions it has.", (name, granted) => {
    const lines = [`Status for App: ${name}`];
    if (granted.length === 0) lines.push(" - Permissions: None granted.");
    else lines.push(" - Permissions Granted:", ...granted.map((permission) => `   - ${permission}`));
    return lines.join("\n");
  }),
  appTool("check_app_permissions", "Show the permissions an app has.", (name, granted) => {
    if (granted.length === 0) return `App '${name}' currently has no permissions granted.`;
    return `App '${name}' has permission for: ${granted.join(", ")}.`;
  }),
  tool(
    "grant_app_permission",
    "write",
    "Grant an app a permission (sms, storage, phone or network).",
    ({ device }, args) => {
      const name = args.get("app_name")!;
      const app = getKey(device.app_statuses, name);
      const permission = lower(args.get("permission")!);
      let text: string;
      if (app === undefined) text = `Error. App '${pyStr(name)}' not found. Cannot grant permission.`;
      else if (!(permission in app.permissions)) {
        const available = `[${Object.keys(app.permissions).map(strRepr).join(", ")}]`;
        text = `Error. Permission '${permission}' not tracked for app '${pyStr(name)}', available permissions: ${available}`;
      } else {
        (app.permissions as Record<string, boolean>)[permission] = true;
        text = `Success. Permission '${permission}' granted to app '${pyStr(name)}'.`;
      }
      return phone.withStatusBar(device, text);
    },
    [APP_NAME, param("permission", STRING, "The permission: sms, storage, phone or network.")],
  ),
  tool("can_send_mms", "read", "Check whether the messaging app can send MMS (picture) messages.", (state) =>
    phone.canSendMms(state) ? "Your messaging app can send MMS messages." : "Your messaging app cannot send MMS messages.",
  ),
  tool("reboot_device", "write", "Restart the phone.", (state) => phone.withStatusBar(state.device, phone.reboot(state, defaultApn))),
  tool("check_payment_request", "read", "Show the payment request the agent sent, if any.", ({ surroundings }) => {
    const request = surroundings.payment_request;
    if (request === null) return "No payment request has been made.";
    return `You have a payment request for bill ${request.bill_id} of ${floatRepr(request.amount_due)} USD.`;
  }),
  tool("make_payment", "write", "Pay the bill of the pending payment request.", ({ surroundings }) => {
    const request = surroundings.payment_request;
    if (request === null) return "You do not have a payment request.";
    request.paid = true;
    return `Payment of ${floatRepr(request.amount_due)} USD has been made for bill ${request.bill_id}.`;
  }),
];

const expected = { name: "expected_status" };
const NETWORK_STATUSES: readonly string[] = ["connected", "searching", "no_service", "emergency_only"];

const functions: EnvFunction<DbRoot>[] = [
  fn("set_user_info", [{ name: "name" }, { name: "phone_number" }], ({ surroundings }, args) => {
    surroundings.name = args.get("name") as string;
    surroundings.phone_number = args.get("phone_number") as string;
    return null;
  }),
  fn("set_user_location", [{ name: "abroad" }], ({ surroundings }, args) => {
    surroundings.is_abroad = args.get("abroad") as boolean;
    return null;
  }),
  fn("simulate_network_search", [], (state) => {
    phone.simulateNetworkSearch(state);
    return null;
  }),
  turn("turn_airplane_mode_on", phone.toggleAirplaneMode, true, "Airplane Mode is now ON."),
  turn("turn_airplane_mode_off", phone.toggleAirplaneMode, false, "Airplane Mode is now OFF."),
  fn("unseat_sim_card", [], (state) => {
    state.device.sim_card_missing = true;
    phone.simulateNetworkSearch(state);
    return "SIM card un-seated successfully.";
  }),
  fn("lock_sim_card", [{ name: "mode" }], (state, args) => {
    const mode = args.get("mode")!;
    if (mode === "pin") state.device.sim_card_status = "locked_pin";
    else if (mode === "puk") state.device.sim_card_status = "locked_puk";
    phone.simulateNetworkSearch(state);
    return `SIM card locked successfully in ${pyStr(mode)} mode.`;
  }),
  fn("turn_data_on", [], ({ device }) => {
    device.data_enabled = true;
    return "Data connection restored.";
  }),
  turn("turn_data_off", flipData, false, "Data connection broken."),
  turn("turn_roaming_on", flipRoaming, true, "Data Roaming is now ON."),
  turn("turn_roaming_off", flipRoaming, false, "Data Roaming is now OFF."),
  turn("turn_data_saver_mode_on", flipDataSaver, true, "Data Saver Mode is now ON."),
  turn("turn_data_saver_mode_off", flipDataSaver, false, "Data Saver Mode is now OFF."),
  fn("break_apn_settings", [], (state) => {
    state.device.active_apn_settings.apn_name = "broken";
    phone.simulateNetworkSearch(state);
    return "APN settings broken. Please call reset_apn_settings() to fix.";
  }),
  fn("break_apn_mms_setting", [], ({ device }) => {
    device.active_apn_settings.mmsc_url = null;
    return "APN MMS setting broken. Please call reset_apn_settings() to fix.";
  }),
  fn("break_vpn", [], (state) => {
    connectVpn(state);
    const details = state.device.vpn_details;
    if (details === null) throw attributeError("'NoneType' object has no attribute 'server_performance'");
    details.server_performance = "poor";
    return "VPN connection broken.";
  }),
  fn("set_wifi_calling", [{ name: "enabled" }, { name: "mms_over_wifi", default: null }], ({ device }, args) => {
    const enabled = args.get("enabled")!;
    if (!pyEquals(device.wifi_calling_enabled, enabled)) device.wifi_calling_enabled = !device.wifi_calling_enabled;
    let text = `Wi-Fi Calling is now ${on(enabled === true)}.`;
    const mms = args.get("mms_over_wifi") ?? null;
    if (mms !== null) {
      device.wifi_calling_mms_over_wifi = mms as boolean;
      text += `\nMMS over Wi-Fi is now ${on(mms === true)}.`;
    }
    return text;
  }),
  fn("remove_app_permission", [{ name: "app_name" }, { name: "permission" }], ({ device }, args) => {
    const name = pyStr(args.get("app_name")!);
    const app = getKey(device.app_statuses, args.get("app_name")!);
    const permission = lower(args.get("permission")!);
    if (app === undefined) return [false, `App '${name}' not found. Cannot remove permission.`];
    if (!(permission in app.permissions)) return [false, `Permission '${permission}' not tracked for app '${name}'.`];
    (app.permissions as Record<string, boolean>)[permission] = false;
    return [true, `Permission '${permission}' removed from app '${name}'.`];
  }),
  fn("assert_airplane_mode_status", [expected], ({ device }, args) => pyEquals(device.airplane_mode, args.get("expected_status")!)),
  fn("assert_service_status", [expected], ({ device }, args) => {
    const status = args.get("expected_status")!;
    if (typeof status !== "string" || !NETWORK_STATUSES.includes(status)) throw valueError(`${pyRepr(status)} is not a valid NetworkStatus`);
    return device.network_connection_status === status;
  }),
  fn("assert_mobile_data_status", [expected], (state, args) => pyEquals(phone.mobileDataWorking(state), args.get("expected_status")!)),
  fn("assert_mobile_roaming_status", [expected], ({ device }, args) => pyEquals(device.roaming_enabled, args.get("expected_status")!)),
  fn("assert_mobile_data_saver_mode_status", [expected], ({ device }, args) => pyEquals(device.data_saver_mode, args.get("expected_status")!)),
  fn("assert_internet_speed", [{ name: "expected_speed" }, { name: "expected_desc", default: null }], (state, args) => {
    const { speed, description } = phone.speedTest(state);
    const fast = !greaterThan(args.get("expected_speed")!, speed ?? 0.0);
    const desc = args.get("expected_desc") ?? null;
    if (desc === null) return fast;
    return fast && description.toLowerCase() === lower(desc);
  }),
  fn("assert_internet_not_excellent", [], (state) => phone.speedTest(state).description.toLowerCase() !== "excellent"),
  fn("assert_can_send_mms", [expected], (state, args) => pyEquals(phone.canSendMms(state), args.get("expected_status")!)),
  fn("assert_mobile_data_usage_exceeded", [expected], ({ surroundings }, args) =>
    pyEquals(surroundings.mobile_data_usage_exceeded, args.get("expected_status")!),
  ),
];

/** The telecom user's phone: 30 tools and the helpers tasks call. */
export const telecomUserTools = new Toolkit<DbRoot>("TelecomUserTools", userTools, functions);
