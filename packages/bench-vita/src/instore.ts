import { pyStr, type PyValue, valueError } from "@envace/python-text";
import type { VitaDb } from "./db.js";
import { rerank } from "./fuzz.js";
import { bookRepr, orderRepr, productRepr, reservationRepr, shopStr, type BookInfo, type Order, type ReservationInfo, type Shop, type ShopProduct } from "./model.js";
import { asNumber, checkTimeFormat, compare, hasKey, joinStrings, pyAssert, truthy } from "./python.js";
import { addOrder, arg, checkUser, getOrder, num, pick, str, strings, type VitaTool } from "./toolkit.js";

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

function getBook(db: VitaDb, bookId: PyValue): BookInfo {
  if (!hasKey(db.books, bookId)) throw valueError(`BookInfo ${pyStr(bookId)} not found`);
  return db.books.get(bookId)!;
}

function getReservation(db: VitaDb, reservationId: PyValue): ReservationInfo {
  if (!hasKey(db.reservations, reservationId)) throw valueError(`ReservationInfo ${pyStr(reservationId)} not found`);
  return db.reservations.get(reservationId)!;
}

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
const storeBook = (db: VitaDb, info: BookInfo): string => storeBack(db.books, info.book_id, info, "BookInfo");
const storeReservation = (db: VitaDb, info: ReservationInfo): string => storeBack(db.reservations, info.reservation_id, info, "ReservationInfo");

const answer = (stored: string, done: string): string => (stored === "done" ? done : stored);

interface Cancellable {
  status: string;
  update_time: string;
}

/** A kind of record the cancel tools change in place; `label` is the name upstream's messages give it. */
interface RecordKind<T extends Cancellable> {
  label: string;
  idName: string;
  get: (db: VitaDb, id: PyValue) => T;
  id: (record: T) => string;
  store: (db: VitaDb, record: T) => string;
}

const ORDERS: RecordKind<Order> = { label: "Order", idName: "Order ID", get: ownOrder, id: (o) => o.order_id, store: storeOrder };

/** Table bookings and reservations: a customer's records, listed and searched alike. */
interface CustomerKind<T extends Cancellable & { customer_id: string }> extends RecordKind<T> {
  /** How upstream's "has no … information" names them. */
  what: string;
  all: (db: VitaDb) => Iterable<T>;
  repr: (record: T) => string;
}

const BOOKS: CustomerKind<BookInfo> = {
  label: "BookInfo",
  idName: "Booking ID",
  what: "book",
  get: getBook,
  id: (b) => b.book_id,
  store: storeBook,
  all: (db) => db.books.values(),
  repr: bookRepr,
};
const RESERVATIONS: CustomerKind<ReservationInfo> = {
  label: "ReservationInfo",
  idName: "Reservation ID",
  what: "reservation",
  get: getReservation,
  id: (r) => r.reservation_id,
  store: storeReservation,
  all: (db) => db.reservations.values(),
  repr: reservationRepr,
};

