import { z } from "zod";

/**
 * The hidden state of one shop: users with balances, items with prices and stock, orders, and the
 * log of rejected writes. Money and quantities are whole numbers.
 */
export const OrderState = z.enum(["placed", "shipped", "cancelled"]);
export type OrderState = z.infer<typeof OrderState>;

export const User = z.object({ balance: z.number().int().nonnegative() });
export type User = z.infer<typeof User>;

export const Item = z.object({
  price: z.number().int().positive(),
  stock: z.number().int().nonnegative(),
  /** A locked item cannot be bought. */
  locked: z.boolean(),
});
export type Item = z.infer<typeof Item>;

export const Order = z.object({
  user: z.string(),
  item: z.string(),
  qty: z.number().int().positive(),
  /** What was paid, refunded in full on cancellation. */
  cost: z.number().int().nonnegative(),
  state: OrderState,
});
export type Order = z.infer<typeof Order>;

/** A write the shop refused. Part of the state: a failed write is not free. */
export const Rejection = z.object({ tool: z.string(), code: z.string() });
export type Rejection = z.infer<typeof Rejection>;

export const World = z.object({
  users: z.record(z.string(), User),
  items: z.record(z.string(), Item),
  /** Keyed by order id (`o1`, `o2`, …); insertion order is creation order. */
  orders: z.record(z.string(), Order),
  rejected: z.array(Rejection),
});
export type World = z.infer<typeof World>;

export function cloneWorld(world: World): World {
  return structuredClone(world);
}
