import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { AbortFlag } from "./abort.js";

describe("AbortFlag", () => {
  it("follows its signal and throws the signal's reason", () => {
    const controller = new AbortController();
    const flag = new AbortFlag(controller.signal);
    expect(flag.aborted).toBe(false);
    expect(() => {
      flag.throwIfAborted();
    }).not.toThrow();
    controller.abort(new Error("stop"));
    expect(flag.aborted).toBe(true);
    expect(() => {
      flag.throwIfAborted();
    }).toThrow("stop");
  });

  it("starts aborted for an aborted signal and never for none", () => {
    expect(new AbortFlag(AbortSignal.abort()).aborted).toBe(true);
    const none = new AbortFlag();
    expect(none.aborted).toBe(false);
    expect(() => {
      none.throwIfAborted();
    }).not.toThrow();
  });

  it("leaves no listener behind once disposed", () => {
    const controller = new AbortController();
    const flags = [new AbortFlag(controller.signal), new AbortFlag(controller.signal)];
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(2);
    for (const flag of flags) flag.dispose();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});
