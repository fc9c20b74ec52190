import { z } from "zod";
import { pyDict, pyModel, pyStr, pyStrictModel } from "../python/schema.js";

// Model parts the τ² databases declare alike (upstream repeats them per domain).

/** A person's name: airline's `Name`, the start of its `Passenger`, and retail's `UserName`. */
export const PERSON_NAME = { first_name: pyStr, last_name: pyStr };

/** A postal address; only `address2` differs between the domains (airline's may be None). */
export function postalAddress<T extends z.ZodType>(address2: T) {
  return pyModel({ address1: pyStr, address2, city: pyStr, country: pyStr, state: pyStr, zip: pyStr });
}

/** A saved credit card, the one payment method both domains describe the same way. */
export const CreditCard = z.object({ source: z.literal("credit_card"), id: pyStr, brand: pyStr, last_four: pyStr });

/** A user record's first four fields in both domains, with each domain's name and address models. */
export function userStart<N extends z.ZodType, A extends z.ZodType>(name: N, address: A) {
  return { user_id: pyStr, name, address, email: pyStr };
}

/** A database root: tables, each a dict of one model by id, and no other field (`extra="forbid"`). */
export function tablesDb<T extends Record<string, z.ZodType>>(tables: T) {
  const shape = Object.fromEntries(Object.entries(tables).map(([name, model]) => [name, pyDict(model)]));
  return pyStrictModel(shape as { [K in keyof T]: z.ZodMap<z.ZodString, T[K]> });
}
