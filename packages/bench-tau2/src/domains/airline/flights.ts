import { hasKey, lessThan, pyEquals, type PyModel, type PyValue, valueError } from "@envace/python-text";
import type { ToolDefinition } from "../../toolkit.js";
import { param, STRING } from "../common.js";
import type { FlightDb } from "./model.js";
import { type Db, getFlightInstance } from "./lookup.js";

// The airline tools that read flights and airports; none of them writes.

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

/** The parameters of both searches; only the example date differs. */
function searchParams(exampleDate: string): ToolDefinition<FlightDb>["params"] {
  return [
    param("origin", STRING, "The origin airport's three-letter code, such as 'JFK'."),
    param("destination", STRING, "The destination airport's three-letter code, such as 'LAX'."),
    param("date", STRING, `The date of the flight in the format 'YYYY-MM-DD', such as '${exampleDate}'.`),
  ];
}

export const listAllAirports: ToolDefinition<FlightDb> = {
  name: "list_all_airports",
  kind: "read",
  description: "List every airport served: its IATA code and city.",
  params: [],
  run: () => AIRPORTS.map(([iata, city]) => ({ iata, city })),
};

export const searchDirectFlightTool: ToolDefinition<FlightDb> = {
  name: "search_direct_flight",
  kind: "read",
  description: "Search for direct flights between two cities on a date.",
  params: searchParams("2024-01-01"),
  run: (db, args) => searchDirectFlight(db, args.get("date")!, args.get("origin")!, args.get("destination")!, null),
};

export const searchOnestopFlight: ToolDefinition<FlightDb> = {
  name: "search_onestop_flight",
  kind: "read",
  description: "Search for connections with one stop between two cities on a date. Returns pairs of direct flights.",
  params: searchParams("2024-05-01"),
  run: (db, args) => {
    const date = args.get("date")!;
    const results: PyValue[] = [];
    for (const first of searchDirectFlight(db, date, args.get("origin")!, null, null)) {
      first.date = date;
      // Upstream moves to the next day by number without zero padding.
      const secondDate = (first.scheduled_arrival_time_est as string).includes("+1") ? `2024-05-${parseInt10((date as string).slice(-2)) + 1n}` : date;
      for (const second of searchDirectFlight(db, secondDate, first.destination!, args.get("destination")!, first.scheduled_arrival_time_est!)) {
        second.date = secondDate;
        results.push([first, second]);
      }
    }
    return results;
  },
};

export const getFlightStatus: ToolDefinition<FlightDb> = {
  name: "get_flight_status",
  kind: "read",
  description: "Get the status of a flight on a date.",
  params: [param("flight_number", STRING, "The flight number."), param("date", STRING, "The date of the flight.")],
  run: (db, args) => getFlightInstance(db, args.get("flight_number")!, args.get("date")!).status,
};
