import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RecordError } from "@envace/protocol";
import { jsonLoads, type PyDict } from "@envace/python-text";
import { beforeAll, describe, expect, it } from "vitest";
import { Tau2Environment } from "../../environment.js";
import { Tau2Evaluator } from "../../evaluate.js";
import { loadDomain, type Tau2Domain, type UserGuidelines } from "../../load.js";
import { oracle } from "../../oracle.js";
import { simulate } from "../../simulate.js";
import { airlineDb, writeAirlineFolder } from "../../testing/airline-fixture.js";

interface UpstreamCall {
  name: string;
  arguments: PyDict;
  content: string;
  error: boolean;
  db_hash: string;
}

// Upstream's own responses and hashes for a sequence of calls on the test database.
const upstream = jsonLoads(readFileSync(new URL("../../testing/airline-upstream.json", import.meta.url), "utf8")) as PyDict;
const upstreamCalls = (upstream.get("calls") as PyDict[]).map((call): UpstreamCall => ({
  name: call.get("name") as string,
  arguments: call.get("arguments") as PyDict,
  content: call.get("content") as string,
  error: call.get("error") as boolean,
  db_hash: call.get("db_hash") as string,
}));

const guidelines: UserGuidelines = { plain: "Play the customer.", tools: "Play the customer; you have tools." };

describe("the airline domain on a database the test builds", () => {
  let dir: string;
  let domain: Tau2Domain;

  beforeAll(async () => {
    dir = writeAirlineFolder();
    domain = await loadDomain("airline", { data: dir });
  });

  it("loads upstream's files from any folder, with the 14 agent tools", () => {
    expect(domain.tasks.map((task) => task.id)).toEqual(["book", "cancel"]);
    expect(domain.policy).toContain("Airline policy");
    expect(domain.definition.agent.toolkit.tools.map((tool) => tool.name).sort()).toEqual([
      "book_reservation",
      "calculate",
      "cancel_reservation",
      "get_flight_status",
      "get_reservation_details",
      "get_user_details",
      "list_all_airports",
      "search_direct_flight",
      "search_onestop_flight",
      "send_certificate",
      "transfer_to_human_agents",
      "update_reservation_baggages",
      "update_reservation_flights",
      "update_reservation_passengers",
    ]);
  });

  it("answers every call as upstream does, byte for byte, and hashes every state as upstream does", () => {
    const environment = Tau2Environment.forTask(domain, null);
    for (const [index, call] of upstreamCalls.entries()) {
      const response = environment.respond({ id: `c${index}`, name: call.name, arguments: call.arguments, requestor: "assistant" });
      expect({ index, name: call.name, content: response.content, error: response.error, hash: environment.dbHash() }).toEqual({
        index,
        name: call.name,
        content: call.content,
        error: call.error,
        hash: call.db_hash,
      });
    }
  });

  it("books, charges and takes seats: certificate spent, seats fewer, reservation on the user", async () => {
    const environment = Tau2Environment.forTask(domain, null);
    const book = domain.tasks[0]!.evaluation_criteria!.actions![2]!;
    const response = environment.respond({ id: "b", name: book.name, arguments: book.arguments, requestor: "assistant" });
    expect(response.error).toBe(false);
    const state = (await environment.state()) as {
      users: Record<string, { payment_methods: Record<string, unknown>; reservations: string[] }>;
      flights: Record<string, { dates: Record<string, { available_seats: Record<string, number> }> }>;
    };
    expect(Object.keys(state.users.mia_li_3668!.payment_methods)).toEqual(["credit_card_4421486", "gift_card_1000001"]);
    expect(state.users.mia_li_3668!.reservations).toEqual(["NO6JO3", "HATHAT"]);
    expect(state.flights.HAT001!.dates["2024-05-16"]!.available_seats.economy).toBe(9);
    expect(state.flights.HAT002!.dates["2024-05-16"]!.available_seats.economy).toBe(7);
  });

  it("leaves the loaded database untouched for the next environment", () => {
    const first = Tau2Environment.forTask(domain, null);
    const pristine = first.dbHash();
    first.respond({ id: "x", name: "cancel_reservation", arguments: new Map([["reservation_id", "Q69X3R"]]), requestor: "assistant" });
    expect(first.dbHash()).not.toBe(pristine);
    expect(Tau2Environment.forTask(domain, null).dbHash()).toBe(pristine);
  });

  it("scores the oracle 1 (DB and COMMUNICATE) and a conversation without the booking 0", async () => {
    const evaluator = new Tau2Evaluator(domain);
    const task = domain.tasks[0]!;
    const pair = oracle(task);
    const played = await simulate({ environment: new Tau2Environment(domain), task, agent: pair.agent, user: pair.user, guidelines });
    // The oracle never says the price, so COMMUNICATE fails until the agent does.
    const silent = await evaluator.evaluate(task, played.messages, played.termination_reason);
    expect(silent.breakdown).toEqual({ DB: 1, COMMUNICATE: 0 });
    const told = [...played.messages];
    told.splice(told.length - 1, 0, { role: "assistant", content: "Your total is $550, all booked.", tool_calls: null });
    expect((await evaluator.evaluate(task, told, "user_stop")).reward).toBe(1);

    const withoutBooking = { ...task, evaluation_criteria: { ...task.evaluation_criteria!, actions: task.evaluation_criteria!.actions!.slice(0, 2) } };
    const partial = oracle(withoutBooking);
    const short = await simulate({ environment: new Tau2Environment(domain), task, agent: partial.agent, user: partial.user, guidelines });
    const reward = await evaluator.evaluate(task, [...short.messages, { role: "assistant", content: "That is $550.", tool_calls: null }], "user_stop");
    expect(reward.breakdown).toEqual({ DB: 0, COMMUNICATE: 1 });
    expect(reward.reward).toBe(0);
  });

  it("reports a bad database file with the file and the path inside it", async () => {
    const bad = structuredClone(airlineDb) as unknown as { flights: { HAT001: { dates: Record<string, { prices?: { economy?: unknown } }> } } };
    bad.flights.HAT001.dates["2024-05-16"]!.prices!.economy = "cheap";
    const file = join(dir, "bad-db.json");
    writeFileSync(file, JSON.stringify(bad));
    const error = await loadDomain("airline", { data: dir, db: file }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecordError);
    expect((error as RecordError).message).toContain(file);
    expect((error as RecordError).message).toContain("flights.HAT001.dates.2024-05-16.prices.economy");
  });

  it("says where to get the database when a folder has none", async () => {
    const error = await loadDomain("airline", { data: dir, db: join(dir, "missing.json") }).catch((e: unknown) => e);
    expect(String(error)).toMatch(/missing\.json: no such file\. The airline database is not in this folder/);
  });
});
