import { pyStr, type PyValue, valueError } from "@envace/python-text";
import type { VitaDb } from "./db.js";
import { rerank } from "./fuzz.js";
import {
  bookRepr,
  orderRepr,
  productRepr,
  reservationRepr,
  shopStr,
  type BookInfo,
  type Order,
  type ReservationInfo,
  type Shop,
  type ShopProduct,
} from "./model.js";
import { asNumber, checkTimeFormat, compare, hasKey, joinStrings, pyAssert, truthy } from "./python.js";
import { addOrder, answer, arg, checkUser, getOrder, num, pick, str, strings, toolkit, type ToolSpec, type VitaParam } from "./toolkit.js";

/*
 * The instore domain's tools (`InStoreTools`): shops and their products, product orders, table
 * bookings and reservations, with upstream's checks, order of checks and answers.
 */

const OWNER = "InStoreTools";

function getShop(db: VitaDb, shopId: PyValue): Shop {
  if (!hasKey(db.shops, shopId)) throw valueError(`Shop ${pyStr(shopId)} does not exist`);
  return db.shops.get(shopId)!;
}

function getProduct(db: VitaDb, productId: PyValue): ShopProduct {
  if (!hasKey(db.registry.products, productId)) throw valueError(`Product ${pyStr(productId)} does not exist`);
  const product = db.registry.products.get(productId)!;
  if (product.kind !== "shop") throw valueError(`Product ${productId} is not an instore scenario product`);
  return product;
}

// This domain's orders only.
const ownOrder = (db: VitaDb, orderId: PyValue): Order => getOrder(db, orderId, "instore", "an instore order");

const TIME_FORMAT = "%Y-%m-%d %H:%M:%S";

/*
 * Upstream's `_modify_*` helpers store the changed object back under its own id, and answer
 * "… not found" when no entry has that key (a task's key can differ from the id inside). The
 * object was changed in place either way.
 */
function storeBack<T>(entries: Map<string, T>, id: string, value: T, what: string): string {
  if (!entries.has(id)) return `${what} ${id} not found`;
  entries.set(id, value);
  return "done";
}

const storeOrder = (db: VitaDb, order: Order): string => storeBack(db.orders!, order.order_id, order, "Order");

interface Cancellable {
  status: string;
  update_time: string;
}

/** A kind of record the pay and cancel tools change in place; `label` is the name upstream's messages give it. */
interface RecordKind<T extends Cancellable> {
  label: string;
  idName: string;
  /** The tools' parameter naming one record. */
  param: VitaParam;
  get: (db: VitaDb, id: PyValue) => T;
  id: (record: T) => string;
  store: (db: VitaDb, record: T) => string;
}

const ORDERS: RecordKind<Order> = {
  label: "Order",
  idName: "Order ID",
  param: str("order_id", "Order id"),
  get: ownOrder,
  id: (o) => o.order_id,
  store: storeOrder,
};

/** Table bookings and reservations: a customer's records, listed and searched alike. */
interface CustomerKind<T extends Cancellable & { customer_id: string }> extends RecordKind<T> {
  /** How upstream's "has no … information" names them. */
  what: string;
  all: (db: VitaDb) => Iterable<T>;
  repr: (record: T) => string;
}

/**
 * A kind kept in its own table of the database: upstream looks a record up by key ("… not found"
 * when absent) and stores it back under its own id.
 */
function customerKind<T extends Cancellable & { customer_id: string }>(
  label: string,
  names: { idName: string; param: VitaParam; what: string },
  entries: (db: VitaDb) => Map<string, T>,
  id: (record: T) => string,
  repr: (record: T) => string,
): CustomerKind<T> {
  const get = (db: VitaDb, key: PyValue): T => {
    if (!hasKey(entries(db), key)) throw valueError(`${label} ${pyStr(key)} not found`);
    return entries(db).get(key)!;
  };
  const store = (db: VitaDb, record: T): string => storeBack(entries(db), id(record), record, label);
  return { label, ...names, get, id, store, all: (db) => entries(db).values(), repr };
}

