import { iterate, len, pyEquals, pyStr, pyTypeName, type PyValue, roundFloat, valueError } from "@envace/python-text";
import type { VitaDb } from "./db.js";
import { rerank } from "./fuzz.js";
import { orderRepr, orderStr, productRepr, storeRepr, storeStr, type Order, type Store, type StoreProduct } from "./model.js";
import { addMinutes, asNumber, checkTimeFormat, compare, epochSeconds, hasKey, joinStrings, pyAssert, strptime, truthy } from "./python.js";
import { addOrder, answer, arg, checkUser, distance, getOrder, num, param, pick, resolveAddress, str, strings, toolkit } from "./toolkit.js";

/*
 * The delivery domain's tools (`DeliveryTools`), with upstream's semantics: what they check, in
 * which order, and the text they answer with.
 */

const OWNER = "DeliveryTools";

function getStore(db: VitaDb, storeId: PyValue): Store {
  if (!hasKey(db.stores, storeId)) throw valueError(`Store ${pyStr(storeId)} not found`);
  return db.stores.get(storeId)!;
}

function getProduct(db: VitaDb, productId: PyValue): StoreProduct {
  if (!hasKey(db.registry.products, productId)) throw valueError(`${pyStr(productId)} not found`);
  const product = db.registry.products.get(productId)!;
  if (product.kind !== "store") throw valueError(`${productId} is not a delivery product`);
  return product;
}

// This domain's orders only.
const ownOrder = (db: VitaDb, orderId: PyValue): Order => getOrder(db, orderId, "delivery", "a delivery order");

/** `_modify_delivery_order`: store the order back under its own id ("Order not found" when no entry has it). */
function storeOrder(db: VitaDb, order: Order): string {
  const orders = db.orders!;
  if (!orders.has(order.order_id)) return "Order not found";
  orders.set(order.order_id, order);
  return "done";
}

/** `delivery_distance_to_time`: 25 minutes plus 0.00651 a metre, rounded (half to even). */
function shippingMinutes(distanceValue: PyValue): number {
  const metres = asNumber(distanceValue);
  pyAssert(metres !== undefined, `distance value type should be float or int, but get <class '${pyTypeName(distanceValue)}'>`);
  return roundFloat(25.0 + Math.trunc(metres) * 0.00651, 0);
}

/** An int field's value after pydantic: an integral float becomes an int. */
function asInt(value: PyValue): PyValue {
  return typeof value === "number" && Number.isInteger(value) ? BigInt(value) : value;
}

function createOrder(db: VitaDb, args: ReadonlyMap<string, PyValue>): string {
  const [userId, storeId, productIds, counts, address, dispatch] = pick(args, "user_id", "store_id", "product_ids", "product_cnts", "address", "dispatch_time");
  checkUser(db, userId);
  pyAssert(hasKey(db.stores, storeId), `Store ${pyStr(storeId)} not found`);
  const ids = iterate(productIds ?? null);
  for (const id of ids) getProduct(db, id);
  pyAssert(!pyEquals(address, ""), `Location ${pyStr(address)} is empty`);
  const sameLength = len(productIds ?? null) === len(counts ?? null);
  pyAssert(
    sameLength &&
      iterate(counts ?? null)
        .map((count) => compare(count, ">", 0n))
        .every(Boolean),
    `product_cnts ${pyStr(counts)} list is invalid`,
  );
  pyAssert(truthy(dispatch) && checkTimeFormat(dispatch), `dispatch_time ${pyStr(dispatch)} time format is invalid, yyyy-mm-dd HH:MM:SS required`);
  const dispatchAt = strptime(dispatch, "%Y-%m-%d %H:%M:%S")!;
  const now = strptime(db.now(), "%Y-%m-%d %H:%M:%S")!;
  pyAssert(epochSeconds(dispatchAt) >= epochSeconds(now), `dispatch_time ${pyStr(dispatch)} must be in the future`);
  const products = ids.map((id) => getProduct(db, id));
  const store = getStore(db, storeId);
  const [longitude, latitude] = resolveAddress(db, address);
  const shipping = shippingMinutes(distance(longitude, latitude, store.location.longitude, store.location.latitude));
  const cnts = iterate(counts ?? null);
  let total = 0;
  products.forEach((product, i) => (total += product.price * asNumber(cnts[i])!));
  const chosen = arg(args, "attributes");
  const attributes = products.map(() => "");
  if (chosen !== null) {
    iterate(chosen)
      .slice(0, products.length)
      .forEach((attribute, i) => {
        if (truthy(attribute)) attributes[i] = pyStr(attribute);
      });
  }
  // New product objects replace the catalogue's in the product registry (not in the store).
  const lines = products.map((product, i) =>
    db.registry.product<StoreProduct>({ ...product, tags: [...product.tags], quantity: asInt(cnts[i]!), attributes: attributes[i]! }),
  );
  const orderId = db.assignId("delivery", userId as string);
  const location = db.registry.location(address as string, longitude, latitude);
  const order: Order = {
    order_id: orderId,
    order_type: "delivery",
    user_id: userId as string,
    store_id: storeId,
    note: arg(args, "note"),
    location,
    dispatch_time: dispatch as string,
    shipping_time: shipping,
    delivery_time: addMinutes(dispatchAt, shipping),
    total_price: total,
    create_time: db.now(),
    update_time: db.now(),
    status: "unpaid",
    products: lines,
  };
  return addOrder(db, order);
}

