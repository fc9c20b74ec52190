import { attributeError, getKey, isPyModel, iterate, keyError, pyStr, pyTypeName, type PyValue, valueError } from "@envace/python-text";
import type { Database } from "../../database.js";
import { construct, type ModelSpec } from "../../python/pydantic.js";
import type { CabinClass, Flight, FlightDateStatus, FlightDb, Reservation, User } from "./model.js";

// Upstream's `_get_*` lookups and the argument handling the airline tools share.

export type Db = Database<FlightDb>;

/** `value.name` on a validated model; anything else raises Python's AttributeError. */
export function attr(value: PyValue, name: string): PyValue {
  if (isPyModel(value) && name in value) return value[name]!;
  throw attributeError(`'${pyTypeName(value)}' object has no attribute '${name}'`);
}

/** `[Model(**x) for x in items]` when every item is a dict; the items unchanged otherwise. */
export function modelsIfAllDicts(items: PyValue, spec: ModelSpec): PyValue {
  const all = iterate(items);
  if (!all.every((item) => item instanceof Map)) return items;
  return all.map((item) => construct(spec, item));
}

export function getUser(db: Db, userId: PyValue): User {
  const user = getKey(db.tables.users, userId);
  if (user === undefined) throw valueError(`User ${pyStr(userId)} not found`);
  return user;
}

export function getReservation(db: Db, reservationId: PyValue): Reservation {
  const reservation = getKey(db.tables.reservations, reservationId);
  if (reservation === undefined) throw valueError(`Reservation ${pyStr(reservationId)} not found`);
  return reservation;
}

export function getFlight(db: Db, flightNumber: PyValue): Flight {
  const flight = getKey(db.tables.flights, flightNumber);
  if (flight === undefined) throw valueError(`Flight ${pyStr(flightNumber)} not found`);
  return flight;
}

export function getFlightInstance(db: Db, flightNumber: PyValue, date: PyValue): FlightDateStatus {
  const flight = getFlight(db, flightNumber);
  const instance = getKey(flight.dates, date);
  if (instance === undefined) throw valueError(`Flight ${pyStr(flightNumber)} not found on date ${pyStr(date)}`);
  return instance;
}

/** `mapping[cabin]` with Python's KeyError for a cabin the mapping lacks. */
export function byCabin(mapping: ReadonlyMap<CabinClass, bigint>, cabin: PyValue): bigint {
  const value = getKey(mapping as ReadonlyMap<string, bigint>, cabin);
  if (value === undefined) throw keyError(cabin);
  return value;
}
