import {
  abs,
  add,
  hasKey,
  len,
  lessThan,
  type PyDict,
  pyDumps,
  pyEquals,
  PyException,
  type PyModel,
  pyStr,
  type PyValue,
  roundFloat,
  sorted,
  valueError,
} from "@envace/python-text";
import type { Database } from "../../database.js";
import { construct, strFields } from "../../python/pydantic.js";
import { Toolkit, type ToolDefinition, type ToolParam } from "../../toolkit.js";
import { calculateTool, lookupTool, param, STRING, STRING_LIST, transferToHumanAgents } from "../common.js";
import type { Order, OrderPayment, PaymentMethod, RetailDb, User, Variant } from "./model.js";
import {
  getOrder,
  writableOrder,
  getUser,
  getProduct,
  getItem,
  getPaymentMethod,
  changeGiftCardBalance,
  isPendingOrder,
  payment,
  checkItemsExist,
  zip,
  firstItem,
  replacement,
  lower,
  userIdByEmail,
} from "./lookups.js";

type Db = Database<RetailDb>;
type Args = ReadonlyMap<string, PyValue>;

const ORDER_ID = param("order_id", STRING, "The order id, such as '#W0000000'. Order ids start with a '#' symbol.");
const USER_ID = param("user_id", STRING, "The user id, such as 'sara_doe_496'.");
const PAYMENT_METHOD_ID = param(
  "payment_method_id",
  STRING,
  "The id of the payment method that pays or receives the price difference, such as 'gift_card_0000000' or 'credit_card_0000000'; find it in the user or order details.",
);
/** The tools that swap an order's items for other variants of their products: exchanging delivered items, changing pending ones. */
type SwapVerb = "exchange" | "change";

/** The parameters of the item-swapping tools. */
function swapParams(verb: SwapVerb): ToolParam[] {
  return [
    ORDER_ID,
    param("item_ids", STRING_LIST, `The ids of the items to ${verb}, such as '1008292230'. The list may repeat an id.`),
    param(
      "new_item_ids",
      STRING_LIST,
      "The ids of the new items, such as '1008292230', in the same order as item_ids; each must be of the same product as the item it replaces. The list may repeat an id.",
    ),
    PAYMENT_METHOD_ID,
  ];
}

/** What the two item-swapping tools check first, each with its own messages. */
interface SwapRules {
  status: Order["status"];
  wrongStatus: string;
  missing: (itemId: PyValue) => string;
  mismatch: string;
}

const SWAP_RULES: Record<SwapVerb, SwapRules> = {
  exchange: {
    status: "delivered",
    wrongStatus: "Non-delivered order cannot be exchanged",
    missing: (itemId) => `Number of ${pyStr(itemId)} not found.`,
    mismatch: "The number of items to be exchanged should match.",
  },
  change: {
    status: "pending",
    wrongStatus: "Non-pending order cannot be modified",
    missing: (itemId) => `${pyStr(itemId)} not found`,
    mismatch: "The number of items to be exchanged should match",
  },
};

/** An item swap's arguments, and the order they name. */
interface Swap {
  orderId: PyValue;
  itemIds: PyValue;
  newItemIds: PyValue;
  paymentMethodId: PyValue;
  order: Order;
}

function swapArgs(db: Db, args: Args, verb: SwapVerb): Swap {
  const orderId = args.get("order_id")!;
  const swap = {
    orderId,
    itemIds: args.get("item_ids")!,
    newItemIds: args.get("new_item_ids")!,
    paymentMethodId: args.get("payment_method_id")!,
    order: getOrder(db, orderId),
  };
  const rules = SWAP_RULES[verb];
  if (swap.order.status !== rules.status) throw valueError(rules.wrongStatus);
  checkItemsExist(swap.order, swap.itemIds, rules.missing);
  if (len(swap.itemIds) !== len(swap.newItemIds)) throw valueError(rules.mismatch);
  return swap;
}

/**
 * A tool that gives an order or a user a new address: `check` refuses the record, then the address
 * is built from the arguments, then `writable` opens the record for the change.
 */
function addressTool(
  name: string,
  description: string,
  key: ToolParam,
  check: (db: Db, id: PyValue) => void,
  writable: (db: Db, id: PyValue) => Order | User,
): ToolDefinition<RetailDb> {
  return {
    name,
    kind: "write",
    description,
    params: [key, ...ADDRESS_PARAMS],
    run: (db, args) => {
      const id = args.get(key.name)!;
      check(db, id);
      const address = newAddress(args) as User["address"];
      const record = writable(db, id);
      record.address = address;
      return record;
    },
  };
}

