import type { JsonObject } from "@envace/protocol";
import {
  bindArguments,
  floatRepr,
  jsonStringUnicode,
  type PyDict,
  pyEquals,
  PyException,
  type PyParam,
  pyStr,
  type PyValue,
  roundFloat,
  valueError,
} from "@envace/python-text";
import type { VitaDb } from "./db.js";
import { partialRatio, ratio, rerank, roundScore, defaultProcess } from "./fuzz.js";
import { chinaHoliday, HOLIDAY_DATES } from "./holidays.js";
import { orderRepr, shopStr, storeStr, weatherRepr, type Order } from "./model.js";
import { checkTimeFormat, compare, epochSeconds, hasKey, pyAssert, radians, strptime, truthy } from "./python.js";

/** What a tool returns, as Python would: text, a float, or a pair of floats. */
export type ToolOutput = string | number | readonly number[];

/** One parameter: Python's binding (name, default) and the JSON Schema the agent sees. */
export interface VitaParam extends PyParam {
  readonly schema: JsonObject;
}

/** One upstream tool: its name, the class Python names in argument errors, and its behaviour. */
export interface VitaTool {
  readonly name: string;
  /** `ToolKitBase` for the tools every domain has, else the domain's toolkit class. */
  readonly owner: string;
  readonly description: string;
  readonly params: readonly VitaParam[];
  run(db: VitaDb, args: ReadonlyMap<string, PyValue>): ToolOutput;
}

/** A tool as a toolkit declares it; `toolkit` gives it the toolkit's owner. */
export type ToolSpec = Omit<VitaTool, "owner">;

/** One upstream toolkit class's tools. */
export function toolkit(owner: string, tools: readonly ToolSpec[]): readonly VitaTool[] {
  return tools.map((tool) => ({ ...tool, owner }));
}

/** What upstream's `Environment.get_response` puts in the tool message. */
export interface VitaResponse {
  readonly content: string;
  readonly error: boolean;
}

/**
 * Upstream's `get_response`: a tool's `AssertionError` is its plain answer; any other exception
 * is `"Error: " + str(e)` with `error: true`; a non-string result goes through `to_json_str`
 * (a float becomes `str(x)`, then JSON-encoded: quotes included).
 */
export function respond(tools: ReadonlyMap<string, VitaTool>, db: VitaDb, name: string, args: PyDict): VitaResponse {
  try {
    const tool = tools.get(name);
    if (tool === undefined) throw valueError(`Tool '${name}' not found.`);
    const bound = bindArguments(`${tool.owner}.${tool.name}`, tool.params, args);
    let output: ToolOutput;
    try {
      output = tool.run(db, bound);
    } catch (error) {
      if (error instanceof PyException && error.pyType === "AssertionError") return { content: error.text, error: false };
      throw error;
    }
    return { content: toJsonStr(output), error: false };
  } catch (error) {
    if (error instanceof PyException) return { content: `Error: ${error.text}`, error: true };
    throw error;
  }
}

function toJsonStr(output: ToolOutput): string {
  if (typeof output === "string") return output;
  if (typeof output === "number") return jsonStringUnicode(floatRepr(output));
  return `[${output.map((x) => jsonStringUnicode(floatRepr(x))).join(", ")}]`;
}

const NUMBER: JsonObject = { type: "number" };
const STRING: JsonObject = { type: "string" };
export const param = (name: string, schema: JsonObject, description: string, fallback?: PyValue): VitaParam => ({
  name,
  schema: { ...schema, description },
  ...(fallback === undefined ? {} : { default: fallback }),
});
export const str = (name: string, description: string, fallback?: PyValue): VitaParam => param(name, STRING, description, fallback);
export const num = (name: string, description: string, fallback?: PyValue): VitaParam => param(name, NUMBER, description, fallback);
export const strings = (name: string, description: string, fallback?: PyValue): VitaParam =>
  param(name, { type: "array", items: STRING }, description, fallback);

/** One bound argument (`None` when absent). */
export const arg = (args: ReadonlyMap<string, PyValue>, name: string): PyValue => args.get(name) ?? null;

/** Several bound arguments at once, in the order named. */
export function pick<const N extends readonly string[]>(args: ReadonlyMap<string, PyValue>, ...names: N): { [K in keyof N]: PyValue } {
  return names.map((name) => args.get(name) ?? null) as { [K in keyof N]: PyValue };
}

