import { pyStr, type PyValue, valueError } from "@envace/python-text";
import type { VitaDb } from "./db.js";
import { rerank } from "./fuzz.js";
import { bookRepr, orderRepr, productRepr, reservationRepr, shopStr, type BookInfo, type Order, type ReservationInfo, type Shop, type ShopProduct } from "./model.js";
import { asNumber, checkTimeFormat, compare, hasKey, joinStrings, pyAssert, truthy } from "./python.js";
import { num, pick, str, strings, type VitaTool } from "./toolkit.js";

/*
 * The instore domain's tools (`InStoreTools`): shops and their products, product orders, table
 * bookings and reservations, with upstream's checks, order of checks and answers.
 */

const OWNER = "InStoreTools";
const arg = (args: ReadonlyMap<string, PyValue>, name: string): PyValue => args.get(name) ?? null;

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

function getOrder(db: VitaDb, orderId: PyValue): Order {
  const orders = db.orders ?? new Map<string, Order>();
  if (!hasKey(orders, orderId)) throw valueError(`Order ${pyStr(orderId)} not found`);
  const order = orders.get(orderId)!;
  if (order.order_type !== "instore") throw valueError(`Order ${orderId} is not an instore order`);
  return order;
}

function getBook(db: VitaDb, bookId: PyValue): BookInfo {
  if (!hasKey(db.books, bookId)) throw valueError(`BookInfo ${pyStr(bookId)} not found`);
  return db.books.get(bookId)!;
}

function getReservation(db: VitaDb, reservationId: PyValue): ReservationInfo {
  if (!hasKey(db.reservations, reservationId)) throw valueError(`ReservationInfo ${pyStr(reservationId)} not found`);
  return db.reservations.get(reservationId)!;
}

function checkUser(db: VitaDb, userId: PyValue): void {
  pyAssert(truthy(userId), "User ID cannot be empty");
  pyAssert(userId === db.user_id, "User ID does not match");
}

const TIME_FORMAT = "%Y-%m-%d %H:%M:%S";

/*
 * Upstream's `_modify_*` helpers store the changed object back under its own id, and answer
 * "… not found" when no entry has that key (a task's key can differ from the id inside). The
 * object was changed in place either way.
 */
function storeOrder(db: VitaDb, order: Order): string {
  const orders = db.orders!;
  if (!orders.has(order.order_id)) return `Order ${order.order_id} not found`;
  orders.set(order.order_id, order);
  return "done";
}

function storeBook(db: VitaDb, info: BookInfo): string {
  if (!db.books.has(info.book_id)) return `BookInfo ${info.book_id} not found`;
  db.books.set(info.book_id, info);
  return "done";
}

function storeReservation(db: VitaDb, info: ReservationInfo): string {
  if (!db.reservations.has(info.reservation_id)) return `ReservationInfo ${info.reservation_id} not found`;
  db.reservations.set(info.reservation_id, info);
  return "done";
}

const answer = (stored: string, done: string): string => (stored === "done" ? done : stored);

function listed<T>(items: readonly T[], userId: PyValue, what: string, repr: (item: T) => string): string {
  return items.length === 0 ? `User ${pyStr(userId)} has no ${what} information.` : items.map(repr).join("\n");
}

const userBooks = (db: VitaDb, userId: PyValue): BookInfo[] => [...db.books.values()].filter((book) => book.customer_id === userId);
const userReservations = (db: VitaDb, userId: PyValue): ReservationInfo[] =>
  [...db.reservations.values()].filter((reservation) => reservation.customer_id === userId);

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
  const orders = db.orders!;
  if (orders.has(orderId)) return "Order already exists";
  orders.set(orderId, order);
  return orderRepr(order);
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
      const order = getOrder(db, id);
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
    run: (db, args) => {
      pyAssert(truthy(arg(args, "order_id")), "Order ID cannot be empty");
      const order = getOrder(db, arg(args, "order_id"));
      if (order.status === "cancelled") return `Order ${order.order_id} is already cancelled.`;
      order.status = "cancelled";
      order.update_time = db.now();
      return answer(storeOrder(db, order), `Order ${order.order_id} is cancelled.`);
    },
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
    run: (db, args) => {
      pyAssert(truthy(arg(args, "book_id")), "Booking ID cannot be empty");
      const info = getBook(db, arg(args, "book_id"));
      if (info.status === "cancelled") return `BookInfo ${info.book_id} is already cancelled.`;
      info.status = "cancelled";
      info.update_time = db.now();
      return answer(storeBook(db, info), `BookInfo ${info.book_id} is cancelled.`);
    },
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
    run: (db, args) => {
      pyAssert(truthy(arg(args, "reservation_id")), "Reservation ID cannot be empty");
      const info = getReservation(db, arg(args, "reservation_id"));
      if (info.status === "cancelled") return `ReservationInfo ${info.reservation_id} is already cancelled.`;
      info.status = "cancelled";
      info.update_time = db.now();
      return answer(storeReservation(db, info), `ReservationInfo ${info.reservation_id} is cancelled.`);
    },
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
    run: (db, args) => {
      checkUser(db, arg(args, "user_id"));
      return listed(userReservations(db, arg(args, "user_id")), arg(args, "user_id"), "reservation", reservationRepr);
    },
  },
  {
    name: "get_instore_books",
    owner: OWNER,
    description: "The user's table bookings.",
    params: [str("user_id", "User id")],
    run: (db, args) => {
      checkUser(db, arg(args, "user_id"));
      return listed(userBooks(db, arg(args, "user_id")), arg(args, "user_id"), "book", bookRepr);
    },
  },
  {
    name: "search_instore_book",
    owner: OWNER,
    description: "One of the user's table bookings, or all of them.",
    params: [str("user_id", "User id"), str("book_id", "Booking id", null)],
    run: (db, args) => {
      const [userId, id] = [arg(args, "user_id"), arg(args, "book_id")];
      checkUser(db, userId);
      if (id === null) return listed(userBooks(db, userId), userId, "book", bookRepr);
      const info = getBook(db, id);
      return info.customer_id === userId ? bookRepr(info) : `BookInfo ${pyStr(id)} is not belong to user ${pyStr(userId)}.`;
    },
  },
  {
    name: "search_instore_reservation",
    owner: OWNER,
    description: "One of the user's reservations, or all of them.",
    params: [str("user_id", "User id"), str("reservation_id", "Reservation id", null)],
    run: (db, args) => {
      const [userId, id] = [arg(args, "user_id"), arg(args, "reservation_id")];
      checkUser(db, userId);
      if (id === null) return listed(userReservations(db, userId), userId, "reservation", reservationRepr);
      const info = getReservation(db, id);
      return info.customer_id === userId ? reservationRepr(info) : `ReservationInfo ${pyStr(id)} is not belong to user ${pyStr(userId)}.`;
    },
  },
];
