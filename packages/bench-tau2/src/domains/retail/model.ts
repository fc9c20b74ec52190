import { z } from "zod";
import { pyBool, pyDict, pyFloat, pyModel, pyOptional, pyStr, pyTaggedUnion } from "../../python/schema.js";
import { CreditCard, PERSON_NAME, postalAddress, tablesDb, userStart } from "../shared-model.js";

// The retail database, field for field and in upstream's declaration order (the order is
// what the agent sees in tool responses).

export const Variant = pyModel({
  item_id: pyStr,
  options: pyDict(pyStr),
  available: pyBool,
  price: pyFloat,
});
export type Variant = z.infer<typeof Variant>;

export const Product = pyModel({
  name: pyStr,
  product_id: pyStr,
  variants: pyDict(Variant),
});
export type Product = z.infer<typeof Product>;

export const UserName = pyModel(PERSON_NAME);
export type UserName = z.infer<typeof UserName>;

export const UserAddress = postalAddress(pyStr);
export type UserAddress = z.infer<typeof UserAddress>;

export { CreditCard };
export const GiftCard = z.object({
  source: z.literal("gift_card"),
  id: pyStr,
  balance: pyFloat,
});
export const Paypal = z.object({
  source: z.literal("paypal"),
  id: pyStr,
});
export const PaymentMethod = pyTaggedUnion("source", [CreditCard, GiftCard, Paypal]);
export type PaymentMethod = z.infer<typeof PaymentMethod>;

export const User = pyModel({
  ...userStart(UserName, UserAddress),
  payment_methods: pyDict(PaymentMethod),
  orders: z.array(pyStr),
});
export type User = z.infer<typeof User>;

export const OrderFulfillment = pyModel({
  tracking_id: z.array(pyStr),
  item_ids: z.array(pyStr),
});
export type OrderFulfillment = z.infer<typeof OrderFulfillment>;

export const OrderItem = pyModel({
  name: pyStr,
  product_id: pyStr,
  item_id: pyStr,
  price: pyFloat,
  options: pyDict(pyStr),
});
export type OrderItem = z.infer<typeof OrderItem>;

export const OrderPayment = pyModel({
  transaction_type: z.enum(["payment", "refund"]),
  amount: pyFloat,
  payment_method_id: pyStr,
});
export type OrderPayment = z.infer<typeof OrderPayment>;

export const OrderStatus = z.enum(["processed", "pending", "pending (item modified)", "delivered", "cancelled", "exchange requested", "return requested"]);

export const Order = pyModel({
  order_id: pyStr,
  user_id: pyStr,
  address: UserAddress,
  items: z.array(OrderItem),
  status: OrderStatus,
  fulfillments: z.array(OrderFulfillment),
  payment_history: z.array(OrderPayment),
  cancel_reason: pyOptional(z.enum(["no longer needed", "ordered by mistake"])),
  exchange_items: pyOptional(z.array(pyStr)),
  exchange_new_items: pyOptional(z.array(pyStr)),
  exchange_payment_method_id: pyOptional(pyStr),
  exchange_price_difference: pyOptional(pyFloat),
  return_items: pyOptional(z.array(pyStr)),
  return_payment_method_id: pyOptional(pyStr),
});
export type Order = z.infer<typeof Order>;

export const RetailDb = tablesDb({ products: Product, users: User, orders: Order });
export type RetailDb = z.infer<typeof RetailDb>;
