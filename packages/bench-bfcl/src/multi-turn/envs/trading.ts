import { formatFixed } from "@envace/python-text";
import { DATETIME_MAX, DATETIME_MIN, formatDateTime, strptime } from "../../py/datetime.js";
import * as ops from "../../py/ops.js";
import { PythonRandom } from "../../py/random.js";
import { pyRepr, pyStr } from "../../py/repr.js";
import { deepCopy, float, isInt, PyDict, PyError, pyEquals, PyFloat, toDouble, truthy, typeName } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { asDict, asList, asStr, dictGet, has, item, iter, setItem } from "../python-access.js";
import { randomFrom } from "./seed.js";

const stock = (price: number, change: number, volume: number, ma5: number, ma20: number): PyDict =>
  PyDict.of({ price: float(price), percent_change: float(change), volume: float(volume), "MA(5)": float(ma5), "MA(20)": float(ma20) });

const DEFAULT_STATE = (): PyDict =>
  PyDict.of({
    orders: new PyDict([
      [12345, PyDict.of({ id: 12345, order_type: "Buy", symbol: "AAPL", price: float(210.65), amount: 10, status: "Completed" })],
      [12446, PyDict.of({ id: 12446, order_type: "Sell", symbol: "GOOG", price: float(2840.56), amount: 5, status: "Pending" })],
    ]),
    account_info: PyDict.of({ account_id: 12345, balance: float(10000.0), binding_card: 1974202140965533 }),
    authenticated: false,
    market_status: "Closed",
    order_counter: 12446,
    stocks: PyDict.of({
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
    random_seed: 1053520,
  });

const KEYS = ["orders", "account_info", "authenticated", "market_status", "order_counter", "stocks", "watch_list", "transaction_history"];

/** The fixed "now" of the trading environment: 2024-09-01 10:30 (naive local time upstream). */
const CURRENT_TIME = Date.UTC(2024, 8, 1, 10, 30);

const SYMBOLS = PyDict.of({
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
function fixed2(value: Py): string {
  if (value instanceof PyFloat || isInt(value) || typeof value === "boolean") return formatFixed(toDouble(value), 2);
  throw new PyError("ValueError", `Unknown format code 'f' for object of type '${typeName(value)}'`);
}

/** Python's `str.format(symbol=...)` for the long-context order metadata templates. */
function formatSymbol(template: string, symbol: Py): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}/g, (token, field: string | undefined) => {
    if (token === "{{") return "{";
    if (token === "}}") return "}";
    if (field !== "symbol") throw new PyError("KeyError", pyRepr(field ?? ""));
    return pyStr(symbol);
  });
}

/** Stock trading: orders, account funds, a watchlist (upstream `TradingBot`). */
export class TradingBot extends BfclEnvironment {
  readonly className = "TradingBot";
  private readonly state = new Map<string, Py>();
  private longContext = false;
  private random = new PythonRandom(1053520);

  override load(config: PyDict, longContext: boolean): void {
    const defaults = DEFAULT_STATE();
    for (const key of KEYS) this.state.set(key, config.has(key) ? config.get(key)! : deepCopy(defaults.get(key)!));
    // Digit-only string keys become ints, as upstream converts them.
    const orders = asDict(this.state.get("orders")!, "items");
    this.state.set("orders", new PyDict([...orders].map(([k, v]) => [typeof k === "string" && /^\d+$/.test(k) ? ops.toInt(k) : k, v])));
    this.longContext = longContext;
    this.random = randomFrom(config.has("random_seed") ? config.get("random_seed")! : defaults.get("random_seed")!);
  }

  override publicState(): Map<string, Py> {
    return new Map([...this.state, ["long_context", this.longContext]]);
  }

  private get(key: string): Py {
    return this.state.get(key) ?? null;
  }

  private authenticated(): boolean {
    return truthy(this.get("authenticated"));
  }

  /** A random time within the day after the fixed "now" (upstream draws a Unix timestamp in that range). */
  private transactionTimestamp(): string {
    const offset = Number(this.random.randbelow(86401n));
    return formatDateTime(CURRENT_TIME + offset * 1000);
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("get_current_time", [], () => PyDict.of({ current_time: "10:30 AM" }));
    this.define("get_symbol_by_name", ["name"], (name) => PyDict.of({ symbol: dictGet(SYMBOLS, name, "Stock not found") }));
    this.define("get_stock_info", ["symbol"], (symbol) => {
      const stocks = this.get("stocks");
      if (!has(stocks, symbol)) return PyDict.of({ error: `Stock with symbol '${pyStr(symbol)}' not found.` });
      if (this.longContext) {
        const copy = asDict(item(stocks, symbol), "copy").copy();
        copy.set("MA(5)", this.filler("MA_5_EXTENSION"));
        copy.set("MA(20)", this.filler("MA_20_EXTENSION"));
        return copy;
      }
      return item(stocks, symbol);
    });
    this.define("get_order_details", ["order_id"], (orderId) => {
      const orders = this.get("orders");
      if (!has(orders, orderId)) {
        return PyDict.of({ error: `Order with ID ${pyStr(orderId)} not found.Here is the list of orders_id: ${pyRepr(asDict(orders, "keys").keys())}` });
      }
      if (this.longContext) {
        const order = asDict(item(orders, orderId), "copy").copy();
        const symbol = item(order, "symbol");
        const metadata = new PyDict();
        for (const [key, template] of asDict(this.filler("ORDER_DETAIL_EXTENSION"), "items")) {
          try {
            metadata.set(key, formatSymbol(asStr(template, "format"), symbol));
          } catch (error) {
            if (error instanceof PyError && error.type === "KeyError") return PyDict.of({ error: `KeyError during formatting: ${error.message}` });
            throw error;
          }
        }
        order.set("metadata", metadata);
        return order;
      }
      return item(orders, orderId);
    });
    this.define("cancel_order", ["order_id"], (orderId) => {
      const orders = this.get("orders");
      if (!has(orders, orderId)) return PyDict.of({ error: `Order with ID ${pyStr(orderId)} not found.` });
      if (pyEquals(item(item(orders, orderId), "status"), "Completed")) return PyDict.of({ error: `Can't cancel order ${pyStr(orderId)}. Order is already completed.` });
      setItem(item(orders, orderId), "status", "Cancelled");
      return PyDict.of({ order_id: orderId, status: "Cancelled" });
    });
    this.define("place_order", ["order_type", "symbol", "price", "amount"], (orderType, symbol, priceArg, amount) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please log in to place an order." });
      if (!has(this.get("stocks"), symbol)) return PyDict.of({ error: `Invalid stock symbol: ${pyStr(symbol)}` });
      if (ops.compare("<=", priceArg, 0) || ops.compare("<=", amount, 0)) return PyDict.of({ error: "Price and amount must be positive values." });
      if (asStr(orderType, "lower").toLowerCase() === "buy") {
        const totalCost = ops.mul(ops.toFloat(priceArg), ops.toInt(amount));
        const balance = dictGet(this.get("account_info"), "balance", 0);
        if (ops.compare(">", totalCost, balance)) return PyDict.of({ error: `Insufficient funds: required $${fixed2(totalCost)} but only $${fixed2(balance)} available.` });
      }
      const price = ops.toFloat(priceArg);
      const orderId = this.get("order_counter");
      setItem(this.get("orders"), orderId, PyDict.of({ id: orderId, order_type: orderType, symbol, price, amount, status: "Open" }));
      this.state.set("order_counter", ops.add(orderId, 1));
      return PyDict.of({ order_id: orderId, order_type: orderType, status: "Pending", price, amount });
    });
    this.define("withdraw_funds", ["amount"], (amount) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please log in to make a transaction." });
      if (!pyEquals(this.get("market_status"), "Open")) return PyDict.of({ error: "Market is closed. Transactions are not allowed." });
      if (ops.compare("<=", amount, 0)) return PyDict.of({ error: "Transaction amount must be positive." });
      const account = this.get("account_info");
      if (ops.compare(">", amount, item(account, "balance"))) return PyDict.of({ error: "Insufficient funds for withdrawal." });
      setItem(account, "balance", ops.sub(item(account, "balance"), amount));
      asList(this.get("transaction_history"), "append").push(PyDict.of({ type: "withdrawal", amount, timestamp: this.transactionTimestamp() }));
      return PyDict.of({ status: "Withdrawal successful", new_balance: item(account, "balance") });
    });
    this.define("get_account_info", [], () => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please log in to view account information." });
      return this.get("account_info");
    });
    this.define("trading_login", ["username", "password"], () => {
      if (this.authenticated()) return PyDict.of({ status: "Already logged in" });
      this.state.set("authenticated", true);
      return PyDict.of({ status: "Logged in successfully" });
    });
    this.define("trading_get_login_status", [], () => PyDict.of({ status: this.authenticated() }));
    this.define("trading_logout", [], () => {
      if (!this.authenticated()) return PyDict.of({ status: "No user is currently logged in" });
      this.state.set("authenticated", false);
      return PyDict.of({ status: "Logged out successfully" });
    });
    this.define("fund_account", ["amount"], (amount) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please log in to fund the account." });
      if (ops.compare("<=", amount, 0)) return PyDict.of({ error: "Funding amount must be positive." });
      const account = this.get("account_info");
      setItem(account, "balance", ops.add(item(account, "balance"), amount));
      asList(this.get("transaction_history"), "append").push(PyDict.of({ type: "deposit", amount, timestamp: this.transactionTimestamp() }));
      return PyDict.of({ status: "Account funded successfully", new_balance: item(account, "balance") });
    });
    this.define("remove_stock_from_watchlist", ["symbol"], (symbol) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please log in to modify the watchlist." });
      const watchList = this.get("watch_list");
      if (!has(watchList, symbol)) return PyDict.of({ error: `Stock ${pyStr(symbol)} not found in watchlist.` });
      const list = asList(watchList, "remove");
      list.splice(list.findIndex((s) => pyEquals(s, symbol)), 1);
      return PyDict.of({ status: `Stock ${pyStr(symbol)} removed from watchlist successfully.` });
    });
    this.define("get_watchlist", [], () => {
      if (!this.authenticated()) return ["Error: User not authenticated. Please log in to view the watchlist."];
      if (this.longContext) return [...asList(this.get("watch_list"), "copy"), ...iter(this.filler("WATCH_LIST_EXTENSION"))];
      return PyDict.of({ watchlist: this.get("watch_list") });
    });
    this.define("get_order_history", [], () => {
      if (!this.authenticated()) return [PyDict.of({ error: "User not authenticated. Please log in to view order history." })];
      return PyDict.of({ history: asDict(this.get("orders"), "keys").keys() });
    });
    this.define("get_transaction_history", [{ name: "start_date", default: null }, { name: "end_date", default: null }], (startDate, endDate) => {
      if (!this.authenticated()) return [PyDict.of({ error: "User not authenticated. Please log in to view transaction history." })];
      const start = truthy(startDate) ? strptime(startDate, "%Y-%m-%d") : DATETIME_MIN;
      const end = truthy(endDate) ? strptime(endDate, "%Y-%m-%d") : DATETIME_MAX;
      const history = iter(this.get("transaction_history")).filter((transaction) => {
        const at = strptime(item(transaction, "timestamp"), "%Y-%m-%d %H:%M:%S");
        return start <= at && at <= end;
      });
      if (this.longContext) history.push(...iter(this.filler("TRANSACTION_HISTORY_EXTENSION")));
      return PyDict.of({ transaction_history: history });
    });
    this.define("get_available_stocks", ["sector"], (sector) => {
      const sectors = PyDict.of({ Technology: ["AAPL", "GOOG", "MSFT", "NVDA"], Automobile: ["TSLA", "F", "GM"] });
      if (this.longContext) {
        (sectors.get("Technology") as Py[]).push(...iter(this.filler("TECHNOLOGY_EXTENSION")));
        (sectors.get("Automobile") as Py[]).push(...iter(this.filler("AUTOMOBILE_EXTENSION")));
      }
      return PyDict.of({ stock_list: dictGet(sectors, sector, []) });
    });
    this.define("filter_stocks_by_price", ["stocks", "min_price", "max_price"], (stocks, minPrice, maxPrice) => {
      const priceOf = (symbol: Py): Py => dictGet(dictGet(this.get("stocks"), symbol, new PyDict()), "price", 0);
      const filtered = iter(stocks).filter((symbol) => ops.compare(">=", priceOf(symbol), minPrice) && ops.compare("<=", priceOf(symbol), maxPrice));
      return PyDict.of({ filtered_stocks: filtered });
    });
    this.define("add_to_watchlist", ["stock"], (symbol) => {
      const watchList = this.get("watch_list");
      if (!has(watchList, symbol) && has(this.get("stocks"), symbol)) asList(watchList, "append").push(symbol);
      return PyDict.of({ watchlist: watchList });
    });
    this.define("notify_price_change", ["stocks", "threshold"], (stocks, threshold) => {
      const all = this.get("stocks");
      const changed = iter(stocks).filter((symbol) => has(all, symbol) && ops.compare(">=", ops.abs(item(item(all, symbol), "percent_change")), threshold));
      if (changed.length > 0) return PyDict.of({ notification: `Stocks ${changed.map((s) => asStr(s, "join")).join(", ")} have significant price changes.` });
      return PyDict.of({ notification: "No significant price changes in the selected stocks." });
    });
  }
}
