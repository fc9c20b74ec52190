import {
  iterate,
  operator,
  pyDeepCopy,
  pyEquals,
  PyException,
  pyFloat,
  PyHashDict,
  type PyObject,
  pyRepr,
  pyStr,
  PyTuple,
  roundFloat,
  valueError,
} from "@envace/python-text";
import { strptime } from "../../py/datetime.js";
import { PythonRandom } from "../../py/random.js";
import { StateEnvironment } from "../environment.js";
import { asDict, asStr, dictGet } from "../python-access.js";
import { randomFrom } from "./seed.js";

const KEYS = [
  "credit_card_list",
  "booking_record",
  "access_token",
  "token_type",
  "token_expires_in",
  "token_scope",
  "user_first_name",
  "user_last_name",
  "budget_limit",
];
const DEFAULT_SEED = 141053n;

/** Base fares between airports, in upstream's order (the order matters: long-context runs list every fare). */
const BASE_COSTS: readonly (readonly [string, string, number])[] = [
  "SFO-LAX 200, SFO-JFK 500, SFO-ORD 400, SFO-BOS 450, SFO-RMS 300, SFO-SBK 350, SFO-MPC 370, SFO-SVP 320, SFO-SHD 330, SFO-SSV 340, SFO-OKD 360, SFO-WLB 310,",
  "SFO-CRH 380, SFO-ATV 390, SFO-PHV 420, SFO-GFD 430, SFO-CIA 700, LAX-SFO 100, LAX-JFK 600, LAX-ORD 500, LAX-BOS 550, LAX-RMS 310, LAX-SBK 320, LAX-MPC 330,",
  "LAX-SVP 340, LAX-SHD 350, LAX-SSV 360, LAX-OKD 370, LAX-WLB 380, LAX-CRH 390, LAX-ATV 400, LAX-PHV 410, LAX-GFD 420, LAX-HND 430, JFK-ORD 300, JFK-BOS 250,",
  "JFK-RMS 450, JFK-SBK 460, JFK-MPC 470, JFK-SVP 480, JFK-SHD 490, JFK-SSV 500, JFK-OKD 510, JFK-WLB 520, JFK-CRH 530, JFK-ATV 540, JFK-PHV 550, JFK-GFD 560,",
  "JFK-LAX 570, JFK-HND 800, JFK-PVG 950, JFK-PEK 1000, ORD-LAX 180, ORD-BOS 200, ORD-RMS 350, ORD-SBK 360, ORD-MPC 370, ORD-SVP 380, ORD-SHD 390, ORD-SSV 400,",
  "ORD-OKD 410, ORD-WLB 420, ORD-CRH 430, ORD-ATV 440, ORD-PHV 450, ORD-GFD 460, BOS-RMS 400, BOS-SBK 410, BOS-MPC 420, BOS-SVP 430, BOS-SHD 440, BOS-SSV 450,",
  "BOS-OKD 460, BOS-WLB 470, BOS-CRH 480, BOS-ATV 490, BOS-PHV 500, BOS-GFD 510, RMS-BOS 200, RMS-JFK 210, RMS-SBK 220, RMS-MPC 230, RMS-SVP 240, RMS-SHD 250,",
  "RMS-SSV 260, RMS-OKD 270, RMS-WLB 280, RMS-CRH 290, RMS-ATV 300, RMS-PHV 310, RMS-GFD 320, RMS-LAX 330, SBK-MPC 200, SBK-SVP 210, SBK-SHD 220, SBK-SSV 230,",
  "SBK-OKD 240, SBK-WLB 250, SBK-CRH 260, SBK-ATV 270, SBK-PHV 280, SBK-GFD 290, MPC-SVP 210, MPC-SHD 220, MPC-SSV 230, MPC-OKD 240, MPC-WLB 250, MPC-CRH 260,",
  "MPC-ATV 270, MPC-PHV 280, MPC-GFD 290, SVP-SHD 230, SVP-SSV 240, SVP-OKD 250, SVP-WLB 260, SVP-CRH 270, SVP-ATV 280, SVP-PHV 290, SVP-GFD 300, SHD-SSV 220,",
  "SHD-OKD 230, SHD-WLB 240, SHD-CRH 250, SHD-ATV 260, SHD-PHV 270, SHD-GFD 280, SSV-OKD 240, SSV-WLB 250, SSV-CRH 260, SSV-ATV 270, SSV-PHV 280, SSV-GFD 290,",
  "OKD-WLB 230, OKD-CRH 240, OKD-ATV 250, OKD-PHV 260, OKD-GFD 270, WLB-CRH 250, WLB-ATV 260, WLB-PHV 270, WLB-GFD 280, CRH-ATV 240, CRH-PHV 250, CRH-GFD 260,",
  "CRH-SFO 270, CRH-RMS 280, CRH-HKG 290, CRH-JFK 300, ATV-PHV 230, ATV-GFD 240, PHV-GFD 220, LHR-CDG 100, OKD-LAX 220",
]
  .join(" ")
  .split(",")
  .map((pair) => pair.trim())
  .filter((pair) => pair !== "")
  .map((pair) => {
    const [route, cost] = pair.split(" ") as [string, string];
    const [from, to] = route.split("-") as [string, string];
    return [from, to, Number(cost)] as const;
  });

