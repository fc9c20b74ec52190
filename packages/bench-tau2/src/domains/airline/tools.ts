import type { JsonObject } from "@envace/protocol";
import { add, attributeError, getKey, hasKey, isPyModel, iterate, keyError, len, lessThan, max, mul, pyDeepCopy, pyEquals, type PyModel, pyStr, pyTypeName, type PyValue, sub, valueError } from "@envace/python-text";
import type { Database } from "../../database.js";
import { construct, float, int, list, literal, model, str, optional, type ModelSpec } from "../../python/pydantic.js";
import { Toolkit, type ToolDefinition } from "../../toolkit.js";
import { calculateTool, INTEGER, param, STRING, transferToHumanAgents } from "../common.js";
import type { CabinClass, Flight, FlightDateStatus, FlightDb, PaymentMethod, Reservation, User } from "./model.js";

type Db = Database<FlightDb>;

// The models the tools build from arguments, for pydantic's validation messages.
const FLIGHT_INFO: ModelSpec = { name: "FlightInfo", fields: [{ name: "flight_number", type: str }, { name: "date", type: str }] };
const PASSENGER: ModelSpec = {
  name: "Passenger",
  fields: [
    { name: "first_name", type: str },
    { name: "last_name", type: str },
    { name: "dob", type: str },
  ],
};
const PAYMENT: ModelSpec = { name: "Payment", fields: [{ name: "payment_id", type: str }, { name: "amount", type: int }] };
const CABIN = literal("business", "economy", "basic_economy");
const RESERVATION_FLIGHT: ModelSpec = {
  name: "ReservationFlight",
  fields: [
    { name: "flight_number", type: str },
    { name: "origin", type: str },
    { name: "destination", type: str },
    { name: "date", type: str },
    { name: "price", type: int },
  ],
};
const RESERVATION: ModelSpec = {
  name: "Reservation",
  fields: [
    { name: "reservation_id", type: str },
    { name: "user_id", type: str },
    { name: "origin", type: str },
    { name: "destination", type: str },
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

const AIRPORTS: [string, string][] = [
  ["SFO", "San Francisco"],
  ["JFK", "New York"],
  ["LAX", "Los Angeles"],
  ["ORD", "Chicago"],
  ["DFW", "Dallas"],
  ["DEN", "Denver"],
  ["SEA", "Seattle"],
  ["ATL", "Atlanta"],
  ["MIA", "Miami"],
  ["BOS", "Boston"],
  ["PHX", "Phoenix"],
  ["IAH", "Houston"],
  ["LAS", "Las Vegas"],
  ["MCO", "Orlando"],
  ["EWR", "Newark"],
  ["CLT", "Charlotte"],
  ["MSP", "Minneapolis"],
  ["DTW", "Detroit"],
  ["PHL", "Philadelphia"],
  ["LGA", "LaGuardia"],
];

/** `value.name` on a validated model; anything else raises Python's AttributeError. */
function attr(value: PyValue, name: string): PyValue {
  if (isPyModel(value) && name in value) return value[name]!;
  throw attributeError(`'${pyTypeName(value)}' object has no attribute '${name}'`);
}

/** `[Model(**x) for x in items]` when every item is a dict; the items unchanged otherwise. */
function modelsIfAllDicts(items: PyValue, spec: ModelSpec): PyValue {
  const all = iterate(items);
  if (!all.every((item) => item instanceof Map)) return items;
  return all.map((item) => construct(spec, item));
}

function getUser(db: Db, userId: PyValue): User {
  const user = getKey(db.tables.users, userId);
  if (user === undefined) throw valueError(`User ${pyStr(userId)} not found`);
  return user;
}

function getReservation(db: Db, reservationId: PyValue): Reservation {
  const reservation = getKey(db.tables.reservations, reservationId);
  if (reservation === undefined) throw valueError(`Reservation ${pyStr(reservationId)} not found`);
  return reservation;
}

function getFlight(db: Db, flightNumber: PyValue): Flight {
  const flight = getKey(db.tables.flights, flightNumber);
  if (flight === undefined) throw valueError(`Flight ${pyStr(flightNumber)} not found`);
  return flight;
}

function getFlightInstance(db: Db, flightNumber: PyValue, date: PyValue): FlightDateStatus {
  const flight = getFlight(db, flightNumber);
  const instance = getKey(flight.dates, date);
  if (instance === undefined) throw valueError(`Flight ${pyStr(flightNumber)} not found on date ${pyStr(date)}`);
  return instance;
}

/** `mapping[cabin]` with Python's KeyError for a cabin the mapping lacks. */
function byCabin(mapping: ReadonlyMap<CabinClass, bigint>, cabin: PyValue): bigint {
  const value = getKey(mapping as ReadonlyMap<string, bigint>, cabin);
  if (value === undefined) throw keyError(cabin);
  return value;
}

interface DirectFlight extends PyModel {
  date: PyValue;
}

function searchDirectFlight(db: Db, date: PyValue, origin: PyValue, destination: PyValue, leaveAfter: PyValue): DirectFlight[] {
  const results: DirectFlight[] = [];
  for (const flight of db.tables.flights.values()) {
    if (origin !== null && !pyEquals(flight.origin, origin)) continue;
    if (destination !== null && !pyEquals(flight.destination, destination)) continue;
    if (!hasKey(flight.dates, date)) continue;
    const instance = flight.dates.get(date as string)!;
    if (instance.status !== "available") continue;
    if (leaveAfter !== null && lessThan(flight.scheduled_departure_time_est, leaveAfter)) continue;
    results.push({
      flight_number: flight.flight_number,
      origin: flight.origin,
      destination: flight.destination,
      status: "available",
      scheduled_departure_time_est: flight.scheduled_departure_time_est,
      scheduled_arrival_time_est: flight.scheduled_arrival_time_est,
      date: null,
      available_seats: new Map(instance.available_seats),
      prices: new Map(instance.prices),
    });
  }
  return results;
}

/** Python's `int(text)` for the day of a date. */
function parseInt10(text: string): bigint {
  const cleaned = text.trim();
  if (!/^[-+]?\d+(_\d+)*$/.test(cleaned)) throw valueError(`invalid literal for int() with base 10: ${pyStrRepr(text)}`);
  return BigInt(cleaned.replaceAll("_", ""));
}

function pyStrRepr(text: string): string {
  return text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
}

/**
 * Charge a reservation change: certificates are refused, gift cards must cover the price and
 * are debited at once. Returns the payment to record, or null when nothing is charged.
 */
function paymentForUpdate(db: Db, userId: string, paymentId: PyValue, totalPrice: PyValue): PyModel | null {
  const user = getUser(db, userId);
  if (!hasKey(user.payment_methods, paymentId)) throw valueError("Payment method not found");
  const method = user.payment_methods.get(paymentId as string)!;
  if (method.source === "certificate") throw valueError("Certificate cannot be used to update reservation");
  if (method.source === "gift_card" && lessThan(method.amount, totalPrice)) throw valueError("Gift card balance is not enough");
  if (method.source === "gift_card") {
    const writable = db.mutable("users", userId)!.payment_methods.get(paymentId as string) as PaymentMethod & { amount: number };
    writable.amount = Number(sub(writable.amount, totalPrice, "-="));
  }
  if (pyEquals(totalPrice, 0n)) return null;
  return construct(PAYMENT, new Map<string, PyValue>([["payment_id", paymentId], ["amount", totalPrice]]));
}

const RESERVATION_ID = (example: string): ReturnType<typeof param> =>
  param("reservation_id", STRING, `The reservation id, such as '${example}'.`);
const PAYMENT_ID = param(
  "payment_id",
  STRING,
  "The id of a payment method in the user's profile, such as 'credit_card_7815826', 'gift_card_7815826' or 'certificate_7815826'.",
);
const FLIGHT_INFO_SCHEMA: JsonObject = {
  items: {
    properties: {
      flight_number: { description: "The flight number, such as 'HAT001'.", title: "Flight Number", type: "string" },
      date: { description: "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.", title: "Date", type: "string" },
    },
    required: ["flight_number", "date"],
    title: "FlightInfo",
    type: "object",
  },
  type: "array",
};
const PASSENGERS_SCHEMA: JsonObject = {
  items: {
    properties: {
      first_name: { description: "The passenger's first name.", title: "First Name", type: "string" },
      last_name: { description: "The passenger's last name.", title: "Last Name", type: "string" },
      dob: { description: "The date of birth in the format 'YYYY-MM-DD'.", title: "Dob", type: "string" },
    },
    required: ["first_name", "last_name", "dob"],
    title: "Passenger",
    type: "object",
  },
  type: "array",
};
const PAYMENTS_SCHEMA: JsonObject = {
  items: {
    properties: {
      payment_id: { description: "The id of the payment method.", title: "Payment Id", type: "string" },
      amount: { description: "The amount in dollars.", title: "Amount", type: "integer" },
    },
    required: ["payment_id", "amount"],
    title: "Payment",
    type: "object",
  },
  type: "array",
};
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
      const seatsToTake: [string, string][] = [];
      for (const flightInfo of iterate(flights)) {
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
        const price = byCabin(instance.prices, cabin);
        reservation.flights.push(
          construct(
            RESERVATION_FLIGHT,
            new Map<string, PyValue>([
              ["origin", flight.origin],
              ["destination", flight.destination],
              ["flight_number", flightNumber],
              ["date", date],
              ["price", price],
            ]),
          ) as unknown as Reservation["flights"][number],
        );
        seatsToTake.push([flight.flight_number, date as string]);
        totalPrice = add(totalPrice, price * passengerCount, "+=");
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
      for (const [flightNumber, date] of seatsToTake) {
        const instance = db.mutable("flights", flightNumber)!.dates.get(date)!;
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
  {
    name: "get_reservation_details",
    kind: "read",
    description: "Get the details of a reservation.",
    params: [RESERVATION_ID("8JX2WO")],
    run: (db, args) => getReservation(db, args.get("reservation_id")!),
  },
  {
    name: "get_user_details",
    kind: "read",
    description: "Get the details of a user, including their reservations.",
    params: [param("user_id", STRING, "The user id, such as 'sara_doe_496'.")],
    run: (db, args) => getUser(db, args.get("user_id")!),
  },
  {
    name: "list_all_airports",
    kind: "read",
    description: "List every airport served: its IATA code and city.",
    params: [],
    run: () => AIRPORTS.map(([iata, city]) => ({ iata, city })),
  },
  {
    name: "search_direct_flight",
    kind: "read",
    description: "Search for direct flights between two cities on a date.",
    params: [
      param("origin", STRING, "The origin airport's three-letter code, such as 'JFK'."),
      param("destination", STRING, "The destination airport's three-letter code, such as 'LAX'."),
      param("date", STRING, "The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'."),
    ],
    run: (db, args) => searchDirectFlight(db, args.get("date")!, args.get("origin")!, args.get("destination")!, null),
  },
  {
    name: "search_onestop_flight",
    kind: "read",
    description: "Search for connections with one stop between two cities on a date. Returns pairs of direct flights.",
    params: [
      param("origin", STRING, "The origin airport's three-letter code, such as 'JFK'."),
      param("destination", STRING, "The destination airport's three-letter code, such as 'LAX'."),
      param("date", STRING, "The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'."),
    ],
    run: (db, args) => {
      const date = args.get("date")!;
      const results: PyValue[] = [];
      for (const first of searchDirectFlight(db, date, args.get("origin")!, null, null)) {
        first.date = date;
        // Upstream moves to the next day by number without zero padding.
        const secondDate = (first.scheduled_arrival_time_est as string).includes("+1")
          ? `2024-05-${parseInt10((date as string).slice(-2)) + 1n}`
          : date;
        for (const second of searchDirectFlight(
          db,
          secondDate,
          first.destination!,
          args.get("destination")!,
          first.scheduled_arrival_time_est!,
        )) {
          second.date = secondDate;
          results.push([first, second]);
        }
      }
      return results;
    },
  },
  {
    name: "send_certificate",
    kind: "write",
    description: "Send a travel certificate of the given amount to a user. Use with care.",
    params: [
      param("user_id", STRING, "The id of the user, such as 'sara_doe_496'."),
      param("amount", INTEGER, "The amount of the certificate."),
    ],
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
      const payment = paymentForUpdate(db, reservation.user_id, args.get("payment_id")!, totalPrice);
      const writable = db.mutable("reservations", reservationId as string)! as unknown as PyModel & Reservation;
      if (payment !== null) writable.payment_history.push(payment as unknown as Reservation["payment_history"][number]);
      // Upstream assigns the arguments without validation.
      (writable as PyModel).total_baggages = totalBaggages;
      (writable as PyModel).nonfree_baggages = nonfreeBaggages;
      return writable;
    },
  },
  {
    name: "update_reservation_flights",
    kind: "write",
    description:
      "Update the flights of a reservation. Returns the updated reservation.",
    params: [
      RESERVATION_ID("ZFA04Y"),
      param("cabin", CABIN_SCHEMA, "The cabin class of the reservation."),
      param(
        "flights",
        FLIGHT_INFO_SCHEMA,
        "Every flight segment of the whole new reservation, including the segments that do not change.",
      ),
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
        if (kept !== undefined) {
          totalPrice = add(totalPrice, kept.price * passengerCount, "+=");
          newFlights.push(kept);
          continue;
        }
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
        const segment = construct(
          RESERVATION_FLIGHT,
          new Map<string, PyValue>([
            ["flight_number", flightNumber],
            ["date", date],
            ["price", byCabin(instance.prices, cabin)],
            ["origin", flight.origin],
            ["destination", flight.destination],
          ]),
        );
        totalPrice = add(totalPrice, (segment.price as bigint) * passengerCount, "+=");
        newFlights.push(segment);
      }
      const alreadyPaid = reservation.flights.reduce((sum, flight) => sum + flight.price, 0n) * passengerCount;
      totalPrice = sub(totalPrice, alreadyPaid, "-=");
      const payment = paymentForUpdate(db, reservation.user_id, args.get("payment_id")!, totalPrice);
      const writable = db.mutable("reservations", reservationId as string)! as unknown as PyModel & Reservation;
      if (payment !== null) writable.payment_history.push(payment as unknown as Reservation["payment_history"][number]);
      (writable as PyModel).flights = newFlights;
      // Upstream assigns the cabin without validation.
      (writable as PyModel).cabin = cabin;
      return writable;
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
  {
    name: "get_flight_status",
    kind: "read",
    description: "Get the status of a flight on a date.",
    params: [param("flight_number", STRING, "The flight number."), param("date", STRING, "The date of the flight.")],
    run: (db, args) => getFlightInstance(db, args.get("flight_number")!, args.get("date")!).status,
  },
];

/** The 14 agent tools of the airline domain. */
export const airlineTools = new Toolkit<FlightDb>("AirlineTools", tools);
