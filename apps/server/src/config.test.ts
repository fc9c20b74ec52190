import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { BUILTIN_REHEARSE_PROMPT, WRITE_TOOLS } from "@envace/bench-builtin";
import { isLoopback, loadServerConfig, parseServerConfig, rehearsePromptOf, ServerConfigError } from "./config.js";

describe("server config", () => {
  it("the README's server.yaml loads, and every key it shows is its default except model and token_file", () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const block = /```yml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const shown = parseServerConfig(parse(block!), "README.md");
    expect({ ...shown, model: undefined, token_file: undefined }).toEqual({ ...parseServerConfig({}, "defaults"), model: undefined, token_file: undefined });
    expect(shown.model).toBe("shop-agent");
    expect(shown.token_file).toBe("/run/secrets/envace-server-tokens");
  });

  it("the README's config for the built-in domain rehearses as envace eval builtin does", () => {
    const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
    const block = /```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const config = parseServerConfig(parse(block!), "README.md");
    expect(rehearsePromptOf(config)).toEqual(BUILTIN_REHEARSE_PROMPT);
    expect(config.rehearsal.write_tools).toEqual(WRITE_TOOLS);
    expect(config.rehearsal.setting).toBe("parallel:2");
    expect(rehearsePromptOf(parseServerConfig({}, "defaults"))).toBeUndefined();
  });

  it("names the file, the line and the key of a bad value or an unknown key", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-server-"));
    const file = join(dir, "server.yaml");
    writeFileSync(file, "port: 99999\n");
    expect(() => loadServerConfig(file)).toThrow(new ServerConfigError(`${file}:1: port: Too big: expected number to be <=65535`));
    writeFileSync(file, "concurrency:\n  request: 2\n");
    expect(() => loadServerConfig(file)).toThrow(`${file}:2: concurrency.request: unknown key`);
    writeFileSync(file, "rehearsal:\n  setting: twice\n");
    expect(() => loadServerConfig(file)).toThrow(`${file}:2: rehearsal.setting: expected none, parallel:N or sequential:N with N ≥ 1`);
    expect(() => loadServerConfig(join(dir, "missing.yaml"))).toThrow(/missing\.yaml: cannot read the server config \(ENOENT\)/);
  });

  it("tells loopback hosts from the rest", () => {
    expect(["127.0.0.1", "127.1.2.3", "localhost", "::1"].map(isLoopback)).toEqual([true, true, true, true]);
    expect(["0.0.0.0", "192.168.1.4", "::", "example.org"].map(isLoopback)).toEqual([false, false, false, false]);
  });
});