const BASE_COST_TABLE = new PyHashDict(BASE_COSTS.map(([from, to, cost]) => [new PyTuple([from, to]), BigInt(cost)]));

const AIRPORTS = [
  "RMS",
  "SBK",
  "MPC",
  "SVP",
  "SHD",
  "CDG",
  "LHR",
  "SSV",
  "OKD",
  "WLB",
  "PEK",
  "HND",
  "HKG",
  "CIA",
  "CRH",
  "ATV",
  "PHV",
  "GFD",
  "SFO",
  "LAX",
  "JFK",
  "ORD",
  "BOS",
];

const NEAREST_AIRPORT = PyHashDict.of({
  Rivermist: "RMS",
  Stonebrook: "SBK",
  Maplecrest: "MPC",
  Silverpine: "SVP",
  Shadowridge: "SHD",
  London: "LHR",
  Paris: "CDG",
  "Sunset Valley": "SSV",
  Oakendale: "OKD",
  Willowbend: "WLB",
  "Crescent Hollow": "CRH",
  Autumnville: "ATV",
  Pinehaven: "PHV",
  Greenfield: "GFD",
  "San Francisco": "SFO",
  "Los Angeles": "LAX",
  "New York": "JFK",
  Chicago: "ORD",
  Boston: "BOS",
  Beijing: "PEK",
  "Hong Kong": "HKG",
  Rome: "CIA",
  Tokyo: "HND",
});

/** Exchange rates from USD, in upstream's order. */
const EXCHANGE_RATES: readonly (readonly [string, string, PyObject])[] = [
  ["USD", "RMB", 7n],
  ["USD", "EUR", 0.8],
  ["USD", "JPY", 110n],
  ["USD", "GBP", 0.7],
  ["USD", "CAD", 1.3],
  ["USD", "AUD", 1.4],
  ["USD", "INR", 70n],
  ["USD", "RUB", 60n],
  ["USD", "BRL", 3.8],
  ["USD", "MXN", 20n],
];

/** Flights, credit cards, bookings, insurance (upstream `TravelAPI`). */
export class TravelAPI extends StateEnvironment {
  readonly className = "TravelAPI";
  private longContext = false;
  private random = new PythonRandom(DEFAULT_SEED);
  private flightCostLookup = new PyHashDict();

  override load(config: PyHashDict, longContext: boolean): void {
    this.random = randomFrom(config.has("random_seed") ? config.get("random_seed")! : DEFAULT_SEED);
    this.loadState(config, KEYS, PyHashDict.of({ credit_card_list: new PyHashDict(), booking_record: new PyHashDict() }));
    this.longContext = longContext;
    if (longContext) {
      for (const [name, target] of [
        ["CREDIT_CARD_EXTENSION", "credit_card_list"],
        ["BOOKING_RECORD_EXTENSION", "booking_record"],
      ] as const) {
        const records = this.get(target);
        for (const [id, info] of asDict(this.filler(name), "items")) if (!operator.contains(records, id)) operator.setitem(records, id, info);
      }
    }
  }

  override publicState(): Map<string, PyObject> {
    return new Map([...this.state, ["long_context", this.longContext]]);
  }

  /** The checks shared by the token-protected endpoints; `extra` adds the endpoint's status flag to errors. */
  private tokenError(accessToken: PyObject, extra?: Record<string, PyObject>): PyHashDict | undefined {
    if (pyEquals(this.get("token_expires_in"), 0n)) return PyHashDict.of({ ...extra, error: "Token expired" });
    if (!pyEquals(accessToken, this.get("access_token"))) return PyHashDict.of({ ...extra, error: "Invalid access token" });
    return undefined;
  }

