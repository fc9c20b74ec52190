import { describe, expect, it, vi } from "vitest";
import { envace } from "../cli.js";

describe("envace demo", () => {
  it("prints a self-unfolded rollout: Act and Rehearse turns, rehearsed results, no environment, the termination", async () => {
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
      lines.push(args.join(" "));
    });
    try {
      expect(await envace(["demo"])).toBe(0);
    } finally {
      log.mockRestore();
    }
    const out = lines.join("\n");
    expect(out).toContain('[rehearse] get_balance ← {"account":"me","balance":120}');
    expect(out).toContain("[refused]  transfer ← error INVALID_PARAMETERS");
    expect(out).toContain("[rehearse] transfer ← error INSUFFICIENT_FUNDS");
    expect(out).toContain("termination: agent_stop");
    expect(out).toContain("training rows: 8 (act 5, rehearse 3), in order: act rehearse act rehearse act act rehearse act");
    expect(out).toContain('every outcome marked "rehearsed"');
  });
});
