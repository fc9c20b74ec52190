import { z } from "zod";
import { pyDict, pyFloat, pyInt, pyModel, pyOptional, pyStr, pyTaggedUnion } from "../../python/schema.js";
import { CreditCard, PERSON_NAME, postalAddress, tablesDb, userStart } from "../shared-model.js";

// The airline database (upstream's `FlightDB`), field for field in declaration order.

export const CabinClass = z.enum(["business", "economy", "basic_economy"]);
export type CabinClass = z.infer<typeof CabinClass>;

const SeatsByCabin = z.map(CabinClass, pyInt);

export const FlightDateAvailable = z.object({
  status: z.literal("available"),
  available_seats: SeatsByCabin,
  prices: SeatsByCabin,
});

type Clock = "actual" | "estimated";

/** A flight date past booking: its status, then its departure and arrival times, each actual or estimated. */
function timedStatus<S extends string, D extends Clock, A extends Clock>(status: S, departure: D, arrival: A) {
  const shape = { status: z.literal(status), [`${departure}_departure_time_est`]: pyStr, [`${arrival}_arrival_time_est`]: pyStr };
  return z.object(shape as { status: z.ZodLiteral<S> } & Record<`${D}_departure_time_est` | `${A}_arrival_time_est`, typeof pyStr>);
}

const FlightDateLanded = timedStatus("landed", "actual", "actual");
const FlightDateCancelled = z.object({ status: z.literal("cancelled") });
const FlightDateDelayed = timedStatus("delayed", "estimated", "estimated");
const FlightDateFlying = timedStatus("flying", "actual", "estimated");
const FlightDateOnTime = timedStatus("on time", "estimated", "estimated");
export const FlightDateStatus = pyTaggedUnion("status", [
  FlightDateAvailable,
  FlightDateLanded,
  FlightDateCancelled,
  FlightDateDelayed,
  FlightDateFlying,
  FlightDateOnTime,
]);
export type FlightDateStatus = z.infer<typeof FlightDateStatus>;

/** A route's two airports (IATA codes), on a flight and on a whole reservation. */
const ROUTE = { origin: pyStr, destination: pyStr };

/** Upstream's `FlightBase`: what a flight and a reservation's flight both start with. */
const FLIGHT_BASE = { flight_number: pyStr, ...ROUTE };

export const Flight = pyModel({
  ...FLIGHT_BASE,
  scheduled_departure_time_est: pyStr,
  scheduled_arrival_time_est: pyStr,
  dates: pyDict(FlightDateStatus),
});
export type Flight = z.infer<typeof Flight>;

export const Name = pyModel(PERSON_NAME);

export const Address = postalAddress(pyOptional(pyStr));

const GiftCard = z.object({ source: z.literal("gift_card"), id: pyStr, amount: pyFloat });
const Certificate = z.object({ source: z.literal("certificate"), id: pyStr, amount: pyFloat });
export const PaymentMethod = pyTaggedUnion("source", [CreditCard, GiftCard, Certificate]);
export type PaymentMethod = z.infer<typeof PaymentMethod>;

export const Passenger = pyModel({ ...PERSON_NAME, dob: pyStr });
export type Passenger = z.infer<typeof Passenger>;

export const User = pyModel({
  ...userStart(Name, Address),
  dob: pyStr,
  payment_methods: pyDict(PaymentMethod),
  saved_passengers: z.array(Passenger),
  membership: z.enum(["gold", "silver", "regular"]),
  reservations: z.array(pyStr),
});
export type User = z.infer<typeof User>;

export const ReservationFlight = pyModel({
  ...FLIGHT_BASE,
  date: pyStr,
  price: pyInt,
});
export type ReservationFlight = z.infer<typeof ReservationFlight>;

export const Payment = pyModel({ payment_id: pyStr, amount: pyInt });
export type Payment = z.infer<typeof Payment>;

export const Reservation = pyModel({
  reservation_id: pyStr,
  user_id: pyStr,
  ...ROUTE,
  flight_type: z.enum(["round_trip", "one_way"]),
  cabin: CabinClass,
  flights: z.array(ReservationFlight),
  passengers: z.array(Passenger),
  payment_history: z.array(Payment),
  created_at: pyStr,
  total_baggages: pyInt,
  nonfree_baggages: pyInt,
  insurance: z.enum(["yes", "no"]),
  status: pyOptional(z.literal("cancelled")),
});
export type Reservation = z.infer<typeof Reservation>;

export const FlightDb = tablesDb({ flights: Flight, users: User, reservations: Reservation });
export type FlightDb = z.infer<typeof FlightDb>;