  constructor(...args: ConstructorParameters<typeof StateEnvironment>) {
    super(...args);
    this.define(
      "authenticate_travel",
      ["client_id", "client_secret", "refresh_token", "grant_type", "user_first_name", "user_last_name"],
      (_id, _secret, _refresh, grantType, first, last) => {
        this.state.set("token_expires_in", 2n);
        this.state.set("access_token", String(this.random.randint(100000, 999999)));
        this.state.set("token_type", "Bearer");
        this.state.set("token_scope", grantType);
        this.state.set("user_first_name", first);
        this.state.set("user_last_name", last);
        return PyHashDict.of({ expires_in: 2n, access_token: this.get("access_token"), token_type: "Bearer", scope: grantType });
      },
    );
    this.define("travel_get_login_status", [], () => {
      const expires = this.get("token_expires_in");
      return PyHashDict.of({ status: !(expires === null || pyEquals(expires, 0n)) });
    });
    this.define(
      "get_budget_fiscal_year",
      [
        { name: "lastModifiedAfter", default: null },
        { name: "includeRemoved", default: null },
      ],
      () => PyHashDict.of({ budget_fiscal_year: "2018" }),
    );
    this.define(
      "register_credit_card",
      ["access_token", "card_number", "expiration_date", "cardholder_name", "card_verification_number"],
      (token, number, expiration, holder, cvv) => {
        if (this.get("token_expires_in") === null) return PyHashDict.of({ error: "Token not initialized" });
        const invalid = this.tokenError(token);
        if (invalid) return invalid;
        // Upstream compares the card number with the registered card ids.
        if (operator.contains(this.get("credit_card_list"), number)) return PyHashDict.of({ error: "Card already registered" });
        const cardId = String(this.random.randint(100000000000, 999999999999));
        operator.setitem(
          this.get("credit_card_list"),
          cardId,
          PyHashDict.of({
            card_number: number,
            expiration_date: expiration,
            cardholder_name: holder,
            card_verification_number: cvv,
            balance: this.random.randint(10000, 99999),
          }),
        );
        return PyHashDict.of({ card_id: cardId });
      },
    );
    this.define("get_flight_cost", ["travel_from", "travel_to", "travel_date", "travel_class"], (from, to, date, travelClass) =>
      this.flightCost(from, to, date, travelClass),
    );
    this.define("get_credit_card_balance", ["access_token", "card_id"], (token, cardId) => {
      const invalid = this.tokenError(token);
      if (invalid) return invalid;
      const cards = this.get("credit_card_list");
      if (!operator.contains(cards, cardId))
        return PyHashDict.of({ error: `Card not registered. Here are a list of card_id's: ${pyRepr(asDict(cards, "keys").keys())}` });
      return PyHashDict.of({ card_balance: operator.getitem(operator.getitem(cards, cardId), "balance") });
    });
    this.define(
      "book_flight",
      ["access_token", "card_id", "travel_date", "travel_from", "travel_to", "travel_class"],
      (token, cardId, date, from, to, travelClass) => this.bookFlight(token, cardId, date, from, to, travelClass),
    );
    this.define("retrieve_invoice", ["access_token", { name: "booking_id", default: null }, { name: "insurance_id", default: null }], (token, bookingId) => {
      const invalid = this.tokenError(token);
      if (invalid) return invalid;
      const records = this.get("booking_record");
      if (!operator.contains(records, bookingId)) return PyHashDict.of({ error: "Booking not found" });
      const record = operator.getitem(records, bookingId);
      const invoice = PyHashDict.of({ booking_id: bookingId });
      for (const field of ["travel_date", "travel_from", "travel_to", "travel_class", "travel_cost", "transaction_id"])
        invoice.set(field, operator.getitem(record, field));
      return PyHashDict.of({ invoice });
    });
    this.define(
      "get_booking_history",
      ["access_token"],
      (token) => this.tokenError(token) ?? PyHashDict.of({ booking_history: pyDeepCopy(this.get("booking_record")) }),
    );
    this.define("list_all_airports", [], () => [...AIRPORTS]);
    this.define("cancel_booking", ["access_token", "booking_id"], (token, bookingId) => {
      const invalid = this.tokenError(token, { cancel_status: false });
      if (invalid) return invalid;
      const records = this.get("booking_record");
      if (!operator.contains(records, bookingId)) return PyHashDict.of({ cancel_status: false, error: "Booking not found" });
      const cardId = operator.getitem(operator.getitem(records, bookingId), "card_id");
      const cost = operator.getitem(operator.getitem(records, bookingId), "travel_cost");
      const card = operator.getitem(this.get("credit_card_list"), cardId);
      operator.setitem(card, "balance", operator.add(operator.getitem(card, "balance"), cost));
      asDict(records, "pop").delete(bookingId);
      return PyHashDict.of({ cancel_status: true });
    });
    this.define("compute_exchange_rate", ["base_currency", "target_currency", "value"], (base, target, value) => {
      for (const [from, to, rate] of EXCHANGE_RATES) {
        if (pyEquals(base, from) && pyEquals(target, to)) return PyHashDict.of({ exchanged_value: pyFloat(operator.mul(value, rate)) });
        if (pyEquals(base, to) && pyEquals(target, from)) {
          const quotient = operator.truediv(value, rate);
          return PyHashDict.of({ exchanged_value: typeof quotient === "number" ? roundFloat(quotient, 2) : quotient });
        }
      }
      throw valueError("No available exchange rate for the given currencies.");
    });
    this.define("verify_traveler_information", ["first_name", "last_name", "date_of_birth", "passport_number"], (first, last, birth, passport) => {
      if (!pyEquals(this.get("user_first_name"), first) || !pyEquals(this.get("user_last_name"), last)) {
        return PyHashDict.of({
          verification_status: false,
          verification_failure: `Cannot book flight information for another user.Expected ${pyStr(this.get("user_first_name"))} ${pyStr(this.get("user_last_name"))}, got ${pyStr(first)} ${pyStr(last)}`,
        });
      }
      let age: number;
      try {
        const born = new Date(strptime(birth, "%Y-%m-%d"));
        const today = new Date();
        const beforeBirthday =
          today.getMonth() + 1 < born.getUTCMonth() + 1 || (today.getMonth() === born.getUTCMonth() && today.getDate() < born.getUTCDate());
        age = today.getFullYear() - born.getUTCFullYear() - (beforeBirthday ? 1 : 0);
      } catch (error) {
        if (error instanceof PyException && error.pyType === "ValueError") {
          return PyHashDict.of({ verification_status: false, verification_failure: "Invalid date of birth format. Please use YYYY-MM-DD." });
        }
        throw error;
      }
      if (age < 18) return PyHashDict.of({ verification_status: false, verification_failure: "Traveler must be at least 18 years old." });
      if (!asStr(passport, "startswith").startsWith("US"))
        return PyHashDict.of({ verification_status: false, verification_failure: "Passport must be issued by the United States." });
      return PyHashDict.of({ verification_status: true });
    });
    this.define("set_budget_limit", ["access_token", "budget_limit"], (token, limit) => {
      const invalid = this.tokenError(token);
      if (invalid) return invalid;
      const budget = pyFloat(limit);
      this.state.set("budget_limit", budget);
      return PyHashDict.of({ budget_limit: budget });
    });
    this.define("get_nearest_airport_by_city", ["location"], (location) => PyHashDict.of({ nearest_airport: dictGet(NEAREST_AIRPORT, location, "Unknown") }));
    this.define(
      "purchase_insurance",
      ["access_token", "insurance_type", "booking_id", "insurance_cost", "card_id"],
      (token, _type, bookingId, cost, cardId) => {
        const invalid = this.tokenError(token, { insurance_status: false });
        if (invalid) return invalid;
        const budget = this.get("budget_limit");
        if (budget !== null && operator.lt(budget, cost)) return PyHashDict.of({ insurance_status: false, error: "Exceeded budget limit" });
        if (!operator.contains(this.get("booking_record"), bookingId)) return PyHashDict.of({ insurance_status: false, error: "Booking not found" });
        if (!operator.contains(this.get("credit_card_list"), cardId)) return PyHashDict.of({ insurance_status: false, error: "Credit card not registered" });
        const card = operator.getitem(this.get("credit_card_list"), cardId);
        operator.setitem(card, "balance", operator.sub(operator.getitem(card, "balance"), cost));
        return PyHashDict.of({ insurance_id: String(this.random.randint(100000000, 999999999)), insurance_status: true });
      },
    );
    this.define("contact_customer_support", ["booking_id", "message"], (bookingId) => {
      if (!operator.contains(this.get("booking_record"), bookingId)) return PyHashDict.of({ error: "Booking not found" });
      return PyHashDict.of({
        customer_support_message: "Thank you for contacting customer support. Your message has been received and we will get back to you shortly.",
      });
    });
    this.define("get_all_credit_cards", [], () => PyHashDict.of({ credit_card_list: this.get("credit_card_list") }));
  }