/** The user's bookings or reservations, all of them (`id` null) or the one with that id. */
function customerRecords<T extends Cancellable & { customer_id: string }>(kind: CustomerKind<T>, db: VitaDb, userId: PyValue, id: PyValue = null): string {
  checkUser(db, userId);
  if (id === null) return listed([...kind.all(db)].filter((record) => record.customer_id === userId), userId, kind.what, kind.repr);
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

function listed<T>(items: readonly T[], userId: PyValue, what: string, repr: (item: T) => string): string {
  return items.length === 0 ? `User ${pyStr(userId)} has no ${what} information.` : items.map(repr).join("\n");
}


function createProductOrder(db: VitaDb, args: ReadonlyMap<string, PyValue>): string {
  const [userId, shopId, productId, quantity] = pick(args, "user_id", "shop_id", "product_id", "quantity");
  checkUser(db, userId);
  pyAssert(hasKey(db.shops, shopId), "Shop does not exist");
  pyAssert(getShop(db, shopId).products.some((product) => product.product_id === productId), "Product does not exist");
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
  const info = getReservation(db, id);
  if (info.status === "consumed" || info.status === "cancelled") return `ReservationInfo ${info.reservation_id} is already ${info.status}.`;
  pyAssert(compare(count, ">=", 0n), "Number of customers for reservation must be greater than or equal to 0");
  pyAssert(truthy(time), "Reservation time cannot be empty");
  pyAssert(checkTimeFormat(time, TIME_FORMAT), "Reservation time format is incorrect, correct format is %Y-%m-%d %H:%M:%S");
  info.reservation_time = time as string;
  info.customer_count = count;
  info.update_time = db.now();
  return answer(storeReservation(db, info), reservationRepr(info));
}

const search = (db: VitaDb, keywords: PyValue, docs: Map<string, string>): string[] => rerank(joinStrings(keywords), docs).slice(0, 1000).map(({ id }) => id);

export const INSTORE_TOOLS: readonly VitaTool[] = [
  {
    name: "instore_shop_search_recommend",
    owner: OWNER,
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
    owner: OWNER,
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
    owner: OWNER,
    description: "Order a product of a shop.",
    params: [str("user_id", "User id"), str("shop_id", "Shop id"), str("product_id", "Product id"), num("quantity", "Quantity", 1n)],
    run: createProductOrder,
  },
  {
    name: "pay_instore_order",
    owner: OWNER,
    description: "Pay an instore order.",
    params: [str("order_id", "Order id")],
    run: (db, args) => {
      const id = arg(args, "order_id");
      pyAssert(truthy(id), "Order ID cannot be empty");
      const order = ownOrder(db, id);
      if (order.status !== "unpaid") return `Order ${pyStr(id)} is not in \`unpaid\` status.`;
      order.status = "paid";
      order.update_time = db.now();
      storeOrder(db, order);
      return "Payment successful";
    },
  },
  {
    name: "instore_cancel_order",
    owner: OWNER,
    description: "Cancel an instore order.",
    params: [str("order_id", "Order id")],
    run: (db, args) => cancel(ORDERS, db, arg(args, "order_id")),
  },
  {
    name: "instore_book",
    owner: OWNER,
    description: "Book a table at a shop.",
    params: [str("user_id", "User id"), str("shop_id", "Shop id"), str("time", "Time, yyyy-mm-dd HH:MM:SS"), num("customer_count", "Number of customers", 1n)],
    run: book,
  },
  {
    name: "pay_instore_book",
    owner: OWNER,
    description: "Pay a table booking.",
    params: [str("book_id", "Booking id")],
    run: (db, args) => {
      pyAssert(truthy(arg(args, "book_id")), "Booking ID cannot be empty");
      const info = getBook(db, arg(args, "book_id"));
      if (info.status !== "unpaid") return `BookInfo ${info.book_id} is not in \`unpaid\` status.`;
      info.status = "paid";
      info.update_time = db.now();
      return answer(storeBook(db, info), "Payment successful");
    },
  },
  {
    name: "instore_cancel_book",
    owner: OWNER,
    description: "Cancel a table booking.",
    params: [str("book_id", "Booking id")],
    run: (db, args) => cancel(BOOKS, db, arg(args, "book_id")),
  },
  {
    name: "instore_reservation",
    owner: OWNER,
    description: "Reserve at a shop.",
    params: [str("user_id", "User id"), str("shop_id", "Shop id"), str("time", "Time, yyyy-mm-dd HH:MM:SS"), num("customer_count", "Number of customers", 1n)],
    run: reserve,
  },
  {
    name: "instore_modify_reservation",
    owner: OWNER,
    description: "Change a reservation's time and number of customers.",
    params: [str("reservation_id", "Reservation id"), str("time", "Time, yyyy-mm-dd HH:MM:SS"), num("customer_count", "Number of customers", 0n)],
    run: modifyReservation,
  },
  {
    name: "instore_cancel_reservation",
    owner: OWNER,
    description: "Cancel a reservation.",
    params: [str("reservation_id", "Reservation id")],
    run: (db, args) => cancel(RESERVATIONS, db, arg(args, "reservation_id")),
  },
  {
    name: "get_instore_orders",
    owner: OWNER,
    description: "The user's instore orders.",
    params: [str("user_id", "User id")],
    run: (db, args) => {
      const userId = arg(args, "user_id");
      checkUser(db, userId);
      const orders = [...(db.orders ?? new Map<string, Order>()).values()].filter((order) => order.order_type === "instore" && order.user_id === userId);
      return listed(orders, userId, "order", orderRepr);
    },
  },
  {
    name: "get_instore_reservations",
    owner: OWNER,
    description: "The user's reservations.",
    params: [str("user_id", "User id")],
    run: (db, args) => customerRecords(RESERVATIONS, db, arg(args, "user_id")),
  },
  {
    name: "get_instore_books",
    owner: OWNER,
    description: "The user's table bookings.",
    params: [str("user_id", "User id")],
    run: (db, args) => customerRecords(BOOKS, db, arg(args, "user_id")),
  },
  {
    name: "search_instore_book",
    owner: OWNER,
    description: "One of the user's table bookings, or all of them.",
    params: [str("user_id", "User id"), str("book_id", "Booking id", null)],
    run: (db, args) => customerRecords(BOOKS, db, arg(args, "user_id"), arg(args, "book_id")),
  },
  {
    name: "search_instore_reservation",
    owner: OWNER,
    description: "One of the user's reservations, or all of them.",
    params: [str("user_id", "User id"), str("reservation_id", "Reservation id", null)],
    run: (db, args) => customerRecords(RESERVATIONS, db, arg(args, "user_id"), arg(args, "reservation_id")),
  },
];
