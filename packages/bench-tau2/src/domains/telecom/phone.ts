import { formatFixed, roundFloat } from "@envace/python-text";
import type { Phone, SignalStrength, Surroundings } from "./model.js";

// The simulated phone of the telecom domain: what the user's tools read and change, with
// upstream's rules (`TelecomUserTools`), kept apart from the tool plumbing.

export interface UserState {
  device: Phone;
  surroundings: Surroundings;
}

/** `simulate_network_search`: what the phone connects to after a change. */
export function simulateNetworkSearch(state: UserState): void {
  const { device, surroundings } = state;
  const noService = (): void => {
    device.network_connection_status = "no_service";
    device.network_technology_connected = "none";
    device.network_signal_strength = "none";
  };
  if (simStatus(device) === "active") {
    device.network_connection_status = "connected";
    const signal = (tech: "2G" | "3G" | "4G" | "5G"): SignalStrength => surroundings.signal_strength.get(tech) ?? "none";
    const connect = (tech: "2G" | "3G" | "4G" | "5G", strength = signal(tech)): void => {
      device.network_technology_connected = tech;
      device.network_signal_strength = strength;
    };
    switch (device.network_mode_preference) {
      case "4g_5g_preferred":
        if (signal("5G") === "none") connect("4G");
        else connect("5G");
        break;
      case "4g_only":
        connect("4G");
        break;
      case "3g_only":
        connect("3G");
        break;
      case "2g_only":
        connect("2G");
        break;
      default:
        connect("4G");
    }
  } else {
    noService();
  }
  if (device.airplane_mode || device.active_apn_settings.apn_name === "broken" || !surroundings.line_active) noService();
}

/** `_check_sim_status`: a missing card reads as missing whatever its status. */
export function simStatus(device: Phone): Phone["sim_card_status"] {
  return device.sim_card_missing ? "missing" : device.sim_card_status;
}

const SIGNAL_ICONS: Record<string, string> = {
  none: "📵 No Signal",
  poor: "📶¹ Poor",
  fair: "📶² Fair",
  good: "📶³ Good",
  excellent: "📶⁴ Excellent",
};

/** `_check_status_bar`: the indicators joined by ` | `. */
export function statusBar(device: Phone): string {
  const indicators: string[] = [];
  if (device.airplane_mode) indicators.push("✈️ Airplane Mode");
  else {
    indicators.push(SIGNAL_ICONS[device.network_signal_strength] ?? "📵 No Signal");
    const connected = device.network_technology_connected !== "none";
    if (connected) indicators.push(device.network_technology_connected);
    if (device.data_enabled && connected) {
      indicators.push("📱 Data Enabled");
      if (device.data_saver_mode) indicators.push("🔽 Data Saver");
    } else {
      indicators.push("📵 Data Disabled");
    }
  }
  if (device.wifi_enabled && device.wifi_connected) {
    indicators.push(device.wifi_ssid !== null && device.wifi_ssid !== "" ? `📡 Connected to ${device.wifi_ssid}` : "📡 Enabled");
  }
  if (device.vpn_connected) indicators.push("🔒 VPN Connected");
  indicators.push(`🔋 ${device.battery_level}%`);
  return indicators.join(" | ");
}

/** A tool's answer followed by the status bar, as most device tools end. */
export function withStatusBar(device: Phone, text: string): string {
  return `${text}\nStatus Bar: ${statusBar(device)}`;
}

/** `_get_mobile_data_working`. */
export function mobileDataWorking(state: UserState): boolean {
  const { device, surroundings } = state;
  if (device.airplane_mode || device.network_signal_strength === "none") return false;
  if (device.network_connection_status === "no_service") return false;
  if (surroundings.is_abroad && (!device.roaming_enabled || !surroundings.roaming_allowed)) return false;
  if (!device.data_enabled) return false;
  return !surroundings.mobile_data_usage_exceeded;
}

const TECH_SPEEDS: Record<string, [number, number]> = {
  "2G": [0.1, 0.4],
  "3G": [1.0, 5.0],
  "4G": [10.0, 100.0],
  "5G": [50.0, 500.0],
  none: [0, 0],
};
const SIGNAL_FACTORS: Record<string, number> = { poor: 0.2, fair: 0.5, good: 0.8, excellent: 1.0, none: 0 };

