import { z } from "zod";

/** The task families. Each asks for one kind of change whose arguments or feasibility are hidden. */
export const Family = z.enum(["buy", "cancel", "pay", "swap"]);
export type Family = z.infer<typeof Family>;

/**
 * How a task ends when solved correctly: `ok` (the change is made) or the code of the
 * precondition that rules it out (then nothing may be written and the user is told why).
 */
export const Outcome = z.enum(["ok", "NOT_FOUND", "ITEM_LOCKED", "OUT_OF_STOCK", "LOW_BALANCE", "WRONG_STATE"]);
export type Outcome = z.infer<typeof Outcome>;

const name = z.string().min(1);
const count = z.number().int().positive();

/** What the user asks for, with the family as discriminant. */
export const Request = z.discriminatedUnion("family", [
  /** Buy `qty` of `item` for `user`, if possible. */
  z.object({ family: z.literal("buy"), user: name, item: name, qty: count }),
  /** Cancel `user`'s order of `item`, if it is still placed. The order id is hidden. */
  z.object({ family: z.literal("cancel"), user: name, item: name }),
  /** `user` pays `to` the price of `count` × `item`. The amount is hidden. */
  z.object({ family: z.literal("pay"), user: name, to: name, item: name, count }),
  /** Replace `user`'s order of `item` by `qty` × `newItem`: cancel, then buy, only if both succeed. */
  z.object({ family: z.literal("swap"), user: name, item: name, newItem: name, qty: count }),
]);
export type Request = z.infer<typeof Request>;
export type RequestOf<F extends Family> = Extract<Request, { family: F }>;