  private flightCost(from: PyObject, to: PyObject, date: PyObject, travelClass: PyObject): PyObject {
    const route = new PyTuple([from, to]);
    if (!BASE_COST_TABLE.has(route)) throw valueError("No available route for the given airports.");
    const factor = pyEquals(travelClass, "economy") ? 1 : pyEquals(travelClass, "business") ? 2 : pyEquals(travelClass, "first") ? 5 : undefined;
    if (factor === undefined) throw valueError("Invalid travel class. Options are: economy, business, first.");
    const digitSum = iterate(date)
      .filter((c): c is string => typeof c === "string" && /^\d$/.test(c))
      .reduce((sum, c) => sum + Number(c), 0);
    const multiplier = digitSum % 2 === 0 ? 2 : 1;
    const costs: PyObject[] = [];
    this.flightCostLookup = new PyHashDict();
    const cache = (routeFrom: PyObject, routeTo: PyObject, cost: number): void =>
      this.flightCostLookup.set(`${pyStr(routeFrom)}|${pyStr(routeTo)}|${pyStr(travelClass)}|${pyStr(date)}`, PyHashDict.of({ cost }));
    if (this.longContext) {
      for (const [routeFrom, routeTo, base] of BASE_COSTS) {
        const cost = base * factor * multiplier;
        cache(routeFrom, routeTo, cost);
        costs.push(cost);
      }
    } else {
      const cost = Number(BASE_COST_TABLE.get(route)) * factor * multiplier;
      costs.push(cost);
      cache(from, to, cost);
    }
    return PyHashDict.of({ travel_cost_list: costs });
  }