/** `_run_speed_test`: the simulated speed (rounded to cents of a Mbps) and its description. */
export function speedTest(state: UserState): { speed: number | null; description: string } {
  if (!mobileDataWorking(state)) return { speed: null, description: "No Connection" };
  const { device } = state;
  let factor = device.vpn_connected && device.vpn_details !== null && device.vpn_details.server_performance === "poor" ? 0.1 : 1.0;
  if (device.data_saver_mode) factor *= 0.2;
  const [min, max] = TECH_SPEEDS[device.network_technology_connected] ?? [0, 0];
  const signal = SIGNAL_FACTORS[device.network_signal_strength] ?? 0;
  const speed = roundFloat(((min + max) / 2.0) * signal * factor, 2);
  const description = speed < 1 ? "Very Poor" : speed < 5 ? "Poor" : speed < 25 ? "Fair" : speed < 100 ? "Good" : "Excellent";
  return { speed, description };
}

const SPEED_ADVICE: Record<string, string> = {
  "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
  Poor: "Connection is slow. Web browsing may be sluggish, streaming difficult.",
  Fair: "Connection is okay for web browsing and some standard definition streaming.",
  Good: "Connection is good for most activities, including HD streaming.",
  Excellent: "Connection is very fast.",
};

/** `run_speed_test`'s text. */
export function speedTestText(state: UserState): string {
  const { speed, description } = speedTest(state);
  if (speed === null) return `Speed test failed: ${description || "Could not determine speed"}.`;
  return `Speed Test Result: ${formatFixed(speed, 2)} Mbps (${description}). ${SPEED_ADVICE[description] ?? ""}`;
}

/** `_can_send_mms`. */
export function canSendMms(state: UserState): boolean {
  const { device } = state;
  if (!mobileDataWorking(state)) return false;
  if (device.network_technology_connected === "2G") return false;
  if (device.wifi_calling_enabled && device.wifi_calling_mms_over_wifi) return false;
  if (device.active_apn_settings.mmsc_url === null) return false;
  const messaging = device.app_statuses.get("messaging");
  if (messaging === undefined) return false;
  return messaging.permissions.storage && messaging.permissions.sms;
}

/** `_toggle_airplane_mode`: radios off (and the VPN dropped) going in, a network search either way. */
export function toggleAirplaneMode(state: UserState): boolean {
  const { device } = state;
  const wasOn = device.airplane_mode;
  device.airplane_mode = !wasOn;
  if (wasOn) {
    device.network_connection_status = "searching";
    if (device.wifi_enabled) dropWifi(device);
  } else {
    dropWifi(device);
    if (device.vpn_connected) disconnectVpn(device);
  }
  simulateNetworkSearch(state);
  return device.airplane_mode;
}

function dropWifi(device: Phone): void {
  device.wifi_connected = false;
  device.wifi_ssid = null;
  device.wifi_signal_strength = "none";
}

/** `_toggle_wifi`: null while airplane mode is on. */
export function toggleWifi(device: Phone): boolean | null {
  if (device.airplane_mode) return null;
  device.wifi_enabled = !device.wifi_enabled;
  if (!device.wifi_enabled) dropWifi(device);
  return device.wifi_enabled;
}

/** `_disconnect_vpn`: false when there was no connection. */
export function disconnectVpn(device: Phone): boolean {
  if (!device.vpn_connected) return false;
  device.vpn_connected = false;
  device.vpn_details = null;
  return true;
}

/** `_reboot_device`. */
export function reboot(state: UserState, defaultApn: () => Phone["active_apn_settings"]): string {
  const { device } = state;
  const lines: string[] = [];
  if (device.active_apn_settings.reset_at_reboot) {
    lines.push("Resetting APN settings...");
    device.active_apn_settings = defaultApn();
  }
  lines.push("Restarting network services...");
  device.network_connection_status = "searching";
  simulateNetworkSearch(state);
  return lines.join("\n");
}
