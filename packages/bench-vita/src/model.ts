import { floatRepr, type PyModel, pyRepr, pyStr, type PyValue } from "@envace/python-text";
import { Fields, readDict, readStr, FieldError } from "./fields.js";

/*
 * VitaBench's data models (`vita.data_model.tasks`, the delivery and instore `data_model`s):
 * their fields, their reprs (what the agent reads) and `model_dump()` (what the DB hash covers).
 */

/**
 * What upstream keeps in per-thread registries while models are built: every `Location` by
 * address, every product by id. Address resolution and product lookups read these, not the DB.
 */
export class Registry {
  readonly locations = new Map<string, Location>();
  readonly products = new Map<string, Product>();

  /** A `Location` is registered as it is constructed (a repeated address keeps its first position). */
  location(address: string, longitude: number, latitude: number): Location {
    const location = { address, longitude, latitude };
    this.locations.set(address, location);
    return location;
  }

  product<P extends Product>(product: P): P {
    this.products.set(product.product_id, product);
    return product;
  }
}

export interface Location {
  address: string;
  longitude: number;
  latitude: number;
}

export function readLocation(fields: Fields, registry: Registry): Location {
  return registry.location(fields.str("address"), fields.float("longitude"), fields.float("latitude"));
}

export function locationRepr(location: Location): string {
  return `${location.address} longitude:${floatRepr(location.longitude)},latitude:${floatRepr(location.latitude)}`;
}

function dumpLocation(location: Location | null): PyValue {
  return location === null ? null : { address: location.address, longitude: location.longitude, latitude: location.latitude };
}

export interface Weather {
  city: string;
  category: string;
  datetime: string;
  temperature: [number, number];
  humidity: number;
}

export function readWeather(fields: Fields): Weather {
  const temperature = fields.list("temperature");
  if (temperature.length !== 2) throw new FieldError(fields.at("temperature"), "expected two numbers");
  const pair = Fields.of(
    new Map([
      ["low", temperature[0]!],
      ["high", temperature[1]!],
    ]),
    fields.at("temperature"),
  );
  return {
    city: fields.str("city"),
    category: fields.str("category"),
    datetime: fields.str("datetime"),
    temperature: [pair.float("low"), pair.float("high")],
    humidity: fields.float("humidity"),
  };
}

export function weatherRepr(weather: Weather): string {
  return (
    `city: ${weather.city}, weather: ${weather.category}, datetime: ${weather.datetime}, ` +
    `temperature: ${floatRepr(weather.temperature[0])}~${floatRepr(weather.temperature[1])}, humidity: ${floatRepr(weather.humidity)}`
  );
}

/** A delivery catalogue product (`StoreProduct`); `attributes` is already joined with ", ". */
export interface StoreProduct {
  readonly kind: "store";
  product_id: string;
  price: number;
  quantity: PyValue;
  name: string;
  store_id: string;
  store_name: string;
  attributes: string;
  tags: string[];
}

/** An instore product (`ShopProduct`). */
export interface ShopProduct {
  readonly kind: "shop";
  product_id: string;
  price: number;
  quantity: PyValue;
  name: string;
  shop_id: string;
  tags: string[];
}

export type Product = StoreProduct | ShopProduct;

function readAttributes(fields: Fields): string {
  const value = fields.raw("attributes");
  if (value === undefined) throw new FieldError(fields.at("attributes"), "required");
  if (Array.isArray(value)) return value.map((item, i) => readStr(item, `${fields.at("attributes")}.${i}`)).join(", ");
  return readStr(value, fields.at("attributes"));
}

export function readStoreProduct(fields: Fields): StoreProduct {
  return {
    kind: "store",
    product_id: fields.str("product_id", ""),
    price: fields.float("price", 0),
    quantity: fields.optInt("quantity", 0n),
    name: fields.str("name"),
    store_id: fields.str("store_id"),
    store_name: fields.str("store_name"),
    attributes: readAttributes(fields),
    tags: fields.strList("tags"),
  };
}

