import { z } from "zod";
import { pyDict, pyFloat, pyInt, pyModel, pyOptional, pyStr, pyStrictModel, pyTaggedUnion } from "../../python/schema.js";

// The airline database (upstream's `FlightDB`), field for field in declaration order.

export const CabinClass = z.enum(["business", "economy", "basic_economy"]);
export type CabinClass = z.infer<typeof CabinClass>;

const SeatsByCabin = z.map(CabinClass, pyInt);

export const FlightDateAvailable = z.object({
  status: z.literal("available"),
  available_seats: SeatsByCabin,
  prices: SeatsByCabin,
});
const FlightDateLanded = z.object({
  status: z.literal("landed"),
  actual_departure_time_est: pyStr,
  actual_arrival_time_est: pyStr,
});
const FlightDateCancelled = z.object({ status: z.literal("cancelled") });
const FlightDateDelayed = z.object({
  status: z.literal("delayed"),
  estimated_departure_time_est: pyStr,
  estimated_arrival_time_est: pyStr,
});
const FlightDateFlying = z.object({
  status: z.literal("flying"),
  actual_departure_time_est: pyStr,
  estimated_arrival_time_est: pyStr,
});
const FlightDateOnTime = z.object({
  status: z.literal("on time"),
  estimated_departure_time_est: pyStr,
  estimated_arrival_time_est: pyStr,
});
export const FlightDateStatus = pyTaggedUnion("status", [
  FlightDateAvailable,
  FlightDateLanded,
  FlightDateCancelled,
  FlightDateDelayed,
  FlightDateFlying,
  FlightDateOnTime,
]);
export type FlightDateStatus = z.infer<typeof FlightDateStatus>;

export const Flight = pyModel({
  flight_number: pyStr,
  origin: pyStr,
  destination: pyStr,
  scheduled_departure_time_est: pyStr,
  scheduled_arrival_time_est: pyStr,
  dates: pyDict(FlightDateStatus),
});
export type Flight = z.infer<typeof Flight>;

export const Name = pyModel({ first_name: pyStr, last_name: pyStr });

export const Address = pyModel({
  address1: pyStr,
  address2: pyOptional(pyStr),
  city: pyStr,
  country: pyStr,
  state: pyStr,
  zip: pyStr,
});

const CreditCard = z.object({ source: z.literal("credit_card"), id: pyStr, brand: pyStr, last_four: pyStr });
const GiftCard = z.object({ source: z.literal("gift_card"), id: pyStr, amount: pyFloat });
const Certificate = z.object({ source: z.literal("certificate"), id: pyStr, amount: pyFloat });
export const PaymentMethod = pyTaggedUnion("source", [CreditCard, GiftCard, Certificate]);
export type PaymentMethod = z.infer<typeof PaymentMethod>;

export const Passenger = pyModel({ first_name: pyStr, last_name: pyStr, dob: pyStr });
export type Passenger = z.infer<typeof Passenger>;

export const User = pyModel({
  user_id: pyStr,
  name: Name,
  address: Address,
  email: pyStr,
  dob: pyStr,
  payment_methods: pyDict(PaymentMethod),
  saved_passengers: z.array(Passenger),
  membership: z.enum(["gold", "silver", "regular"]),
  reservations: z.array(pyStr),
});
export type User = z.infer<typeof User>;

export const ReservationFlight = pyModel({
  flight_number: pyStr,
  origin: pyStr,
  destination: pyStr,
  date: pyStr,
  price: pyInt,
});
export type ReservationFlight = z.infer<typeof ReservationFlight>;

export const Payment = pyModel({ payment_id: pyStr, amount: pyInt });
export type Payment = z.infer<typeof Payment>;

export const Reservation = pyModel({
  reservation_id: pyStr,
  user_id: pyStr,
  origin: pyStr,
  destination: pyStr,
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

export const FlightDb = pyStrictModel({
  flights: pyDict(Flight),
  users: pyDict(User),
  reservations: pyDict(Reservation),
});
export type FlightDb = z.infer<typeof FlightDb>;