/** An item-swapping tool: its parameters and first checks come from its verb, `run` does the rest. */
function swapTool(verb: SwapVerb, tool: { name: string; description: string; run: (db: Db, swap: Swap) => PyValue }): ToolDefinition<RetailDb> {
  return { name: tool.name, kind: "write", description: tool.description, params: swapParams(verb), run: (db, args) => tool.run(db, swapArgs(db, args, verb)) };
}

/**
 * Each item's replacement, pair by pair (`distinct`: an item may not be swapped for itself), and
 * the summed price difference; `variant` is the last new variant.
 */
function replacements(
  db: Db,
  order: Order,
  itemIds: PyValue,
  newItemIds: PyValue,
  distinct: boolean,
): { difference: number | bigint; variant: Variant | undefined; pairs: [PyValue, PyValue][] } {
  let difference: number | bigint = 0n;
  let variant: Variant | undefined;
  const pairs = zip(itemIds, newItemIds);
  for (const [itemId, newItemId] of pairs) {
    if (distinct && pyEquals(itemId, newItemId)) throw valueError("The new item id should be different from the old item id");
    const swap = replacement(db, order, itemId, newItemId);
    variant = swap.variant;
    difference = add(difference, swap.difference);
  }
  return { difference, variant, pairs };
}

/** The payment method that pays a price difference; a gift card must hold enough (`short` says what for). */
function differencePayer(db: Db, order: Order, paymentMethodId: PyValue, difference: number | bigint, short: string): PaymentMethod {
  const method = getPaymentMethod(db, order.user_id, paymentMethodId);
  if (method.source === "gift_card" && lessThan(method.balance, difference)) throw valueError(`Insufficient gift card balance to pay for ${short}`);
  return method;
}
/** The address tools' string parameters, in their order (state before country, unlike the model). */
const ADDRESS_PARAMS = Object.entries({
  address1: "The first address line, such as '123 Main St'.",
  address2: "The second address line, such as 'Apt 1', or ''.",
  city: "The city, such as 'San Francisco'.",
  state: "The state, such as 'CA'.",
  country: "The country, such as 'USA'.",
  zip: "The zip code, such as '12345'.",
}).map(([name, description]) => param(name, STRING, description));

const USER_ADDRESS = {
  name: "UserAddress",
  fields: strFields("address1", "address2", "city", "country", "state", "zip"),
};

function newAddress(args: Args): PyModel {
  const kwargs: PyDict = new Map(["address1", "address2", "city", "state", "country", "zip"].map((name) => [name, args.get(name)!]));
  return construct(USER_ADDRESS, kwargs);
}

