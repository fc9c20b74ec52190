import type { JsonObject } from "@envace/protocol";
import {
  add,
  hasKey,
  iterate,
  keyError,
  len,
  lessThan,
  max,
  mul,
  pyDeepCopy,
  pyEquals,
  type PyModel,
  pyStr,
  type PyValue,
  sub,
  valueError,
} from "@envace/python-text";
import { construct, float, int, list, literal, model, str, strFields, optional, type ModelSpec } from "../../python/pydantic.js";
import { Toolkit, type ToolDefinition } from "../../toolkit.js";
import { calculateTool, INTEGER, lookupTool, param, STRING, transferToHumanAgents } from "../common.js";
import { getFlightStatus, listAllAirports, searchDirectFlightTool, searchOnestopFlight } from "./flights.js";
import { attr, byCabin, type Db, getFlight, getFlightInstance, getReservation, getUser, modelsIfAllDicts } from "./lookup.js";
import type { CabinClass, FlightDb, PaymentMethod, Reservation } from "./model.js";

// The airline agent's tools: bookings and changes to them here, flight searches in flights.ts.

// The models the tools build from arguments, for pydantic's validation messages.
const FLIGHT_INFO: ModelSpec = { name: "FlightInfo", fields: strFields("flight_number", "date") };
const PASSENGER: ModelSpec = { name: "Passenger", fields: strFields("first_name", "last_name", "dob") };
const PAYMENT: ModelSpec = {
  name: "Payment",
  fields: [
    { name: "payment_id", type: str },
    { name: "amount", type: int },
  ],
};
const CABIN = literal("business", "economy", "basic_economy");
const RESERVATION_FLIGHT: ModelSpec = {
  name: "ReservationFlight",
  fields: [...strFields("flight_number", "origin", "destination", "date"), { name: "price", type: int }],
};
const RESERVATION: ModelSpec = {
  name: "Reservation",
  fields: [
    ...strFields("reservation_id", "user_id", "origin", "destination"),
    { name: "flight_type", type: literal("round_trip", "one_way") },
    { name: "cabin", type: CABIN },
    { name: "flights", type: list(model(RESERVATION_FLIGHT)) },
    { name: "passengers", type: list(model(PASSENGER)) },
    { name: "payment_history", type: list(model(PAYMENT)) },
    { name: "created_at", type: str },
    { name: "total_baggages", type: int },
    { name: "nonfree_baggages", type: int },
    { name: "insurance", type: literal("yes", "no") },
    { name: "status", type: optional(literal("cancelled")), default: null },
  ],
};
const CERTIFICATE: ModelSpec = {
  name: "Certificate",
  fields: [
    { name: "source", type: literal("certificate") },
    { name: "id", type: str },
    { name: "amount", type: float },
  ],
};

/** The current time in the airline domain; the policy states the same. */
const NOW = "2024-05-15T15:00:00";
const NEW_RESERVATION_IDS = ["HATHAT", "HATHAU", "HATHAV"];
const NEW_CERTIFICATE_IDS = ["3221322", "3221323", "3221324"];

/** A segment to add to a reservation: the flight must be available that day with a seat in the cabin for every passenger. */
function newSegment(db: Db, flightInfo: PyValue, cabin: PyValue, passengerCount: bigint): PyModel {
  const flightNumber = attr(flightInfo, "flight_number");
  const flight = getFlight(db, flightNumber);
  const date = attr(flightInfo, "date");
  const instance = getFlightInstance(db, flightNumber, date);
  if (instance.status !== "available") {
    throw valueError(`Flight ${pyStr(flightNumber)} not available on date ${pyStr(date)}`);
  }
  if (byCabin(instance.available_seats, cabin) < passengerCount) {
    throw valueError(`Not enough seats on flight ${pyStr(flightNumber)}`);
  }
  return construct(
    RESERVATION_FLIGHT,
    new Map<string, PyValue>([
      ["flight_number", flightNumber],
      ["date", date],
      ["price", byCabin(instance.prices, cabin)],
      ["origin", flight.origin],
      ["destination", flight.destination],
    ]),
  );
}

/**
 * Charge a reservation change: certificates are refused, gift cards must cover the price and
 * are debited at once. Returns the reservation copied for writing, with the payment recorded
 * unless nothing is charged.
 */