/** The check both order domains make first: a user id is given, and it is the task's user. */
export function checkUser(db: VitaDb, userId: PyValue): void {
  pyAssert(truthy(userId), "User ID cannot be empty");
  pyAssert(userId === db.user_id, "User ID does not match");
}

/** An order of one domain's type; `kind` names it in the error, e.g. "a delivery order". */
export function getOrder(db: VitaDb, orderId: PyValue, type: Order["order_type"], kind: string): Order {
  const orders = db.orders ?? new Map<string, Order>();
  if (!hasKey(orders, orderId)) throw valueError(`Order ${pyStr(orderId)} not found`);
  const order = orders.get(orderId)!;
  if (order.order_type !== type) throw valueError(`Order ${orderId} is not ${kind}`);
  return order;
}

/** A tool's answer after storing a record back: `done`, or the store's own "… not found". */
export const answer = (stored: string, done: string): string => (stored === "done" ? done : stored);

/** A new order into the database; its repr, or upstream's answer when the id is taken. */
export function addOrder(db: VitaDb, order: Order): string {
  const orders = db.orders!;
  if (orders.has(order.order_id)) return "Order already exists";
  orders.set(order.order_id, order);
  return orderRepr(order);
}

/** `longitude_latitude_to_distance`: haversine on a 6,371,000 m sphere, rounded to the metre. */
export function distance(lon1: PyValue, lat1: PyValue, lon2: PyValue, lat2: PyValue): number {
  if (pyEquals(lon1, lon2) && pyEquals(lat1, lat2)) return 0;
  const [x1, y1, x2, y2] = [radians(lon1), radians(lat1), radians(lon2), radians(lat2)];
  const a = Math.sin((y2 - y1) / 2) ** 2 + Math.cos(y1) * Math.cos(y2) * Math.sin((x2 - x1) / 2) ** 2;
  return roundFloat(6371000 * (2 * Math.asin(Math.sqrt(a))), 0);
}

function text(value: PyValue, what: string): string {
  if (typeof value !== "string") throw new PyException("TypeError", `${what}: expected str, got ${pyStr(value)}`);
  return value;
}

/** `address_to_longitude_latitude`: the best fuzzy match among every address registered so far. */
export function resolveAddress(db: VitaDb, address: PyValue): [number, number] {
  const query = text(address, "address");
  const docs = new Map([...db.registry.locations.keys()].map((a) => [a, a]));
  const best = rerank(query, docs)[0];
  if (best === undefined) throw new PyException("IndexError", "list index out of range");
  if (best.score < 30 || roundScore(ratio(query, best.id)) < 20) throw valueError(`Longitude and latitude not found for address ${query}`);
  const location = db.registry.locations.get(best.id)!;
  return [location.longitude, location.latitude];
}

