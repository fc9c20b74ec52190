import {
  formatFixed,
  iterate,
  keyError,
  operator,
  pyEquals,
  PyException,
  pyFloat,
  PyHashDict,
  pyInt,
  type PyObject,
  pyRepr,
  pyStr,
  pyTypeName,
  truthy,
  valueError,
} from "@envace/python-text";
import { DATETIME_MAX, DATETIME_MIN, formatDateTime, strptime } from "../../py/datetime.js";
import { PythonRandom } from "../../py/random.js";
import { StateEnvironment } from "../environment.js";
import { asDict, asList, asStr, dictGet } from "../python-access.js";
import { randomFrom } from "./seed.js";

const stock = (price: number, change: number, volume: number, ma5: number, ma20: number): PyHashDict =>
  PyHashDict.of({ price, percent_change: change, volume, "MA(5)": ma5, "MA(20)": ma20 });

const DEFAULT_STATE = (): PyHashDict =>
  PyHashDict.of({
    orders: new PyHashDict([
      [12345n, PyHashDict.of({ id: 12345n, order_type: "Buy", symbol: "AAPL", price: 210.65, amount: 10n, status: "Completed" })],
      [12446n, PyHashDict.of({ id: 12446n, order_type: "Sell", symbol: "GOOG", price: 2840.56, amount: 5n, status: "Pending" })],
    ]),
    account_info: PyHashDict.of({ account_id: 12345n, balance: 10000.0, binding_card: 1974202140965533n }),
    authenticated: false,
    market_status: "Closed",
    order_counter: 12446n,
    stocks: PyHashDict.of({
      AAPL: stock(227.16, 0.17, 2.552, 227.11, 227.09),
      GOOG: stock(2840.34, 0.24, 1.123, 2835.67, 2842.15),
      TSLA: stock(667.92, -0.12, 1.654, 671.15, 668.2),
      MSFT: stock(310.23, 0.09, 3.234, 309.88, 310.11),
      NVDA: stock(220.34, 0.34, 1.234, 220.45, 220.67),
      ALPH: stock(1320.45, -0.08, 1.567, 1321.12, 1325.78),
      OMEG: stock(457.23, 0.12, 2.345, 456.78, 458.12),
      QUAS: stock(725.89, -0.03, 1.789, 726.45, 728.0),
      NEPT: stock(88.34, 0.19, 0.654, 88.21, 88.67),
      SYNX: stock(345.67, 0.11, 2.112, 345.34, 346.12),
      ZETA: stock(22.09, -0.05, 0.789, 22.12, 22.34),
    }),
    watch_list: ["NVDA"],
    transaction_history: [],
    random_seed: 1053520n,
  });

const KEYS = ["orders", "account_info", "authenticated", "market_status", "order_counter", "stocks", "watch_list", "transaction_history"];

/** The fixed "now" of the trading environment: 2024-09-01 10:30 (naive local time upstream). */
const CURRENT_TIME = Date.UTC(2024, 8, 1, 10, 30);

const SYMBOLS = PyHashDict.of({
  Apple: "AAPL",
  Google: "GOOG",
  Tesla: "TSLA",
  Microsoft: "MSFT",
  Nvidia: "NVDA",
  "Zeta Corp": "ZETA",
  "Alpha Tech": "ALPH",
  "Omega Industries": "OMEG",
  "Quasar Ltd.": "QUAS",
  "Neptune Systems": "NEPT",
  "Synex Solutions": "SYNX",
  Amazon: "AMZN",
  Gorilla: "GORI",
});

/** Python's `format(value, ".2f")` for an int or float. */
function fixed2(value: PyObject): string {
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return formatFixed(Number(value), 2);
  throw valueError(`Unknown format code 'f' for object of type '${pyTypeName(value)}'`);
}