function chargeChange(db: Db, reservationId: PyValue, userId: string, paymentId: PyValue, totalPrice: PyValue): PyModel & Reservation {
  const user = getUser(db, userId);
  if (!hasKey(user.payment_methods, paymentId)) throw valueError("Payment method not found");
  const method = user.payment_methods.get(paymentId as string)!;
  if (method.source === "certificate") throw valueError("Certificate cannot be used to update reservation");
  if (method.source === "gift_card" && lessThan(method.amount, totalPrice)) throw valueError("Gift card balance is not enough");
  if (method.source === "gift_card") {
    const writable = db.mutable("users", userId)!.payment_methods.get(paymentId as string) as PaymentMethod & { amount: number };
    writable.amount = Number(sub(writable.amount, totalPrice, "-="));
  }
  const payment = pyEquals(totalPrice, 0n)
    ? null
    : construct(
        PAYMENT,
        new Map<string, PyValue>([
          ["payment_id", paymentId],
          ["amount", totalPrice],
        ]),
      );
  const writable = db.mutable("reservations", reservationId as string)! as unknown as PyModel & Reservation;
  if (payment !== null) writable.payment_history.push(payment as unknown as Reservation["payment_history"][number]);
  return writable;
}

/**
 * A change the user pays for (baggage, flights): charge `totalPrice` to the `payment_id` argument,
 * then set the changed fields in order. Upstream assigns the arguments (bags, cabin) without validation.
 * The field names are the reservation's own, fixed here; only the values come from the agent.
 */
function paidChange(
  db: Db,
  args: ReadonlyMap<string, PyValue>,
  reservation: Reservation,
  totalPrice: PyValue,
  changes: readonly (readonly [field: keyof Reservation, value: PyValue])[],
): PyModel {
  const writable: PyModel = chargeChange(db, args.get("reservation_id")!, reservation.user_id, args.get("payment_id")!, totalPrice);
  for (const [field, value] of changes) writable[field] = value;
  return writable;
}

const RESERVATION_ID = (example: string): ReturnType<typeof param> => param("reservation_id", STRING, `The reservation id, such as '${example}'.`);
const PAYMENT_ID = param(
  "payment_id",
  STRING,
  "The id of a payment method in the user's profile, such as 'credit_card_7815826', 'gift_card_7815826' or 'certificate_7815826'.",
);
/** Pydantic's JSON schema of a list of `title` models whose fields are all required. */
function modelListSchema(title: string, fields: [name: string, type: string, description: string][]): JsonObject {
  // Pydantic titles a field by its name: words split at underscores, each capitalised.
  const fieldTitle = (name: string): string =>
    name
      .split("_")
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join(" ");
  const properties = Object.fromEntries(fields.map(([name, type, description]) => [name, { description, title: fieldTitle(name), type }]));
  return { items: { properties, required: fields.map(([name]) => name), title, type: "object" }, type: "array" };
}

const FLIGHT_INFO_SCHEMA = modelListSchema("FlightInfo", [
  ["flight_number", "string", "The flight number, such as 'HAT001'."],
  ["date", "string", "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'."],
]);
const PASSENGERS_SCHEMA = modelListSchema("Passenger", [
  ["first_name", "string", "The passenger's first name."],
  ["last_name", "string", "The passenger's last name."],
  ["dob", "string", "The date of birth in the format 'YYYY-MM-DD'."],
]);
const PAYMENTS_SCHEMA = modelListSchema("Payment", [
  ["payment_id", "string", "The id of the payment method."],
  ["amount", "integer", "The amount in dollars."],
]);
const CABIN_SCHEMA: JsonObject = { enum: ["business", "economy", "basic_economy"], type: "string" };

