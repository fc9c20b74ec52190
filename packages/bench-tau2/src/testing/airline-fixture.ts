import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// A small airline database in upstream's format, for tests: the upstream airline `db.json`
// (7 MB) is not in the shared data. Prices are ints, gift-card and certificate amounts floats,
// as upstream's data has them.

const seats = (business: number, economy: number, basic: number) => ({ business, economy, basic_economy: basic });
const flight = (flight_number: string, origin: string, destination: string, departure: string, arrival: string, dates: Record<string, object>) => ({
  flight_number,
  origin,
  destination,
  scheduled_departure_time_est: departure,
  scheduled_arrival_time_est: arrival,
  dates,
});

// Mia's reservation NO6JO3 is the trip the booking task books again: one way in economy from JFK
// to Seattle on May 16, through Chicago.
const miaTrip = { user_id: "mia_li_3668", origin: "JFK", destination: "SEA", flight_type: "one_way", cabin: "economy" };
const miaSegments = [
  { flight_number: "HAT001", origin: "JFK", destination: "ORD", date: "2024-05-16", price: 300 },
  { flight_number: "HAT002", origin: "ORD", destination: "SEA", date: "2024-05-16", price: 250 },
];

export const airlineDb = {
  flights: {
    HAT001: flight("HAT001", "JFK", "ORD", "06:00:00", "08:30:00", {
      "2024-05-14": { status: "landed", actual_departure_time_est: "2024-05-14T06:05:00", actual_arrival_time_est: "2024-05-14T08:20:00" },
      "2024-05-16": { status: "available", available_seats: seats(4, 10, 2), prices: seats(900, 300, 150) },
      "2024-05-17": { status: "available", available_seats: seats(0, 1, 0), prices: seats(950, 320, 160) },
    }),
    HAT002: flight("HAT002", "ORD", "SEA", "10:00:00", "12:30:00", {
      "2024-05-16": { status: "available", available_seats: seats(5, 8, 3), prices: seats(700, 250, 120) },
      "2024-05-17": { status: "cancelled" },
    }),
    HAT003: flight("HAT003", "ORD", "SEA", "22:00:00", "01:00:00+1", {
      "2024-05-16": { status: "available", available_seats: seats(2, 2, 2), prices: seats(600, 200, 100) },
    }),
    HAT004: flight("HAT004", "JFK", "ORD", "19:00:00", "21:30:00", {
      "2024-05-15": { status: "delayed", estimated_departure_time_est: "2024-05-15T20:00:00", estimated_arrival_time_est: "2024-05-15T22:30:00" },
      "2024-05-16": { status: "available", available_seats: seats(3, 6, 6), prices: seats(800, 280, 140) },
    }),
    HAT005: flight("HAT005", "SEA", "SFO", "06:00:00", "08:00:00", {
      "2024-05-17": { status: "available", available_seats: seats(3, 9, 9), prices: seats(500, 180, 90) },
      "2024-05-15": { status: "on time", estimated_departure_time_est: "2024-05-15T06:00:00", estimated_arrival_time_est: "2024-05-15T08:00:00" },
    }),
  },
  users: {
    mia_li_3668: {
      user_id: "mia_li_3668",
      name: { first_name: "Mia", last_name: "Li" },
      address: { address1: "975 Sunset Drive", address2: "Suite 217", city: "Austin", country: "USA", state: "TX", zip: "78750" },
      email: "mia.li3818@example.com",
      dob: "1990-04-05",
      payment_methods: {
        credit_card_4421486: { source: "credit_card", id: "credit_card_4421486", brand: "visa", last_four: "7447" },
        certificate_7504069: { source: "certificate", id: "certificate_7504069", amount: 250 },
        gift_card_1000001: { source: "gift_card", id: "gift_card_1000001", amount: 100.5 },
      },
      saved_passengers: [{ first_name: "Amelia", last_name: "Ahmed", dob: "1957-03-21" }],
      membership: "gold",
      reservations: ["NO6JO3"],
    },
    raj_sanchez_7340: {
      user_id: "raj_sanchez_7340",
      name: { first_name: "Raj", last_name: "Sanchez" },
      address: { address1: "1 Main St", address2: null, city: "Denver", country: "USA", state: "CO", zip: "80202" },
      email: "raj.sanchez@example.com",
      dob: "1966-10-11",
      payment_methods: {
        gift_card_1591742: { source: "gift_card", id: "gift_card_1591742", amount: 75.5 },
        credit_card_3909203: { source: "credit_card", id: "credit_card_3909203", brand: "mastercard", last_four: "1200" },
      },
      saved_passengers: [],
      membership: "regular",
      reservations: ["Q69X3R"],
    },
  },
  reservations: {
    NO6JO3: {
      reservation_id: "NO6JO3",
      ...miaTrip,
      flights: miaSegments,
      passengers: [
        { first_name: "Mia", last_name: "Li", dob: "1990-04-05" },
        { first_name: "Amelia", last_name: "Ahmed", dob: "1957-03-21" },
      ],
      payment_history: [{ payment_id: "credit_card_4421486", amount: 1100 }],
      created_at: "2024-05-10T09:00:00",
      total_baggages: 1,
      nonfree_baggages: 0,
      insurance: "no",
      status: null,
    },
    Q69X3R: {
      reservation_id: "Q69X3R",
      user_id: "raj_sanchez_7340",
      origin: "JFK",
      destination: "ORD",
      flight_type: "one_way",
      cabin: "basic_economy",
      flights: [{ flight_number: "HAT004", origin: "JFK", destination: "ORD", date: "2024-05-16", price: 140 }],
      passengers: [{ first_name: "Raj", last_name: "Sanchez", dob: "1966-10-11" }],
      payment_history: [{ payment_id: "gift_card_1591742", amount: 140 }],
      created_at: "2024-05-14T10:00:00",
      total_baggages: 0,
      nonfree_baggages: 0,
      insurance: "yes",
    },
  },
};