const BOOKS = customerKind(
  "BookInfo",
  { idName: "Booking ID", param: str("book_id", "Booking id"), what: "book" },
  (db) => db.books,
  (b) => b.book_id,
  bookRepr,
);
const RESERVATIONS = customerKind(
  "ReservationInfo",
  { idName: "Reservation ID", param: str("reservation_id", "Reservation id"), what: "reservation" },
  (db) => db.reservations,
  (r) => r.reservation_id,
  reservationRepr,
);

/** The user's bookings or reservations, all of them (`id` null) or the one with that id. */
function customerRecords<T extends Cancellable & { customer_id: string }>(kind: CustomerKind<T>, db: VitaDb, userId: PyValue, id: PyValue = null): string {
  checkUser(db, userId);
  if (id === null)
    return listed(
      [...kind.all(db)].filter((record) => record.customer_id === userId),
      userId,
      kind.what,
      kind.repr,
    );
  const record = kind.get(db, id);
  return record.customer_id === userId ? kind.repr(record) : `${kind.label} ${pyStr(id)} is not belong to user ${pyStr(userId)}.`;
}

/** Upstream's three cancel tools (order, booking, reservation) check and answer alike. */
function cancel<T extends Cancellable>(kind: RecordKind<T>, db: VitaDb, id: PyValue): string {
  pyAssert(truthy(id), `${kind.idName} cannot be empty`);
  const record = kind.get(db, id);
  if (record.status === "cancelled") return `${kind.label} ${kind.id(record)} is already cancelled.`;
  (record as Cancellable).status = "cancelled";
  record.update_time = db.now();
  return answer(kind.store(db, record), `${kind.label} ${kind.id(record)} is cancelled.`);
}

/**
 * Upstream's two pay tools check alike. The order's (`asGiven`) names the id as the agent gave it
 * and answers success even when storing back finds no entry; the booking's names the record's id.
 */
function pay<T extends Cancellable>(kind: RecordKind<T>, db: VitaDb, id: PyValue, asGiven: boolean): string {
  pyAssert(truthy(id), `${kind.idName} cannot be empty`);
  const record = kind.get(db, id);
  if (record.status !== "unpaid") return `${kind.label} ${asGiven ? pyStr(id) : kind.id(record)} is not in \`unpaid\` status.`;
  (record as Cancellable).status = "paid";
  record.update_time = db.now();
  const stored = kind.store(db, record);
  return asGiven ? "Payment successful" : answer(stored, "Payment successful");
}

function listed<T>(items: readonly T[], userId: PyValue, what: string, repr: (item: T) => string): string {
  return items.length === 0 ? `User ${pyStr(userId)} has no ${what} information.` : items.map(repr).join("\n");
}

const USER_ID = str("user_id", "User id");

/** Upstream's pay and cancel tools take the record's id and nothing else. */
function cancelTool<T extends Cancellable>(name: string, description: string, kind: RecordKind<T>): ToolSpec {
  return { name, description, params: [kind.param], run: (db, args) => cancel(kind, db, arg(args, kind.param.name)) };
}

function payTool<T extends Cancellable>(name: string, description: string, kind: RecordKind<T>, asGiven: boolean): ToolSpec {
  return { name, description, params: [kind.param], run: (db, args) => pay(kind, db, arg(args, kind.param.name), asGiven) };
}

/** Booking a table and reserving one take the same arguments. */
const SEATING_PARAMS = [USER_ID, str("shop_id", "Shop id"), str("time", "Time, yyyy-mm-dd HH:MM:SS"), num("customer_count", "Number of customers", 1n)];
const seatingTool = (name: string, description: string, run: ToolSpec["run"]): ToolSpec => ({ name, description, params: SEATING_PARAMS, run });