const tools: ToolDefinition<FlightDb>[] = [
  {
    name: "book_reservation",
    kind: "write",
    description: "Book a reservation.",
    params: [
      param("user_id", STRING, "The id of the user who books, such as 'sara_doe_496'."),
      param("origin", STRING, "The IATA code of the origin city, such as 'SFO'."),
      param("destination", STRING, "The IATA code of the destination city, such as 'JFK'."),
      param("flight_type", { enum: ["round_trip", "one_way"], type: "string" }, "The type of trip: 'one_way' or 'round_trip'."),
      param("cabin", CABIN_SCHEMA, "The cabin class: 'basic_economy', 'economy' or 'business'."),
      param("flights", FLIGHT_INFO_SCHEMA, "Every flight segment of the reservation."),
      param("passengers", PASSENGERS_SCHEMA, "Every passenger of the reservation."),
      param("payment_methods", PAYMENTS_SCHEMA, "The payment methods and the amount each pays."),
      param("total_baggages", INTEGER, "The total number of checked bags."),
      param("nonfree_baggages", INTEGER, "The number of checked bags that are paid for."),
      param("insurance", { enum: ["yes", "no"], type: "string" }, "Whether the reservation has travel insurance: 'yes' or 'no'."),
    ],
    run: (db, args) => {
      const userId = args.get("user_id")!;
      const cabin = args.get("cabin")!;
      const insurance = args.get("insurance")!;
      const nonfreeBaggages = args.get("nonfree_baggages")!;
      const flights = modelsIfAllDicts(args.get("flights")!, FLIGHT_INFO);
      const passengers = modelsIfAllDicts(args.get("passengers")!, PASSENGER);
      const paymentMethods = modelsIfAllDicts(args.get("payment_methods")!, PAYMENT);
      const user = getUser(db, userId);
      const reservationId = NEW_RESERVATION_IDS.find((id) => !db.tables.reservations.has(id));
      if (reservationId === undefined) throw valueError("Too many reservations");
      const reservation = construct(
        RESERVATION,
        new Map<string, PyValue>([
          ["reservation_id", reservationId],
          ["user_id", userId],
          ["origin", args.get("origin")!],
          ["destination", args.get("destination")!],
          ["flight_type", args.get("flight_type")!],
          ["cabin", cabin],
          ["flights", []],
          ["passengers", pyDeepCopy(passengers)],
          ["payment_history", pyDeepCopy(paymentMethods)],
          ["created_at", NOW],
          ["total_baggages", args.get("total_baggages")!],
          ["nonfree_baggages", nonfreeBaggages],
          ["insurance", insurance],
        ]),
      ) as unknown as Reservation;

      const passengerCount = BigInt(len(passengers));
      let totalPrice: PyValue = 0n;
      for (const flightInfo of iterate(flights)) {
        const segment = newSegment(db, flightInfo, cabin, passengerCount) as unknown as Reservation["flights"][number];
        reservation.flights.push(segment);
        totalPrice = add(totalPrice, segment.price * passengerCount, "+=");
      }
      if (pyEquals(insurance, "yes")) totalPrice = add(totalPrice, 30n * passengerCount, "+=");
      totalPrice = add(totalPrice, mul(50n, nonfreeBaggages), "+=");

      const payments = iterate(paymentMethods);
      for (const paymentMethod of payments) {
        const paymentId = attr(paymentMethod, "payment_id");
        const amount = attr(paymentMethod, "amount");
        if (!hasKey(user.payment_methods, paymentId)) throw valueError(`Payment method ${pyStr(paymentId)} not found`);
        const method = user.payment_methods.get(paymentId as string)!;
        if ((method.source === "gift_card" || method.source === "certificate") && lessThan(method.amount, amount)) {
          throw valueError(`Not enough balance in payment method ${pyStr(paymentId)}`);
        }
      }
      let totalPayment: PyValue = 0n;
      for (const paymentMethod of payments) totalPayment = add(totalPayment, attr(paymentMethod, "amount"));
      if (!pyEquals(totalPayment, totalPrice)) {
        throw valueError(`Payment amount does not add up, total price is ${pyStr(totalPrice)}, but paid ${pyStr(totalPayment)}`);
      }

      const writableUser = db.mutable("users", userId as string)!;
      for (const paymentMethod of payments) {
        const paymentId = attr(paymentMethod, "payment_id") as string;
        const method = writableUser.payment_methods.get(paymentId);
        if (method === undefined) throw keyError(paymentId);
        if (method.source === "gift_card") method.amount = Number(sub(method.amount, attr(paymentMethod, "amount"), "-="));
        else if (method.source === "certificate") writableUser.payment_methods.delete(paymentId);
      }
      for (const segment of reservation.flights) {
        const instance = db.mutable("flights", segment.flight_number)!.dates.get(segment.date)!;
        if (instance.status !== "available") continue;
        const cabinClass = cabin as CabinClass;
        instance.available_seats.set(cabinClass, instance.available_seats.get(cabinClass)! - passengerCount);
      }
      db.tables.reservations.set(reservationId, reservation);
      writableUser.reservations.push(reservationId);
      return reservation;
    },
  },
  calculateTool(),
  {
    name: "cancel_reservation",
    kind: "write",
    description: "Cancel a whole reservation; every payment is refunded. Returns the updated reservation.",
    params: [RESERVATION_ID("ZFA04Y")],
    run: (db, args) => {
      const reservationId = args.get("reservation_id")!;
      getReservation(db, reservationId);
      const reservation = db.mutable("reservations", reservationId as string)!;
      const refunds = reservation.payment_history.map((payment) => ({ payment_id: payment.payment_id, amount: -payment.amount }));
      reservation.payment_history.push(...refunds);
      reservation.status = "cancelled";
      return reservation;
    },
  },
  lookupTool("get_reservation_details", "Get the details of a reservation.", RESERVATION_ID("8JX2WO"), getReservation),
  lookupTool(
    "get_user_details",
    "Get the details of a user, including their reservations.",
    param("user_id", STRING, "The user id, such as 'sara_doe_496'."),
    getUser,
  ),
  listAllAirports,
  searchDirectFlightTool,
  searchOnestopFlight,
  {
    name: "send_certificate",
    kind: "write",
    description: "Send a travel certificate of the given amount to a user. Use with care.",
    params: [param("user_id", STRING, "The id of the user, such as 'sara_doe_496'."), param("amount", INTEGER, "The amount of the certificate.")],
    run: (db, args) => {
      const userId = args.get("user_id")!;
      const amount = args.get("amount")!;
      const user = getUser(db, userId);
      for (const id of NEW_CERTIFICATE_IDS) {
        const paymentId = `certificate_${id}`;
        if (user.payment_methods.has(paymentId)) continue;
        const certificate = construct(
          CERTIFICATE,
          new Map<string, PyValue>([
            ["id", paymentId],
            ["amount", amount],
            ["source", "certificate"],
          ]),
        ) as unknown as PaymentMethod;
        db.mutable("users", user.user_id)!.payment_methods.set(paymentId, certificate);
        return `Certificate ${paymentId} added to user ${pyStr(userId)} with amount ${pyStr(amount)}.`;
      }
      throw valueError("Too many certificates");
    },
  },
  transferToHumanAgents(),
  {
    name: "update_reservation_baggages",
    kind: "write",
    description: "Update the baggage information of a reservation. Returns the updated reservation.",
    params: [
      RESERVATION_ID("ZFA04Y"),
      param("total_baggages", INTEGER, "The new total number of checked bags."),
      param("nonfree_baggages", INTEGER, "The new number of checked bags that are paid for."),
      PAYMENT_ID,
    ],
    run: (db, args) => {
      const reservationId = args.get("reservation_id")!;
      const totalBaggages = args.get("total_baggages")!;
      const nonfreeBaggages = args.get("nonfree_baggages")!;
      const reservation = getReservation(db, reservationId);
      getUser(db, reservation.user_id);
      const totalPrice = mul(50n, max(0n, sub(nonfreeBaggages, reservation.nonfree_baggages)));
      return paidChange(db, args, reservation, totalPrice, [
        ["total_baggages", totalBaggages],
        ["nonfree_baggages", nonfreeBaggages],
      ]);
    },
  },
  {
    name: "update_reservation_flights",
    kind: "write",
    description: "Update the flights of a reservation. Returns the updated reservation.",
    params: [
      RESERVATION_ID("ZFA04Y"),
      param("cabin", CABIN_SCHEMA, "The cabin class of the reservation."),
      param("flights", FLIGHT_INFO_SCHEMA, "Every flight segment of the whole new reservation, including the segments that do not change."),
      PAYMENT_ID,
    ],
    run: (db, args) => {
      const reservationId = args.get("reservation_id")!;
      const cabin = args.get("cabin")!;
      const flights = modelsIfAllDicts(args.get("flights")!, FLIGHT_INFO);
      const reservation = getReservation(db, reservationId);
      getUser(db, reservation.user_id);
      const passengerCount = BigInt(len(reservation.passengers));
      let totalPrice: PyValue = 0n;
      const newFlights: PyValue[] = [];
      for (const flightInfo of iterate(flights)) {
        const kept = reservation.flights.find(
          (flight) =>
            pyEquals(flight.flight_number, attr(flightInfo, "flight_number")) &&
            pyEquals(flight.date, attr(flightInfo, "date")) &&
            pyEquals(cabin, reservation.cabin),
        );
        const segment = kept ?? (newSegment(db, flightInfo, cabin, passengerCount) as unknown as Reservation["flights"][number]);
        totalPrice = add(totalPrice, segment.price * passengerCount, "+=");
        newFlights.push(segment);
      }
      const alreadyPaid = reservation.flights.reduce((sum, flight) => sum + flight.price, 0n) * passengerCount;
      totalPrice = sub(totalPrice, alreadyPaid, "-=");
      return paidChange(db, args, reservation, totalPrice, [
        ["flights", newFlights],
        ["cabin", cabin],
      ]);
    },
  },
  {
    name: "update_reservation_passengers",
    kind: "write",
    description: "Update the passengers of a reservation; the number of passengers cannot change. Returns the updated reservation.",
    params: [RESERVATION_ID("ZFA04Y"), param("passengers", PASSENGERS_SCHEMA, "Every passenger of the reservation.")],
    run: (db, args) => {
      const reservationId = args.get("reservation_id")!;
      const passengers = modelsIfAllDicts(args.get("passengers")!, PASSENGER);
      const reservation = getReservation(db, reservationId);
      if (len(passengers) !== len(reservation.passengers)) throw valueError("Number of passengers does not match");
      const writable = db.mutable("reservations", reservationId as string)! as unknown as PyModel;
      writable.passengers = pyDeepCopy(passengers);
      return writable;
    },
  },
  getFlightStatus,
];

/** The 14 agent tools of the airline domain. */
export const airlineTools = new Toolkit<FlightDb>("AirlineTools", tools);