/** Two tasks in upstream's format: a booking (DB and COMMUNICATE) and a cancellation. */
export const airlineTasks = [
  {
    id: "book",
    user_scenario: {
      instructions: {
        domain: "airline",
        reason_for_call: "You want a one-way economy trip from JFK to Seattle on May 16 for yourself.",
        known_info: "You are Mia Li. Your user id is mia_li_3668.",
        unknown_info: null,
        task_instructions: "Pay with the certificate first and the rest by credit card. You want no bags and no insurance.",
      },
    },
    evaluation_criteria: {
      actions: [
        { action_id: "book_0", name: "get_user_details", arguments: { user_id: "mia_li_3668" } },
        { action_id: "book_1", name: "search_onestop_flight", arguments: { origin: "JFK", destination: "SEA", date: "2024-05-16" } },
        {
          action_id: "book_2",
          name: "book_reservation",
          arguments: {
            ...miaTrip,
            flights: miaSegments.map(({ flight_number, date }) => ({ flight_number, date })),
            passengers: [{ first_name: "Mia", last_name: "Li", dob: "1990-04-05" }],
            payment_methods: [
              { payment_id: "certificate_7504069", amount: 250 },
              { payment_id: "credit_card_4421486", amount: 300 },
            ],
            total_baggages: 0,
            nonfree_baggages: 0,
            insurance: "no",
          },
        },
      ],
      communicate_info: ["550"],
      reward_basis: ["DB", "COMMUNICATE"],
    },
  },
  {
    id: "cancel",
    user_scenario: { persona: "Brief.", instructions: "You are Raj Sanchez (raj_sanchez_7340). Cancel reservation Q69X3R; it has insurance." },
    evaluation_criteria: {
      actions: [
        { action_id: "cancel_0", name: "get_reservation_details", arguments: { reservation_id: "Q69X3R" } },
        { action_id: "cancel_1", name: "cancel_reservation", arguments: { reservation_id: "Q69X3R" } },
      ],
      reward_basis: ["DB"],
    },
  },
];

export const airlinePolicy = "# Airline policy (test)\n\nHelp users book, change and cancel flights.\n";

/** Write the fixture as an upstream airline folder (`policy.md`, `tasks.json`, `db.json`) and return it. */
export function writeAirlineFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "tau2-airline-"));
  writeFileSync(join(dir, "db.json"), JSON.stringify(airlineDb, null, 2));
  writeFileSync(join(dir, "tasks.json"), JSON.stringify(airlineTasks, null, 2));
  writeFileSync(join(dir, "policy.md"), airlinePolicy);
  return dir;
}
