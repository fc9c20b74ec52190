import { createHash } from "node:crypto";
import { floatRepr, pyDumps, type PyModel, type PyValue } from "@envace/python-text";
import { FieldError, Fields, readList } from "./fields.js";
import {
  dumpOrder,
  dumpShop,
  dumpStore,
  readBook,
  readEntries,
  readLocation,
  readOrder,
  readReservation,
  readShop,
  readStore,
  readWeather,
  Registry,
  type BookInfo,
  type Location,
  type Order,
  type ReservationInfo,
  type Shop,
  type Store,
  type Weather,
} from "./model.js";
import { epochSeconds, strptime } from "./python.js";

/** The domains ported so far. */
export const VITA_DOMAINS = ["delivery", "instore"] as const;
export type VitaDomain = (typeof VITA_DOMAINS)[number];

/**
 * A task's database as upstream's `DeliveryDB` / `InStoreDB` holds it, with the registries its
 * construction filled. Tools change it in place; `hash()` is upstream's `get_db_hash()`.
 */
export class VitaDb {
  /** New ids assigned so far: the k-th uses the clock `environment.time + k` seconds. */
  private assigned = 0;

  constructor(
    readonly domain: VitaDomain,
    readonly registry: Registry,
    readonly time: string | null,
    readonly user_id: string | null,
    readonly weather: Weather[] | null,
    readonly location: Location[] | null,
    readonly user_historical_behaviors: PyValue,
    readonly orders: Map<string, Order> | null,
    readonly stores: Map<string, Store>,
    readonly shops: Map<string, Shop>,
    readonly books: Map<string, BookInfo>,
    readonly reservations: Map<string, ReservationInfo>,
  ) {}

  /** `model_dump()`: every field in declaration order (the hash sorts keys anyway). */
  dump(): PyModel {
    const base: PyModel = {
      time: this.time,
      user_id: this.user_id,
      weather: this.weather === null ? null : this.weather.map((w) => ({ ...w, temperature: [...w.temperature] })),
      location: this.location === null ? null : this.location.map((l) => ({ ...l })),
      user_historical_behaviors: this.user_historical_behaviors,
      orders: this.orders === null ? null : mapValues(this.orders, dumpOrder),
    };
    if (this.domain === "delivery") return { ...base, stores: mapValues(this.stores, dumpStore) };
    return {
      ...base,
      shops: mapValues(this.shops, dumpShop),
      books: mapValues(this.books, (book) => ({ ...book })),
      reservations: mapValues(this.reservations, (reservation) => ({ ...reservation })),
    };
  }

  /** sha256 of `json.dumps(model_dump(), sort_keys=True, default=str, ensure_ascii=False)`. */
  hash(): string {
    return createHash("sha256")
      .update(pyDumps(this.dump(), { sortKeys: true, ensureAscii: false }), "utf8")
      .digest("hex");
  }

  /** "Now" for the tools: the task's `environment.time`; it never advances. */
  now(): string {
    return this.time ?? "";
  }

  /**
   * `DB.assign_order_id`: `prefix + sha256(input + str(timestamp))[:10]`, the timestamp pinned to
   * the task's time (as UTC) plus one second per id already assigned.
   */
  assignId(scenario: "delivery" | "instore" | "instore_book" | "instore_reservation", userId: string): string {
    const input = { delivery: `#DELIVERY#${userId}`, instore: "#INSTORE#", instore_book: "#INSTORE_BOOK#", instore_reservation: "#INSTORE_RESV#" }[scenario];
    const parsed = strptime(this.now(), "%Y-%m-%d %H:%M:%S");
    const timestamp = (parsed === undefined ? 0 : epochSeconds(parsed)) + this.assigned++;
    const digest = createHash("sha256")
      .update(input + floatRepr(timestamp), "utf8")
      .digest("hex");
    return (scenario === "delivery" ? "OT" : "OI") + digest.slice(0, 10);
  }
}

function mapValues<T>(map: ReadonlyMap<string, T>, dump: (value: T) => PyValue): Map<string, PyValue> {
  return new Map([...map].map(([key, value]) => [key, dump(value)]));
}

const DOMAIN_KEYS: Readonly<Record<VitaDomain, readonly string[]>> = {
  delivery: ["stores", "orders", "time", "user_id", "weather", "location", "user_historical_behaviors"],
  instore: ["shops", "orders", "reservations", "books", "time", "user_id", "weather", "location", "user_historical_behaviors"],
};

/**
 * Build the database from a task's `environment` as upstream's `get_environment` does: keys of
 * other domains dropped, absent tables empty, then pydantic validation in field-declaration
 * order (which is the order models register their locations and products in).
 * Throws `FieldError` with the path under `environment` of a value upstream would reject.
 */
export function buildDb(domain: VitaDomain, environment: PyValue): VitaDb {
  const source = Fields.of(environment, "environment");
  const fields = new Fields(new Map([...DOMAIN_KEYS[domain]].filter((key) => source.has(key)).map((key) => [key, source.raw(key)!])), "environment");
  const registry = new Registry();
  const time = fields.optStr("time", null);
  const user_id = fields.optStr("user_id", null);
  const weatherRaw = fields.raw("weather");
  const weather =
    weatherRaw === undefined || weatherRaw === null
      ? null
      : readList(weatherRaw, fields.at("weather")).map((item, i) => readWeather(Fields.of(item, `${fields.at("weather")}.${i}`)));
  const locationRaw = fields.raw("location");
  const location =
    locationRaw === undefined || locationRaw === null
      ? null
      : readList(locationRaw, fields.at("location")).map((item, i) => readLocation(Fields.of(item, `${fields.at("location")}.${i}`), registry));
  const behaviors = fields.raw("user_historical_behaviors");
  if (behaviors !== undefined && behaviors !== null && !(behaviors instanceof Map)) {
    throw new FieldError(fields.at("user_historical_behaviors"), "expected an object");
  }
  const user_historical_behaviors = behaviors === undefined ? new Map() : behaviors;
  const ordersRaw = fields.raw("orders");
  const orders = ordersRaw === null ? null : readEntries(ordersRaw ?? new Map(), fields.at("orders"), (f) => readOrder(f, registry));
  const table = <T>(key: string, read: (f: Fields) => T): Map<string, T> => readEntries(fields.raw(key) ?? new Map(), fields.at(key), read);
  if (domain === "delivery") {
    const stores = table("stores", (f) => readStore(f, registry));
    return new VitaDb(domain, registry, time, user_id, weather, location, user_historical_behaviors, orders, stores, new Map(), new Map(), new Map());
  }
  const shops = table("shops", (f) => readShop(f, registry));
  const books = table("books", readBook);
  const reservations = table("reservations", readReservation);
  return new VitaDb(domain, registry, time, user_id, weather, location, user_historical_behaviors, orders, new Map(), shops, books, reservations);
}
