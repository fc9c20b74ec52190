import { describe, expect, it } from "vitest";
import { createLogger, type LogStream } from "./log.js";

/** A stream that keeps what is written, as a terminal (`isTTY`) or a pipe would receive it. */
function captured(isTTY = false): LogStream & { text: () => string } {
  const chunks: string[] = [];
  return { isTTY, write: (chunk: string) => chunks.push(chunk), text: () => chunks.join("") };
}

describe("createLogger", () => {
  it("json: one object a line, with pino's numeric level, the message and the fields", () => {
    const stream = captured();
    const log = createLogger({ logFormat: "json", logLevel: "info" }, stream);
    log.info({ category: "simple_python", done: 10, total: 400 }, "entries scored");
    log.warn("slow");
    const lines = stream.text().trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    // pino's levels: info 30, warn 40.
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: "entries scored", category: "simple_python", done: 10, total: 400 });
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 40, msg: "slow" });
  });

  it("pretty: one plain line a record, written before the call returns, colourless off a terminal", () => {
    const stream = captured();
    const log = createLogger({ logFormat: "pretty", logLevel: "info" }, stream);
    log.info({ done: 3, total: 8 }, "samples run");
    expect(stream.text()).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: samples run \{"done":3,"total":8\}\n$/);
  });

  it("pretty on a terminal: coloured", () => {
    const stream = captured(true);
    createLogger({ logFormat: "pretty", logLevel: "info" }, stream).info("hello");
    expect(stream.text()).toContain("\x1b[");
  });

  it("shows nothing below the level asked for, and nothing at all when silent", () => {
    const stream = captured();
    const log = createLogger({ logFormat: "json", logLevel: "warn" }, stream);
    log.info("hidden");
    log.debug("hidden");
    log.error("shown");
    expect(
      stream
        .text()
        .trimEnd()
        .split("\n")
        .map((line) => (JSON.parse(line) as { msg: string }).msg),
    ).toEqual(["shown"]);
    const silent = captured();
    createLogger({ logFormat: "pretty", logLevel: "silent" }, silent).fatal("hidden");
    expect(silent.text()).toBe("");
  });
});