export function readShopProduct(fields: Fields): ShopProduct {
  return {
    kind: "shop",
    product_id: fields.str("product_id", ""),
    price: fields.float("price", 0),
    quantity: fields.optInt("quantity", 0n),
    name: fields.str("name"),
    shop_id: fields.str("shop_id"),
    tags: fields.strList("tags"),
  };
}

export function productRepr(product: Product): string {
  if (product.kind === "store") {
    return (
      `StoreProduct(store_name=${product.store_name}, store_id=${product.store_id}, product_name=${product.name}, ` +
      `product_id=${product.product_id}, attributes=${product.attributes}, quantity=${pyStr(product.quantity)}, ` +
      `price=${floatRepr(product.price)}, tags=${pyRepr(product.tags)})`
    );
  }
  return (
    `ShopProduct(shop_id=${product.shop_id}, product_id=${product.product_id}, name=${product.name}, ` +
    `price=${floatRepr(product.price)}, quantity=${pyStr(product.quantity)}, tags=${pyRepr(product.tags)})`
  );
}

function dumpProduct(product: Product): PyModel {
  const base = { product_id: product.product_id, price: product.price, quantity: product.quantity };
  if (product.kind === "store") {
    return { ...base, name: product.name, store_id: product.store_id, store_name: product.store_name, attributes: product.attributes, tags: product.tags };
  }
  return { ...base, name: product.name, shop_id: product.shop_id, tags: product.tags };
}

function isProduct(value: unknown): value is Product {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Map) && "kind" in value;
}

export const ORDER_TYPES = ["delivery", "instore", "hotel", "attraction", "flight", "train"] as const;
export const ORDER_STATUSES = ["unpaid", "paid", "unconsumed", "consumed", "processed", "in-progress", "delivered", "cancelled"] as const;

/** An order line is what the task supplied (a dict) or a product object an order was created with. */
export type OrderLine = PyValue | Product;

export interface Order {
  order_id: string;
  order_type: (typeof ORDER_TYPES)[number];
  user_id: string;
  store_id: string;
  /** Any value: `modify_delivery_order` assigns the agent's argument unvalidated. */
  note: PyValue;
  location: Location | null;
  dispatch_time: string | null;
  shipping_time: number | null;
  delivery_time: string | null;
  total_price: number;
  create_time: string;
  update_time: string;
  status: (typeof ORDER_STATUSES)[number];
  products: OrderLine[];
}

/** `Order(**data)`: an empty `update_time` becomes `create_time`. */
export function readOrder(fields: Fields, registry: Registry): Order {
  const location = fields.raw("location");
  const order: Order = {
    order_id: fields.str("order_id"),
    order_type: fields.literal("order_type", ORDER_TYPES),
    user_id: fields.str("user_id"),
    store_id: fields.str("store_id"),
    note: fields.optStr("note", ""),
    location: location === undefined || location === null ? null : readLocation(Fields.of(location, fields.at("location")), registry),
    dispatch_time: fields.optStr("dispatch_time", ""),
    shipping_time: fields.optFloat("shipping_time", 0),
    delivery_time: fields.optStr("delivery_time", ""),
    total_price: fields.float("total_price", 0),
    create_time: fields.str("create_time", ""),
    update_time: fields.str("update_time", ""),
    status: fields.literal("status", ORDER_STATUSES, "unpaid"),
    products: fields.list("products", []),
  };
  if (order.update_time === "" && order.create_time !== "") order.update_time = order.create_time;
  return order;
}

const ID_FIELD: Readonly<Record<Order["order_type"], string>> = {
  delivery: "store_id",
  instore: "shop_id",
  hotel: "hotel_id",
  attraction: "attraction_id",
  flight: "flight_id",
  train: "train_id",
};

function linesRepr(lines: readonly OrderLine[]): string {
  return `[${lines.map((line) => (isProduct(line) ? productRepr(line) : pyRepr(line))).join(", ")}]`;
}

const optional = (value: PyValue): string => (typeof value === "number" ? floatRepr(value) : pyStr(value));

/** `Order.__str__` (search results): ends with ", " and no closing parenthesis, as upstream. */
export function orderStr(order: Order): string {
  return (
    `Order(order_id:${order.order_id}, order_type:${order.order_type}, user_id:${order.user_id}, ` +
    `${ID_FIELD[order.order_type]}:${order.store_id}, total_price:${floatRepr(order.total_price)}, ` +
    `create_time:${order.create_time}, update_time:${order.update_time}, status:${order.status}, `
  );
}

