// The retail database's lookups and the checks every tool makes before it writes, with upstream's
// exact messages: shared by the tools of ./tools.ts.
import {
  add,
  attributeError,
  count,
  getKey,
  hasKey,
  iterate,
  pyEquals,
  pyStr,
  pyTypeName,
  type PyValue,
  roundFloat,
  sub,
  valueError,
} from "@envace/python-text";
import type { Database } from "../../database.js";
import type { Order, OrderPayment, PaymentMethod, Product, RetailDb, User, Variant } from "./model.js";

type Db = Database<RetailDb>;

export function getOrder(db: Db, orderId: PyValue): Order {
  const order = getKey(db.tables.orders, orderId);
  if (order === undefined) throw valueError("Order not found");
  return order;
}

/** The order, copied for writing; call only after the checks that may reject the call. */
export function writableOrder(db: Db, orderId: PyValue): Order {
  getOrder(db, orderId);
  return db.mutable("orders", orderId as string)!;
}

export function getUser(db: Db, userId: PyValue): User {
  const user = getKey(db.tables.users, userId);
  if (user === undefined) throw valueError("User not found");
  return user;
}

export function getProduct(db: Db, productId: PyValue): Product {
  const product = getKey(db.tables.products, productId);
  if (product === undefined) throw valueError("Product not found");
  return product;
}

export function getItem(db: Db, itemId: PyValue): Variant {
  for (const product of db.tables.products.values()) {
    if (hasKey(product.variants, itemId)) return product.variants.get(itemId as string)!;
  }
  throw valueError("Item not found");
}

function getVariant(db: Db, productId: PyValue, variantId: PyValue): Variant {
  const product = getProduct(db, productId);
  const variant = getKey(product.variants, variantId);
  if (variant === undefined) throw valueError("Variant not found");
  return variant;
}

export function getPaymentMethod(db: Db, userId: PyValue, paymentMethodId: PyValue): PaymentMethod {
  const user = getUser(db, userId);
  const method = getKey(user.payment_methods, paymentMethodId);
  if (method === undefined) throw valueError("Payment method not found");
  return method;
}

/** The payment method inside a writable copy of its user. */
function writablePaymentMethod(db: Db, userId: string, paymentMethodId: string): PaymentMethod {
  return db.mutable("users", userId)!.payment_methods.get(paymentMethodId)!;
}

/** Credit a gift card and round its balance to cents, as upstream does after every change. */
export function changeGiftCardBalance(db: Db, userId: string, paymentMethodId: string, delta: number | bigint, sign: 1 | -1): void {
  const method = writablePaymentMethod(db, userId, paymentMethodId);
  if (method.source !== "gift_card") return;
  const balance = sign === 1 ? add(method.balance, delta) : sub(method.balance, delta);
  method.balance = roundFloat(Number(balance), 2);
}

export function isPendingOrder(order: Order): boolean {
  return order.status.includes("pending");
}

export function payment(transactionType: "payment" | "refund", amount: number | bigint, paymentMethodId: string): OrderPayment {
  return { transaction_type: transactionType, amount: Number(amount), payment_method_id: paymentMethodId };
}

/** `item_ids.count(x) > all_item_ids.count(x)` for every requested id, in order. */
export function checkItemsExist(order: Order, itemIds: PyValue, message: (itemId: PyValue) => string): void {
  const allItemIds = order.items.map((item) => item.item_id);
  for (const itemId of iterate(itemIds)) {
    if (count(itemIds, itemId) > count(allItemIds, itemId)) throw valueError(message(itemId));
  }
}

export function zip(a: PyValue, b: PyValue): [PyValue, PyValue][] {
  const left = iterate(a);
  const right = iterate(b);
  return left.slice(0, Math.min(left.length, right.length)).map((item, i) => [item, right[i]!]);
}

export function firstItem(order: Order, itemId: PyValue): Order["items"][number] | undefined {
  return order.items.find((item) => pyEquals(item.item_id, itemId));
}

/** The variant an item of the order is to become (of the same product, and available) and the price difference. */
export function replacement(db: Db, order: Order, itemId: PyValue, newItemId: PyValue): { variant: Variant; difference: number } {
  const item = firstItem(order, itemId);
  if (item === undefined) throw valueError(`Item ${pyStr(itemId)} not found`);
  const variant = getVariant(db, item.product_id, newItemId);
  if (!variant.available) throw valueError(`New item ${pyStr(newItemId)} not found or available`);
  return { variant, difference: variant.price - item.price };
}

export function lower(value: PyValue): string {
  if (typeof value !== "string") throw attributeError(`'${pyTypeName(value)}' object has no attribute 'lower'`);
  return value.toLowerCase();
}

export function userIdByEmail(db: Db, email: PyValue): string {
  for (const [userId, user] of db.tables.users) {
    if (user.email.toLowerCase() === lower(email)) return userId;
  }
  throw valueError("User not found");
}