  private bookFlight(token: PyObject, cardId: PyObject, date: PyObject, from: PyObject, to: PyObject, travelClass: PyObject): PyObject {
    const fail = (error: string): PyHashDict => PyHashDict.of({ booking_status: false, error });
    const invalid = this.tokenError(token, { booking_status: false });
    if (invalid) return invalid;
    const cards = this.get("credit_card_list");
    if (!operator.contains(cards, cardId)) return fail("Card not registered");
    const card = operator.getitem(cards, cardId);
    if (!operator.contains(card, "balance")) return fail("Balance not found");
    if (!AIRPORTS.some((code) => pyEquals(code, from))) return fail(`Invalid departure airport code: ${pyStr(from)}`);
    if (!AIRPORTS.some((code) => pyEquals(code, to))) return fail(`Invalid destination airport code: ${pyStr(to)}`);
    try {
      strptime(date, "%Y-%m-%d");
    } catch (error) {
      if (error instanceof PyException && error.pyType === "ValueError") return fail("Invalid date format. Use YYYY-MM-DD.");
      throw error;
    }
    if (!["economy", "business", "first"].some((c) => pyEquals(c, travelClass))) {
      // Upstream prints a set here, whose order depends on string hashing.
      return fail("Invalid travel class. Must be one of {'economy', 'business', 'first'}");
    }
    let cost: PyObject;
    try {
      this.flightCost(from, to, date, travelClass);
      const entry = this.flightCostLookup.get(`${pyStr(from)}|${pyStr(to)}|${pyStr(travelClass)}|${pyStr(date)}`);
      if (entry === undefined) return fail("No available route for the given parameters");
      cost = operator.getitem(entry, "cost");
    } catch (error) {
      if (error instanceof PyException && error.pyType === "ValueError") return fail(error.text);
      throw error;
    }
    if (operator.lt(operator.getitem(card, "balance"), cost)) return fail("Insufficient funds");
    const budget = this.get("budget_limit");
    if (budget !== null && operator.lt(operator.getitem(card, "balance"), budget)) return fail("Balance is less than budget limit");
    operator.setitem(card, "balance", operator.sub(operator.getitem(card, "balance"), cost));
    const bookingId = String(this.random.randint(1000000, 9999999));
    const transactionId = String(this.random.randint(10000000, 99999999));
    operator.setitem(
      this.get("booking_record"),
      bookingId,
      PyHashDict.of({
        card_id: cardId,
        travel_date: date,
        travel_from: from,
        travel_to: to,
        travel_class: travelClass,
        travel_cost: cost,
        transaction_id: transactionId,
      }),
    );
    return PyHashDict.of({
      booking_id: bookingId,
      transaction_id: transactionId,
      booking_status: true,
      booking_history: this.longContext ? this.get("booking_record") : new PyHashDict(),
    });
  }
}