/** `Order.__repr__`: delivery orders show dispatch, shipping, delivery and note too. */
export function orderRepr(order: Order): string {
  const head = `Order(order_id:${order.order_id}, order_type:${order.order_type}, user_id:${order.user_id}, ${ID_FIELD[order.order_type]}:${order.store_id}, `;
  const tail = `create_time:${order.create_time}, update_time:${order.update_time}, `;
  if (order.order_type === "delivery") {
    return (
      head +
      `dispatch_time:${optional(order.dispatch_time)}, shipping_time:${optional(order.shipping_time)}, ` +
      `delivery_time:${optional(order.delivery_time)}, total_price:${floatRepr(order.total_price)}, ` +
      tail +
      `note:${optional(order.note)}, status:${order.status}, products:${linesRepr(order.products)})`
    );
  }
  return head + `total_price:${floatRepr(order.total_price)}, ` + tail + `status:${order.status}, products:${linesRepr(order.products)})`;
}

export function dumpOrder(order: Order): PyModel {
  return {
    order_id: order.order_id,
    order_type: order.order_type,
    user_id: order.user_id,
    store_id: order.store_id,
    note: order.note,
    location: dumpLocation(order.location),
    dispatch_time: order.dispatch_time,
    shipping_time: order.shipping_time,
    delivery_time: order.delivery_time,
    total_price: order.total_price,
    create_time: order.create_time,
    update_time: order.update_time,
    status: order.status,
    products: order.products.map((line) => (isProduct(line) ? dumpProduct(line) : line)),
  };
}

/** A delivery store. Its key in `stores` may differ from its `store_id` (three upstream tasks). */
export interface Store {
  store_id: string;
  name: string;
  score: number;
  location: Location;
  tags: string[];
  products: StoreProduct[];
}

export function readStore(fields: Fields, registry: Registry): Store {
  const store_id = fields.optStr("store_id", "");
  const name = fields.str("name");
  const score = fields.float("score");
  const location = readLocation(Fields.of(fields.raw("location"), fields.at("location")), registry);
  const tags = fields.strList("tags");
  const products = fields.list("products").map((item, i) => registry.product(readStoreProduct(Fields.of(item, `${fields.at("products")}.${i}`))));
  return { store_id: store_id ?? "", name, score, location, tags, products };
}

/** `str(store)`: the header, without products. */
export function storeStr(store: Store): string {
  return `Store(name=${store.name}, store_id=${store.store_id}, score=${floatRepr(store.score)}, location=${locationRepr(store.location)}, tags=${pyRepr(store.tags)})`;
}

/** `repr(store)`: the header, a stray ")" and the products one a line. */
export function storeRepr(store: Store): string {
  return (
    `Store(name=${store.name}, store_id=${store.store_id}, score=${floatRepr(store.score)}, location=${locationRepr(store.location)}, ` +
    `tags=${pyRepr(store.tags)}), products=${store.products.map(productRepr).join("\n")}`
  );
}

export function dumpStore(store: Store): PyModel {
  return {
    store_id: store.store_id,
    name: store.name,
    score: store.score,
    location: dumpLocation(store.location),
    tags: store.tags,
    products: store.products.map(dumpProduct),
  };
}

/** An instore shop. */
export interface Shop {
  store_id: string;
  shop_id: string;
  shop_name: string;
  score: number;
  location: Location;
  tags: string[];
  enable_book: boolean;
  book_price: number;
  enable_reservation: boolean;
  products: ShopProduct[];
}

export function readShop(fields: Fields, registry: Registry): Shop {
  const shop_id = fields.str("shop_id");
  const shop_name = fields.str("shop_name");
  const score = fields.float("score");
  const location = readLocation(Fields.of(fields.raw("location"), fields.at("location")), registry);
  const tags = fields.strList("tags");
  const enable_book = fields.bool("enable_book");
  const book_price = fields.float("book_price");
  const enable_reservation = fields.bool("enable_reservation");
  const products = fields.list("products").map((item, i) => registry.product(readShopProduct(Fields.of(item, `${fields.at("products")}.${i}`))));
  // `model_post_init` sets `store_id` to `shop_id` (and registers the products again: no change).
  return { store_id: shop_id, shop_id, shop_name, score, location, tags, enable_book, book_price, enable_reservation, products };
}

