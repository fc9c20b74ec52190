import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, loadYamlConfig, parseConfigValue, parseYamlConfig } from "./yaml-config.js";

const Schema = z.strictObject({
  host: z.string().default("127.0.0.1"),
  limits: z.strictObject({ port: z.number().int().max(65535).default(8080), n: z.number().int().positive().default(1) }).default({ port: 8080, n: 1 }),
});

describe("parseYamlConfig", () => {
  it("fills in defaults, and reads JSON as YAML", () => {
    expect(parseYamlConfig("", "c.yaml", Schema)).toEqual({ host: "127.0.0.1", limits: { port: 8080, n: 1 } });
    expect(parseYamlConfig('{"limits": {"n": 3}}', "c.json", Schema)).toEqual({ host: "127.0.0.1", limits: { port: 8080, n: 3 } });
  });

  it("names file, line and key of every problem at once", () => {
    const text = "host: h\nlimits:\n  port: 70000\n  typo: 1\n  n: -2\n";
    let error: unknown;
    try {
      parseYamlConfig(text, "c.yaml", Schema);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    // Lines counted by hand in `text`: port on 3, typo on 4, n on 5.
    expect((error as Error).message.split("\n").sort()).toEqual(
      [
        "c.yaml:3: limits.port: Too big: expected number to be <=65535",
        "c.yaml:4: limits.typo: unknown key",
        "c.yaml:5: limits.n: Too small: expected number to be >0",
      ].sort(),
    );
  });

  it("names the line of a YAML syntax error", () => {
    expect(() => parseYamlConfig("host: h\nlimits: [1,\n", "c.yaml", Schema)).toThrow(/^c\.yaml:[23]: /);
  });

  it("throws the caller's error class", () => {
    class ServerConfigError extends ConfigError {
      override readonly code = "server-config";
    }
    expect(() => parseYamlConfig("nope: 1", "s.yaml", Schema, (m) => new ServerConfigError(m))).toThrow(ServerConfigError);
  });
});

describe("parseConfigValue", () => {
  it("validates a value in memory, naming the source and the key without a line", () => {
    expect(parseConfigValue({ limits: { n: 4 } }, "options", Schema).limits).toEqual({ port: 8080, n: 4 });
    expect(() => parseConfigValue({ limits: { n: 0 } }, "options", Schema)).toThrow(/^options: limits\.n: Too small: expected number to be >0$/);
  });
});

describe("loadYamlConfig", () => {
  it("reads a file, and names one it cannot read", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-config-"));
    writeFileSync(join(dir, "c.yaml"), "limits:\n  n: 2\n");
    expect(loadYamlConfig(join(dir, "c.yaml"), Schema).limits.n).toBe(2);
    expect(() => loadYamlConfig(join(dir, "missing.yaml"), Schema)).toThrow(`${join(dir, "missing.yaml")}: cannot read config (ENOENT)`);
  });
});