/** A customer's bookings or reservations: all of them, or (`search`) the one an optional id names. */
function customerTool<T extends Cancellable & { customer_id: string }>(name: string, description: string, kind: CustomerKind<T>, search: boolean): ToolSpec {
  if (!search) return { name, description, params: [USER_ID], run: (db, args) => customerRecords(kind, db, arg(args, "user_id")) };
  const id = { ...kind.param, default: null };
  return { name, description, params: [USER_ID, id], run: (db, args) => customerRecords(kind, db, arg(args, "user_id"), arg(args, id.name)) };
}

function createProductOrder(db: VitaDb, args: ReadonlyMap<string, PyValue>): string {
  const [userId, shopId, productId, quantity] = pick(args, "user_id", "shop_id", "product_id", "quantity");
  checkUser(db, userId);
  pyAssert(hasKey(db.shops, shopId), "Shop does not exist");
  pyAssert(
    getShop(db, shopId).products.some((product) => product.product_id === productId),
    "Product does not exist",
  );
  pyAssert(compare(quantity, ">", 0n), "Quantity must be greater than 0");
  // The registry's product object itself takes the quantity: every order holding it shows the latest.
  const product = getProduct(db, productId);
  product.quantity = quantity;
  const orderId = db.assignId("instore", userId as string);
  const order: Order = {
    order_id: orderId,
    order_type: "instore",
    user_id: userId as string,
    store_id: shopId,
    note: "",
    location: null,
    dispatch_time: "",
    shipping_time: 0,
    delivery_time: "",
    total_price: asNumber(quantity)! * product.price,
    create_time: db.now(),
    update_time: db.now(),
    status: "unpaid",
    products: [product],
  };
  return addOrder(db, order);
}

function book(db: VitaDb, args: ReadonlyMap<string, PyValue>): string {
  const [userId, shopId, time, count] = pick(args, "user_id", "shop_id", "time", "customer_count");
  checkUser(db, userId);
  pyAssert(hasKey(db.shops, shopId), "Shop does not exist");
  pyAssert(compare(count, ">", 0n), "Number of customers for table booking must be greater than 0");
  pyAssert(truthy(time), "Table booking time cannot be empty");
  pyAssert(checkTimeFormat(time, TIME_FORMAT), "Table booking time format is incorrect, correct format is %Y-%m-%d %H:%M:%S");
  const shop = db.shops.get(shopId)!;
  pyAssert(shop.enable_book, "Shop does not support table booking");
  const info: BookInfo = {
    book_id: db.assignId("instore_book", userId as string),
    shop_id: shopId,
    book_time: time as string,
    update_time: db.now(),
    customer_id: userId as string,
    customer_count: count,
    book_price: shop.book_price,
    status: shop.book_price > 0 ? "unpaid" : "paid",
  };
  if (db.books.has(info.book_id)) return "BookInfo already exists";
  db.books.set(info.book_id, info);
  return bookRepr(info);
}

function reserve(db: VitaDb, args: ReadonlyMap<string, PyValue>): string {
  const [userId, shopId, time, count] = pick(args, "user_id", "shop_id", "time", "customer_count");
  checkUser(db, userId);
  pyAssert(hasKey(db.shops, shopId), "Shop does not exist");
  pyAssert(checkTimeFormat(time, TIME_FORMAT), "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S");
  pyAssert(compare(count, ">", 0n), "Number of customers for reservation must be greater than 0");
  const info: ReservationInfo = {
    reservation_id: db.assignId("instore_reservation", userId as string),
    shop_id: shopId,
    reservation_time: time as string,
    update_time: db.now(),
    customer_id: userId as string,
    customer_count: count,
    status: "unconsumed",
  };
  if (db.reservations.has(info.reservation_id)) return "ReservationInfo already exists";
  db.reservations.set(info.reservation_id, info);
  return reservationRepr(info);
}