/** The tools every VitaBench domain has (`ToolKitBase`). */
export const GENERIC_TOOLS = toolkit("ToolKitBase", [
  {
    name: "longitude_latitude_to_distance",
    description: "Distance in metres between two points given by longitude and latitude.",
    params: [
      num("longitude1", "Longitude of the first point"),
      num("latitude1", "Latitude of the first point"),
      num("longitude2", "Longitude of the second point"),
      num("latitude2", "Latitude of the second point"),
    ],
    run: (_db, args) => distance(arg(args, "longitude1"), arg(args, "latitude1"), arg(args, "longitude2"), arg(args, "latitude2")),
  },
  {
    name: "weather",
    description: "Weather at an address between two dates (yyyy-mm-dd), inclusive.",
    params: [str("address", "The address to look up"), str("date_start", "Start date, yyyy-mm-dd"), str("date_end", "End date, yyyy-mm-dd")],
    run: (db, args) => {
      const [address, start, end] = [arg(args, "address"), arg(args, "date_start"), arg(args, "date_end")];
      pyAssert(checkTimeFormat(start, "%Y-%m-%d"), `Invalid date_start format. Expected yyyy-mm-dd, got: ${pyStr(start)}`);
      pyAssert(checkTimeFormat(end, "%Y-%m-%d"), `Invalid date_end format. Expected yyyy-mm-dd, got: ${pyStr(end)}`);
      if (db.weather === null) throw new PyException("TypeError", "'NoneType' object is not iterable");
      const best = rerank(text(address, "address"), new Map(db.weather.map((w) => [w.city, w.city])))[0];
      if (best === undefined) throw new PyException("IndexError", "list index out of range");
      if (best.score < 50) throw valueError(`Weather information not found for ${pyStr(address)}`);
      const from = epochSeconds(strptime(start, "%Y-%m-%d")!);
      const to = epochSeconds(strptime(end, "%Y-%m-%d")!);
      const days = db.weather.filter((w) => {
        if (w.city !== best.id) return false;
        const date = strptime(w.datetime, "%Y-%m-%d");
        if (date === undefined) throw valueError(`time data '${w.datetime}' does not match format '%Y-%m-%d'`);
        return from <= epochSeconds(date) && epochSeconds(date) <= to;
      });
      if (days.length === 0) return `No weather information found for ${best.id} between ${pyStr(start)} and ${pyStr(end)}`;
      return [...days]
        .sort((a, b) => (a.datetime < b.datetime ? -1 : a.datetime > b.datetime ? 1 : 0))
        .map(weatherRepr)
        .join("\n");
    },
  },
  {
    name: "address_to_longitude_latitude",
    description: "Longitude and latitude of an address.",
    params: [str("address", "The address to look up")],
    run: (db, args) => resolveAddress(db, arg(args, "address")),
  },
  {
    name: "get_date_holiday_info",
    description: "Whether a date (yyyy-mm-dd) is a Chinese holiday, and its name if so.",
    params: [str("date", "Date, yyyy-mm-dd")],
    run: (_db, args) => {
      const date = arg(args, "date");
      pyAssert(checkTimeFormat(date, "%Y-%m-%d"), `Date format error, should be yyyy-mm-dd, actual: ${pyStr(date)}`);
      const parsed = strptime(date, "%Y-%m-%d")!;
      return chinaHoliday(parsed.year, parsed.month, parsed.day) ?? `Date ${pyStr(date)} is not a holiday`;
    },
  },
  {
    name: "get_holiday_date",
    description: "The date of a named holiday in a year (2023–2025).",
    params: [str("year", "The year, e.g. 2025"), str("holiday_name", "The holiday's name")],
    run: (_db, args) => {
      const [year, name] = [arg(args, "year"), arg(args, "holiday_name")];
      if (Array.isArray(year) || year instanceof Map) throw new PyException("TypeError", `unhashable type: '${Array.isArray(year) ? "list" : "dict"}'`);
      const table = typeof year === "string" && Object.hasOwn(HOLIDAY_DATES, year) ? HOLIDAY_DATES[year] : undefined;
      if (table === undefined) return `Holiday data for year ${pyStr(year)} not found`;
      const query = defaultProcess(text(name, "holiday_name"));
      const scored = table.map(([n, date], index) => ({ date, index, raw: partialRatio(query, defaultProcess(n)) }));
      scored.sort((a, b) => b.raw - a.raw || a.index - b.index);
      const best = scored[0]!;
      if (roundScore(best.raw) >= 80) return best.date;
      return `Holiday named '${pyStr(name)}' not found in year ${pyStr(year)}`;
    },
  },
  {
    name: "get_user_historical_behaviors",
    description: "The user's historical behaviours.",
    params: [],
    run: (db) => pyStr(db.user_historical_behaviors),
  },
  {
    name: "get_user_all_orders",
    description: "Every order of the user.",
    params: [],
    run: (db) => (db.orders === null ? "User currently has no order information" : [...db.orders.values()].map(orderRepr).join("\n")),
  },
  {
    name: "get_nearby",
    description: "Stores or shops within a range (metres) of a point.",
    params: [num("longitude", "Longitude"), num("latitude", "Latitude"), num("range", "Range in metres")],
    run: (db, args) => {
      const [lon, lat, range] = [arg(args, "longitude"), arg(args, "latitude"), arg(args, "range")];
      const found: string[] = [];
      const within = (location: { longitude: number; latitude: number }): boolean =>
        compare(distance(lon, lat, location.longitude, location.latitude), "<=", range);
      if (db.domain === "delivery") for (const store of db.stores.values()) if (within(store.location)) found.push(storeStr(store));
      if (db.domain === "instore") for (const shop of db.shops.values()) if (within(shop.location)) found.push(shopStr(shop));
      return found.length === 0 ? "No search results found" : found.join("\n");
    },
  },
]);
