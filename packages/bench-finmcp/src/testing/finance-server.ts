// A finance-like MCP server over stdio that answers from fixtures/market.json, standing in for
// FinMCP-Bench's own (non-public) server in tests.
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

interface Market {
  quotes: Record<string, { price: number; currency: string; change_pct: number }>;
  statements: Record<string, Record<string, { revenue: number; net_income: number }>>;
  rates: Record<string, number>;
  funds: Record<string, { name: string; nav: number; date: string }>;
  news: Record<string, string[]>;
}
const market = JSON.parse(readFileSync(new URL("fixtures/market.json", import.meta.url), "utf8")) as Market;

const server = new McpServer({ name: "finance-fixture", version: "1.0.0" });
const json = (value: unknown) => ({ content: [{ type: "text" as const, text: JSON.stringify(value) }] });
const fail = (text: string) => ({ content: [{ type: "text" as const, text }], isError: true });

server.registerTool(
  "get_stock_quote",
  { description: "Latest price of a stock.", inputSchema: { symbol: z.string().describe("Ticker, e.g. AAPL") } },
  ({ symbol }) => {
    const quote = market.quotes[symbol];
    return quote === undefined ? fail(`unknown symbol ${symbol}`) : json({ symbol, ...quote });
  },
);
server.registerTool(
  "get_financial_statement",
  { description: "Annual revenue and net income of a company.", inputSchema: { symbol: z.string(), year: z.number().int() } },
  ({ symbol, year }) => {
    const statement = market.statements[symbol]?.[String(year)];
    return statement === undefined ? fail(`no statement for ${symbol} ${year}`) : json({ symbol, year, ...statement });
  },
);
server.registerTool(
  "get_exchange_rate",
  { description: "Spot exchange rate base/quote.", inputSchema: { base: z.string(), quote: z.string() } },
  ({ base, quote }) => {
    const rate = market.rates[`${base}/${quote}`];
    return rate === undefined ? fail(`no rate for ${base}/${quote}`) : json({ base, quote, rate });
  },
);
server.registerTool("get_fund_nav", { description: "Net asset value of a fund.", inputSchema: { fund_code: z.string() } }, ({ fund_code }) => {
  const fund = market.funds[fund_code];
  return fund === undefined ? fail(`unknown fund ${fund_code}`) : json({ fund_code, ...fund });
});
server.registerTool("search_news", { description: "Headlines about a keyword.", inputSchema: { keyword: z.string() } }, ({ keyword }) =>
  json(market.news[keyword] ?? []),
);

await server.connect(new StdioServerTransport());
process.stdin.on("end", () => process.exit(0));