function modifyReservation(db: VitaDb, args: ReadonlyMap<string, PyValue>): string {
  const [id, time, count] = pick(args, "reservation_id", "time", "customer_count");
  pyAssert(truthy(id), "Reservation ID cannot be empty");
  const info = RESERVATIONS.get(db, id);
  if (info.status === "consumed" || info.status === "cancelled") return `ReservationInfo ${info.reservation_id} is already ${info.status}.`;
  pyAssert(compare(count, ">=", 0n), "Number of customers for reservation must be greater than or equal to 0");
  pyAssert(truthy(time), "Reservation time cannot be empty");
  pyAssert(checkTimeFormat(time, TIME_FORMAT), "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S");
  info.reservation_time = time as string;
  info.customer_count = count;
  info.update_time = db.now();
  return answer(RESERVATIONS.store(db, info), reservationRepr(info));
}

const search = (db: VitaDb, keywords: PyValue, docs: Map<string, string>): string[] =>
  rerank(joinStrings(keywords), docs)
    .slice(0, 1000)
    .map(({ id }) => id);

export const INSTORE_TOOLS = toolkit(OWNER, [
  {
    name: "instore_shop_search_recommend",
    description: "Search or recommend shops by keywords taken from what the user said.",
    params: [strings("keywords", "Keywords describing the shop")],
    run: (db, args) => {
      const docs = new Map([...db.shops.values()].map((shop) => [shop.shop_id, `${shop.shop_name},${shop.tags.join(",")}`]));
      return search(db, arg(args, "keywords"), docs)
        .map((id) => shopStr(getShop(db, id)))
        .join("\n");
    },
  },
  {
    name: "instore_product_search_recommend",
    description: "Search or recommend products by keywords taken from what the user said.",
    params: [strings("keywords", "Keywords describing the product")],
    run: (db, args) => {
      const docs = new Map<string, string>();
      for (const [id, product] of db.registry.products) if (product.kind === "shop") docs.set(id, `${product.name},${product.tags.join(",")}`);
      return search(db, arg(args, "keywords"), docs)
        .map((id) => productRepr(getProduct(db, id)))
        .join("\n");
    },
  },
  {
    name: "create_instore_product_order",
    description: "Order a product of a shop.",
    params: [str("user_id", "User id"), str("shop_id", "Shop id"), str("product_id", "Product id"), num("quantity", "Quantity", 1n)],
    run: createProductOrder,
  },
  payTool("pay_instore_order", "Pay an instore order.", ORDERS, true),
  cancelTool("instore_cancel_order", "Cancel an instore order.", ORDERS),
  seatingTool("instore_book", "Book a table at a shop.", book),
  payTool("pay_instore_book", "Pay a table booking.", BOOKS, false),
  cancelTool("instore_cancel_book", "Cancel a table booking.", BOOKS),
  seatingTool("instore_reservation", "Reserve at a shop.", reserve),
  {
    name: "instore_modify_reservation",
    description: "Change a reservation's time and number of customers.",
    params: [str("reservation_id", "Reservation id"), str("time", "Time, yyyy-mm-dd HH:MM:SS"), num("customer_count", "Number of customers", 0n)],
    run: modifyReservation,
  },
  cancelTool("instore_cancel_reservation", "Cancel a reservation.", RESERVATIONS),
  {
    name: "get_instore_orders",
    description: "The user's instore orders.",
    params: [str("user_id", "User id")],
    run: (db, args) => {
      const userId = arg(args, "user_id");
      checkUser(db, userId);
      const orders = [...(db.orders ?? new Map<string, Order>()).values()].filter((order) => order.order_type === "instore" && order.user_id === userId);
      return listed(orders, userId, "order", orderRepr);
    },
  },
  customerTool("get_instore_reservations", "The user's reservations.", RESERVATIONS, false),
  customerTool("get_instore_books", "The user's table bookings.", BOOKS, false),
  customerTool("search_instore_book", "One of the user's table bookings, or all of them.", BOOKS, true),
  customerTool("search_instore_reservation", "One of the user's reservations, or all of them.", RESERVATIONS, true),
]);