/** Python's `str.format(symbol=...)` for the long-context order metadata templates. */
function formatSymbol(template: string, symbol: PyObject): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (token, field: string | undefined) => {
    if (token === "{{") return "{";
    if (token === "}}") return "}";
    if (field !== "symbol") throw keyError(field ?? "");
    return pyStr(symbol);
  });
}

/** Stock trading: orders, account funds, a watchlist (upstream `TradingBot`). */
export class TradingBot extends StateEnvironment {
  readonly className = "TradingBot";
  private longContext = false;
  private random = new PythonRandom(1053520);

  override load(config: PyHashDict, longContext: boolean): void {
    const defaults = DEFAULT_STATE();
    this.loadState(config, KEYS, defaults);
    // Digit-only string keys become ints, as upstream converts them.
    const orders = asDict(this.state.get("orders")!, "items");
    this.state.set("orders", new PyHashDict([...orders].map(([k, v]) => [typeof k === "string" && /^\d+$/.test(k) ? pyInt(k) : k, v])));
    this.longContext = longContext;
    this.random = randomFrom(config.has("random_seed") ? config.get("random_seed")! : defaults.get("random_seed")!);
  }

  override publicState(): Map<string, PyObject> {
    return new Map([...this.state, ["long_context", this.longContext]]);
  }

  private authenticated(): boolean {
    return truthy(this.get("authenticated"));
  }

  /** A random time within the day after the fixed "now" (upstream draws a Unix timestamp in that range). */
  private transactionTimestamp(): string {
    const offset = Number(this.random.randbelow(86401n));
    return formatDateTime(CURRENT_TIME + offset * 1000);
  }