function shopHead(shop: Shop): string {
  return (
    `Shop(shop_name=${shop.shop_name}, shop_id=${shop.shop_id}, score=${floatRepr(shop.score)}, location=${locationRepr(shop.location)}, ` +
    `tags=${pyRepr(shop.tags)}, enable_book=${shop.enable_book ? "True" : "False"}, book_price=${floatRepr(shop.book_price)}, ` +
    `enable_reservation=${shop.enable_reservation ? "True" : "False"}`
  );
}

/** `str(shop)`: without products. */
export function shopStr(shop: Shop): string {
  return `${shopHead(shop)})`;
}

export function shopRepr(shop: Shop): string {
  return `${shopHead(shop)}, products=${shop.products.map(productRepr).join("\n")})`;
}

export function dumpShop(shop: Shop): PyModel {
  return {
    store_id: shop.store_id,
    shop_id: shop.shop_id,
    shop_name: shop.shop_name,
    score: shop.score,
    location: dumpLocation(shop.location),
    tags: shop.tags,
    enable_book: shop.enable_book,
    book_price: shop.book_price,
    enable_reservation: shop.enable_reservation,
    products: shop.products.map(dumpProduct),
  };
}

export const INSTORE_STATUSES = ["unpaid", "paid", "unconsumed", "consumed", "cancelled"] as const;

export interface BookInfo {
  book_id: string;
  shop_id: string;
  book_time: string;
  update_time: string;
  customer_id: string;
  customer_count: PyValue;
  book_price: number;
  status: (typeof INSTORE_STATUSES)[number];
}

export interface ReservationInfo {
  reservation_id: string;
  shop_id: string;
  reservation_time: string;
  update_time: string;
  customer_id: string;
  customer_count: PyValue;
  status: (typeof INSTORE_STATUSES)[number];
}

export function readBook(fields: Fields): BookInfo {
  return {
    book_id: fields.str("book_id"),
    shop_id: fields.str("shop_id"),
    book_time: fields.str("book_time"),
    update_time: fields.str("update_time"),
    customer_id: fields.str("customer_id"),
    customer_count: fields.int("customer_count"),
    book_price: fields.float("book_price"),
    status: fields.literal("status", INSTORE_STATUSES),
  };
}

export function readReservation(fields: Fields): ReservationInfo {
  return {
    reservation_id: fields.str("reservation_id"),
    shop_id: fields.str("shop_id"),
    reservation_time: fields.str("reservation_time"),
    update_time: fields.str("update_time"),
    customer_id: fields.str("customer_id"),
    customer_count: fields.int("customer_count"),
    status: fields.literal("status", INSTORE_STATUSES),
  };
}

/** `repr(BookInfo)`: no space after the first comma, no closing parenthesis (upstream's text). */
export function bookRepr(book: BookInfo): string {
  return (
    `BookInfo(book_id=${book.book_id},shop_id=${book.shop_id}, book_time=${book.book_time}, customer_id=${book.customer_id}, ` +
    `customer_count=${pyStr(book.customer_count)}, book_price=${floatRepr(book.book_price)}, status=${book.status}`
  );
}

export function reservationRepr(reservation: ReservationInfo): string {
  return (
    `ReservationInfo(reservation_id=${reservation.reservation_id},shop_id=${reservation.shop_id}, ` +
    `reservation_time=${reservation.reservation_time}, customer_id=${reservation.customer_id}, ` +
    `customer_count=${pyStr(reservation.customer_count)}, status=${reservation.status}`
  );
}

/** Read every entry of a dict field with `read`, keeping the task's keys. */
export function readEntries<T>(value: PyValue | undefined, path: string, read: (fields: Fields) => T): Map<string, T> {
  return new Map(readDict(value, path).map(([key, item, at]) => [key, read(Fields.of(item, at))]));
}