const tools: ToolDefinition<RetailDb>[] = [
  calculateTool(),
  {
    name: "cancel_pending_order",
    kind: "write",
    description:
      "Cancel a pending order; processed or delivered orders cannot be cancelled. Explain the cancellation and get the user's explicit confirmation (yes/no) first. The order status becomes 'cancelled' and every payment is refunded: at once for gift cards, in 5-7 business days otherwise. Returns the order after the cancellation.",
    params: [ORDER_ID, param("reason", STRING, "The reason for the cancellation: 'no longer needed' or 'ordered by mistake'.")],
    run: (db, args) => {
      const orderId = args.get("order_id")!;
      const reason = args.get("reason")!;
      const order = getOrder(db, orderId);
      if (order.status !== "pending") throw valueError("Non-pending order cannot be cancelled");
      if (!hasKey(REASONS, reason)) throw valueError("Invalid reason");
      const writable = writableOrder(db, orderId);
      const refunds: OrderPayment[] = [];
      for (const paid of writable.payment_history) {
        refunds.push(payment("refund", paid.amount, paid.payment_method_id));
        const user = getUser(db, writable.user_id);
        const method = getPaymentMethod(db, user.user_id, paid.payment_method_id);
        if (method.source === "gift_card") changeGiftCardBalance(db, user.user_id, paid.payment_method_id, paid.amount, 1);
      }
      writable.status = "cancelled";
      writable.cancel_reason = reason as Order["cancel_reason"];
      writable.payment_history.push(...refunds);
      return writable;
    },
  },
  swapTool("exchange", {
    name: "exchange_delivered_order_items",
    description:
      "Exchange items of a delivered order for other items of the same product. A delivered order can be returned or exchanged only once. Explain the exchange and get the user's explicit confirmation (yes/no) first. Returns the order after the exchange request.",
    run: (db, { orderId, itemIds, newItemIds, paymentMethodId, order }) => {
      const { difference } = replacements(db, order, itemIds, newItemIds, false);
      const diffPrice = typeof difference === "bigint" ? difference : roundFloat(difference, 2);
      differencePayer(db, order, paymentMethodId, diffPrice, "the price difference");
      const writable = writableOrder(db, orderId);
      writable.status = "exchange requested";
      writable.exchange_items = sorted(itemIds) as string[];
      writable.exchange_new_items = sorted(newItemIds) as string[];
      writable.exchange_payment_method_id = paymentMethodId as string;
      // Upstream assigns without validation, so an exchange of no items stores the int 0.
      (writable as unknown as PyModel).exchange_price_difference = diffPrice;
      return writable;
    },
  }),
  {
    name: "find_user_id_by_name_zip",
    kind: "read",
    description:
      "Find a user id by first name, last name and zip code; fails when no user matches. Look users up by email first, and use this only when the email is unknown or not found.",
    params: [
      param("first_name", STRING, "The customer's first name, such as 'John'."),
      param("last_name", STRING, "The customer's last name, such as 'Doe'."),
      param("zip", STRING, "The customer's zip code, such as '12345'."),
    ],
    run: (db, args) => {
      const firstName = args.get("first_name")!;
      const lastName = args.get("last_name")!;
      const zip = args.get("zip")!;
      for (const [userId, user] of db.tables.users) {
        if (
          user.name.first_name.toLowerCase() === lower(firstName) &&
          user.name.last_name.toLowerCase() === lower(lastName) &&
          pyEquals(user.address.zip, zip)
        ) {
          return userId;
        }
      }
      throw valueError("User not found");
    },
  },
  lookupTool(
    "find_user_id_by_email",
    "Find a user id by email; fails when no user has that email.",
    param("email", STRING, "The user's email, such as 'something@example.com'."),
    userIdByEmail,
  ),
  lookupTool("get_order_details", "Get the status and details of an order.", ORDER_ID, getOrder),
  lookupTool(
    "get_product_details",
    "Get the inventory details of a product: its variants, their options, availability and prices.",
    param("product_id", STRING, "The product id, such as '6086499569'. A product id is not an item id."),
    getProduct,
  ),
  lookupTool(
    "get_item_details",
    "Get the inventory details of an item (one variant of a product).",
    param("item_id", STRING, "The item id, such as '6086499569'. An item id is not a product id."),
    getItem,
  ),
  lookupTool("get_user_details", "Get the details of a user, including their payment methods and orders.", USER_ID, getUser),
  {
    name: "list_all_product_types",
    kind: "read",
    description:
      "List the name and product id of every product type (there are 50). Each product type has several items with their own item ids and options. Returns a JSON object from product name to product id, sorted by name.",
    params: [],
    run: (db) => {
      const byName: PyDict = new Map();
      for (const product of db.tables.products.values()) byName.set(product.name, product.product_id);
      return pyDumps(byName, { sortKeys: true });
    },
  },
  addressTool(
    "modify_pending_order_address",
    "Change the shipping address of a pending order. Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order after the change.",
    ORDER_ID,
    (db, orderId) => {
      if (!isPendingOrder(getOrder(db, orderId))) throw valueError("Non-pending order cannot be modified");
    },
    writableOrder,
  ),
  swapTool("change", {
    name: "modify_pending_order_items",
    description:
      "Change items of a pending order to other items of the same product. This can be done only once per pending order. Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order after the change.",
    run: (db, { orderId, itemIds, newItemIds, paymentMethodId, order }) => {
      const { difference: diffPrice, variant, pairs } = replacements(db, order, itemIds, newItemIds, true);
      const method = differencePayer(db, order, paymentMethodId, diffPrice, "the new item");
      const writable = writableOrder(db, orderId);
      writable.payment_history.push(payment(lessThan(0n, diffPrice) ? "payment" : "refund", abs(diffPrice), paymentMethodId as string));
      if (method.source === "gift_card") changeGiftCardBalance(db, writable.user_id, paymentMethodId as string, diffPrice, -1);
      for (const [itemId, newItemId] of pairs) {
        const item = firstItem(writable, itemId)!;
        // Upstream gives every changed item the price and options of the last new variant.
        item.item_id = newItemId as string;
        item.price = variant!.price;
        item.options = variant!.options;
      }
      writable.status = "pending (item modified)";
      return writable;
    },
  }),
  {
    name: "modify_pending_order_payment",
    kind: "write",
    description:
      "Change the payment method of a pending order. Explain the change and get the user's explicit confirmation (yes/no) first. Returns the order after the change.",
    params: [ORDER_ID, PAYMENT_METHOD_ID],
    run: (db, args) => {
      const orderId = args.get("order_id")!;
      const paymentMethodId = args.get("payment_method_id")!;
      const order = getOrder(db, orderId);
      if (!isPendingOrder(order)) throw valueError("Non-pending order cannot be modified");
      const method = getPaymentMethod(db, order.user_id, paymentMethodId);
      const first = order.payment_history[0];
      if (order.payment_history.length !== 1 || first?.transaction_type !== "payment") {
        throw valueError("There should be exactly one payment for a pending order");
      }
      if (pyEquals(first.payment_method_id, paymentMethodId)) {
        throw valueError("The new payment method should be different from the current one");
      }
      const amount = first.amount;
      if (method.source === "gift_card" && method.balance < amount) {
        throw valueError("Insufficient gift card balance to pay for the order");
      }
      const writable = writableOrder(db, orderId);
      const newMethodId = paymentMethodId as string;
      writable.payment_history.push(payment("payment", amount, newMethodId), payment("refund", amount, first.payment_method_id));
      if (method.source === "gift_card") changeGiftCardBalance(db, writable.user_id, newMethodId, amount, -1);
      const oldMethod = getPaymentMethod(db, writable.user_id, first.payment_method_id);
      if (oldMethod.source === "gift_card") changeGiftCardBalance(db, writable.user_id, first.payment_method_id, amount, 1);
      return writable;
    },
  },
  addressTool(
    "modify_user_address",
    "Change the default address of a user. Explain the change and get the user's explicit confirmation (yes/no) first. Returns the user after the change.",
    USER_ID,
    getUser,
    (db, userId) => db.mutable("users", userId as string)!,
  ),
  {
    name: "return_delivered_order_items",
    kind: "write",
    description:
      "Return items of a delivered order; the order status becomes 'return requested' and the user receives an email about how and where to send the items. Explain the return and get the user's explicit confirmation (yes/no) first. Returns the order after the return request.",
    params: [
      ORDER_ID,
      param("item_ids", STRING_LIST, "The ids of the items to return, such as '1008292230'. The list may repeat an id."),
      param(
        "payment_method_id",
        STRING,
        "The id of the payment method that receives the refund, such as 'gift_card_0000000' or 'credit_card_0000000': the original payment method or a gift card.",
      ),
    ],
    run: (db, args) => {
      const orderId = args.get("order_id")!;
      const itemIds = args.get("item_ids")!;
      const paymentMethodId = args.get("payment_method_id")!;
      const order = getOrder(db, orderId);
      if (order.status !== "delivered") throw valueError("Non-delivered order cannot be returned");
      const user = getUser(db, order.user_id);
      const method = getPaymentMethod(db, user.user_id, paymentMethodId);
      const original = order.payment_history[0];
      if (method.source !== "gift_card") {
        if (original === undefined) throw new PyException("IndexError", "list index out of range");
        if (!pyEquals(paymentMethodId, original.payment_method_id)) {
          throw valueError("Payment method should be the original payment method");
        }
      }
      checkItemsExist(order, itemIds, () => "Some item not found");
      const writable = writableOrder(db, orderId);
      writable.status = "return requested";
      writable.return_items = sorted(itemIds) as string[];
      writable.return_payment_method_id = paymentMethodId as string;
      return writable;
    },
  },
  transferToHumanAgents(),
];

const REASONS: ReadonlyMap<string, true> = new Map([
  ["no longer needed", true],
  ["ordered by mistake", true],
]);

/** The 16 agent tools of the retail domain. */
export const retailTools = new Toolkit<RetailDb>("RetailTools", tools);