export const DELIVERY_TOOLS = toolkit(OWNER, [
  {
    name: "delivery_distance_to_time",
    description: "Delivery time in minutes for a distance in metres.",
    params: [num("distance", "Distance in metres")],
    run: (_db, args) => shippingMinutes(arg(args, "distance")),
  },
  {
    name: "get_delivery_store_info",
    description: "A store's details: id, score, address, coordinates, tags and products.",
    params: [str("store_id", "Store id")],
    run: (db, args) => storeRepr(getStore(db, arg(args, "store_id"))),
  },
  {
    name: "get_delivery_product_info",
    description: "A product's details: name, id, store, price, attributes and tags.",
    params: [str("product_id", "Product id")],
    run: (db, args) => productRepr(getProduct(db, arg(args, "product_id"))),
  },
  {
    name: "delivery_store_search_recommand",
    description: "Search or recommend stores by keywords taken from what the user said.",
    params: [strings("keywords", "Keywords describing the store")],
    run: (db, args) => {
      const docs = new Map([...db.stores.values()].map((store) => [store.store_id, store.name + store.tags.join(",")]));
      const ranked = rerank(joinStrings(arg(args, "keywords")), docs).slice(0, 100);
      return ranked.map(({ id }) => storeStr(getStore(db, id))).join("\n");
    },
  },
  {
    name: "delivery_product_search_recommand",
    description: "Search or recommend products by keywords taken from what the user said.",
    params: [strings("keywords", "Keywords describing the product")],
    run: (db, args) => {
      const docs = new Map<string, string>();
      for (const product of db.registry.products.values()) {
        if (product.kind === "store") docs.set(product.product_id, `${product.store_name} ${product.name} ${pyStr(product.tags)}`);
      }
      const ranked = rerank(joinStrings(arg(args, "keywords")), docs).slice(0, 100);
      return ranked.map(({ id }) => productRepr(getProduct(db, id))).join("\n");
    },
  },
  {
    name: "create_delivery_order",
    description: "Create a delivery order from one store, with one or more products.",
    params: [
      str("user_id", "User id"),
      str("store_id", "Store id"),
      strings("product_ids", "Product ids"),
      param("product_cnts", { type: "array", items: { type: "integer" } }, "Quantity of each product"),
      str("address", "Delivery address"),
      str("dispatch_time", "When the rider leaves the store, yyyy-mm-dd HH:MM:SS"),
      strings("attributes", "The chosen attributes of each product", null),
      str("note", "Order note, e.g. dietary restrictions", ""),
    ],
    run: createOrder,
  },
  {
    name: "pay_delivery_order",
    description: "Pay a delivery order.",
    params: [str("order_id", "Order id")],
    run: (db, args) => {
      const order = ownOrder(db, arg(args, "order_id"));
      if (order.status !== "unpaid") return "Order is not in `unpaid` status.";
      order.status = "paid";
      storeOrder(db, order);
      return "Payment successful";
    },
  },
  {
    name: "get_delivery_order_status",
    description: "The status of a delivery order.",
    params: [str("order_id", "Order id")],
    run: (db, args) => ownOrder(db, arg(args, "order_id")).status,
  },
  {
    name: "cancel_delivery_order",
    description: "Cancel a delivery order.",
    params: [str("order_id", "Order id")],
    run: (db, args) => {
      const order = ownOrder(db, arg(args, "order_id"));
      pyAssert(order.status !== "cancelled", `Order ${pyStr(arg(args, "order_id"))} is already cancelled`);
      order.status = "cancelled";
      return answer(storeOrder(db, order), `Order ${order.order_id} has been cancelled.`);
    },
  },
  {
    name: "modify_delivery_order",
    description: "Change a delivery order's note.",
    params: [str("order_id", "Order id"), str("note", "The new note")],
    run: (db, args) => {
      const order = ownOrder(db, arg(args, "order_id"));
      order.note = arg(args, "note");
      return answer(storeOrder(db, order), `Order ${order.order_id} has been modified.`);
    },
  },
  {
    name: "search_delivery_orders",
    description: "The user's delivery orders with a status (default unpaid).",
    params: [str("user_id", "User id"), param("status", { type: "string", enum: ["unpaid", "paid", "delivered", "cancelled"] }, "Order status", "unpaid")],
    run: (db, args) => {
      const userId = arg(args, "user_id");
      checkUser(db, userId);
      const status = arg(args, "status");
      const found = [...(db.orders ?? new Map<string, Order>()).values()].filter(
        (order) => order.order_type === "delivery" && pyEquals(order.status, status) && order.user_id === userId,
      );
      return found.length === 0 ? "No delivery orders available" : found.map(orderStr).join("\n");
    },
  },
  {
    name: "get_delivery_order_detail",
    description: "A delivery order's details.",
    params: [str("order_id", "Order id")],
    run: (db, args) => {
      pyAssert(truthy(arg(args, "order_id")), "Order ID cannot be empty");
      return orderRepr(ownOrder(db, arg(args, "order_id")));
    },
  },
]);