  constructor(...args: ConstructorParameters<typeof StateEnvironment>) {
    super(...args);
    this.define("get_current_time", [], () => PyHashDict.of({ current_time: "10:30 AM" }));
    this.define("get_symbol_by_name", ["name"], (name) => PyHashDict.of({ symbol: dictGet(SYMBOLS, name, "Stock not found") }));
    this.define("get_stock_info", ["symbol"], (symbol) => {
      const stocks = this.get("stocks");
      if (!operator.contains(stocks, symbol)) return PyHashDict.of({ error: `Stock with symbol '${pyStr(symbol)}' not found.` });
      if (this.longContext) {
        const copy = asDict(operator.getitem(stocks, symbol), "copy").copy();
        copy.set("MA(5)", this.filler("MA_5_EXTENSION"));
        copy.set("MA(20)", this.filler("MA_20_EXTENSION"));
        return copy;
      }
      return operator.getitem(stocks, symbol);
    });
    this.define("get_order_details", ["order_id"], (orderId) => {
      const orders = this.get("orders");
      if (!operator.contains(orders, orderId)) {
        return PyHashDict.of({ error: `Order with ID ${pyStr(orderId)} not found.Here is the list of orders_id: ${pyRepr(asDict(orders, "keys").keys())}` });
      }
      if (this.longContext) {
        const order = asDict(operator.getitem(orders, orderId), "copy").copy();
        const symbol = operator.getitem(order, "symbol");
        const metadata = new PyHashDict();
        for (const [key, template] of asDict(this.filler("ORDER_DETAIL_EXTENSION"), "items")) {
          try {
            metadata.set(key, formatSymbol(asStr(template, "format"), symbol));
          } catch (error) {
            if (error instanceof PyException && error.pyType === "KeyError") return PyHashDict.of({ error: `KeyError during formatting: ${error.text}` });
            throw error;
          }
        }
        order.set("metadata", metadata);
        return order;
      }
      return operator.getitem(orders, orderId);
    });
    this.define("cancel_order", ["order_id"], (orderId) => {
      const orders = this.get("orders");
      if (!operator.contains(orders, orderId)) return PyHashDict.of({ error: `Order with ID ${pyStr(orderId)} not found.` });
      if (pyEquals(operator.getitem(operator.getitem(orders, orderId), "status"), "Completed"))
        return PyHashDict.of({ error: `Can't cancel order ${pyStr(orderId)}. Order is already completed.` });
      operator.setitem(operator.getitem(orders, orderId), "status", "Cancelled");
      return PyHashDict.of({ order_id: orderId, status: "Cancelled" });
    });
    this.define("place_order", ["order_type", "symbol", "price", "amount"], (orderType, symbol, priceArg, amount) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please log in to place an order." });
      if (!operator.contains(this.get("stocks"), symbol)) return PyHashDict.of({ error: `Invalid stock symbol: ${pyStr(symbol)}` });
      if (operator.le(priceArg, 0n) || operator.le(amount, 0n)) return PyHashDict.of({ error: "Price and amount must be positive values." });
      if (asStr(orderType, "lower").toLowerCase() === "buy") {
        const totalCost = operator.mul(pyFloat(priceArg), pyInt(amount));
        const balance = dictGet(this.get("account_info"), "balance", 0n);
        if (operator.gt(totalCost, balance))
          return PyHashDict.of({ error: `Insufficient funds: required $${fixed2(totalCost)} but only $${fixed2(balance)} available.` });
      }
      const price = pyFloat(priceArg);
      const orderId = this.get("order_counter");
      operator.setitem(this.get("orders"), orderId, PyHashDict.of({ id: orderId, order_type: orderType, symbol, price, amount, status: "Open" }));
      this.state.set("order_counter", operator.add(orderId, 1n));
      return PyHashDict.of({ order_id: orderId, order_type: orderType, status: "Pending", price, amount });
    });
    this.define("withdraw_funds", ["amount"], (amount) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please log in to make a transaction." });
      if (!pyEquals(this.get("market_status"), "Open")) return PyHashDict.of({ error: "Market is closed. Transactions are not allowed." });
      if (operator.le(amount, 0n)) return PyHashDict.of({ error: "Transaction amount must be positive." });
      const account = this.get("account_info");
      if (operator.gt(amount, operator.getitem(account, "balance"))) return PyHashDict.of({ error: "Insufficient funds for withdrawal." });
      operator.setitem(account, "balance", operator.sub(operator.getitem(account, "balance"), amount));
      asList(this.get("transaction_history"), "append").push(PyHashDict.of({ type: "withdrawal", amount, timestamp: this.transactionTimestamp() }));
      return PyHashDict.of({ status: "Withdrawal successful", new_balance: operator.getitem(account, "balance") });
    });
    this.define("get_account_info", [], () => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please log in to view account information." });
      return this.get("account_info");
    });
    this.define("trading_login", ["username", "password"], () => {
      if (this.authenticated()) return PyHashDict.of({ status: "Already logged in" });
      this.state.set("authenticated", true);
      return PyHashDict.of({ status: "Logged in successfully" });
    });
    this.define("trading_get_login_status", [], () => PyHashDict.of({ status: this.authenticated() }));
    this.define("trading_logout", [], () => {
      if (!this.authenticated()) return PyHashDict.of({ status: "No user is currently logged in" });
      this.state.set("authenticated", false);
      return PyHashDict.of({ status: "Logged out successfully" });
    });
    this.define("fund_account", ["amount"], (amount) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please log in to fund the account." });
      if (operator.le(amount, 0n)) return PyHashDict.of({ error: "Funding amount must be positive." });
      const account = this.get("account_info");
      operator.setitem(account, "balance", operator.add(operator.getitem(account, "balance"), amount));
      asList(this.get("transaction_history"), "append").push(PyHashDict.of({ type: "deposit", amount, timestamp: this.transactionTimestamp() }));
      return PyHashDict.of({ status: "Account funded successfully", new_balance: operator.getitem(account, "balance") });
    });
    this.define("remove_stock_from_watchlist", ["symbol"], (symbol) => {
      if (!this.authenticated()) return PyHashDict.of({ error: "User not authenticated. Please log in to modify the watchlist." });
      const watchList = this.get("watch_list");
      if (!operator.contains(watchList, symbol)) return PyHashDict.of({ error: `Stock ${pyStr(symbol)} not found in watchlist.` });
      const list = asList(watchList, "remove");
      list.splice(
        list.findIndex((s) => pyEquals(s, symbol)),
        1,
      );
      return PyHashDict.of({ status: `Stock ${pyStr(symbol)} removed from watchlist successfully.` });
    });
    this.define("get_watchlist", [], () => {
      if (!this.authenticated()) return ["Error: User not authenticated. Please log in to view the watchlist."];
      if (this.longContext) return [...asList(this.get("watch_list"), "copy"), ...iterate(this.filler("WATCH_LIST_EXTENSION"))];
      return PyHashDict.of({ watchlist: this.get("watch_list") });
    });
    this.define("get_order_history", [], () => {
      if (!this.authenticated()) return [PyHashDict.of({ error: "User not authenticated. Please log in to view order history." })];
      return PyHashDict.of({ history: asDict(this.get("orders"), "keys").keys() });
    });
    this.define(
      "get_transaction_history",
      [
        { name: "start_date", default: null },
        { name: "end_date", default: null },
      ],
      (startDate, endDate) => {
        if (!this.authenticated()) return [PyHashDict.of({ error: "User not authenticated. Please log in to view transaction history." })];
        const start = truthy(startDate) ? strptime(startDate, "%Y-%m-%d") : DATETIME_MIN;
        const end = truthy(endDate) ? strptime(endDate, "%Y-%m-%d") : DATETIME_MAX;
        const history = iterate(this.get("transaction_history")).filter((transaction) => {
          const at = strptime(operator.getitem(transaction, "timestamp"), "%Y-%m-%d %H:%M:%S");
          return start <= at && at <= end;
        });
        if (this.longContext) history.push(...iterate(this.filler("TRANSACTION_HISTORY_EXTENSION")));
        return PyHashDict.of({ transaction_history: history });
      },
    );
    this.define("get_available_stocks", ["sector"], (sector) => {
      const sectors = PyHashDict.of({ Technology: ["AAPL", "GOOG", "MSFT", "NVDA"], Automobile: ["TSLA", "F", "GM"] });
      if (this.longContext) {
        (sectors.get("Technology") as PyObject[]).push(...iterate(this.filler("TECHNOLOGY_EXTENSION")));
        (sectors.get("Automobile") as PyObject[]).push(...iterate(this.filler("AUTOMOBILE_EXTENSION")));
      }
      return PyHashDict.of({ stock_list: dictGet(sectors, sector, []) });
    });
    this.define("filter_stocks_by_price", ["stocks", "min_price", "max_price"], (stocks, minPrice, maxPrice) => {
      const priceOf = (symbol: PyObject): PyObject => dictGet(dictGet(this.get("stocks"), symbol, new PyHashDict()), "price", 0n);
      const filtered = iterate(stocks).filter((symbol) => operator.ge(priceOf(symbol), minPrice) && operator.le(priceOf(symbol), maxPrice));
      return PyHashDict.of({ filtered_stocks: filtered });
    });
    this.define("add_to_watchlist", ["stock"], (symbol) => {
      const watchList = this.get("watch_list");
      if (!operator.contains(watchList, symbol) && operator.contains(this.get("stocks"), symbol)) asList(watchList, "append").push(symbol);
      return PyHashDict.of({ watchlist: watchList });
    });
    this.define("notify_price_change", ["stocks", "threshold"], (stocks, threshold) => {
      const all = this.get("stocks");
      const changed = iterate(stocks).filter(
        (symbol) => operator.contains(all, symbol) && operator.ge(operator.abs(operator.getitem(operator.getitem(all, symbol), "percent_change")), threshold),
      );
      if (changed.length > 0)
        return PyHashDict.of({ notification: `Stocks ${changed.map((s) => asStr(s, "join")).join(", ")} have significant price changes.` });
      return PyHashDict.of({ notification: "No significant price changes in the selected stocks." });
    });
  }
}
