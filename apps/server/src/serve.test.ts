import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseModelSpec, policyFromSpec } from "@envace/models";
import { describe, expect, it } from "vitest";
import { fitRehearsalToContext, loadServerConfig, parseServerConfig, ServerConfigError } from "./config.js";
import { checkpointContext, servedModelName, serverTokens, ServeError, startServer } from "./serve.js";

const defaults = parseServerConfig({}, "defaults");
const GOOD = "0123456789abcdef0123456789abcdef"; // 32 characters

describe("bearer tokens: one rule for every source", () => {
  it("takes 32 characters and refuses 31, from the config, the environment, the tokens option and a token file, naming the source", () => {
    expect(serverTokens(parseServerConfig({ tokens: [GOOD] }, "server.yaml"), undefined, { ENVACE_SERVER_TOKEN: `${GOOD}-env` })).toEqual([
      GOOD,
      `${GOOD}-env`,
    ]);
    const short = GOOD.slice(1);
    expect(() => parseServerConfig({ tokens: [GOOD, short] }, "server.yaml")).toThrow(
      new ServerConfigError("server.yaml: tokens[1]: a bearer token needs at least 32 characters (this one has 31); make one with: openssl rand -hex 32"),
    );
    expect(() => serverTokens(defaults, undefined, { ENVACE_SERVER_TOKEN: "x" })).toThrow(
      new ServeError("ENVACE_SERVER_TOKEN: a bearer token needs at least 32 characters (this one has 1); make one with: openssl rand -hex 32"),
    );
    expect(() => serverTokens(defaults, [short])).toThrow(/^tokens\[0\] \(the tokens option\): a bearer token needs at least 32 characters/);
    // A token a Bearer header cannot carry would be accepted and never match: refused instead.
    expect(() => serverTokens(defaults, [`${GOOD} with spaces`])).toThrow(
      "tokens[0] (the tokens option): a bearer token may hold only visible ASCII characters (no spaces)",
    );
    // The environment's token is not read when the caller gives its own; an empty variable is no token.
    expect(serverTokens(defaults, [], { ENVACE_SERVER_TOKEN: "x" })).toEqual([]);
    expect(serverTokens(defaults, undefined, { ENVACE_SERVER_TOKEN: "" })).toEqual([]);
  });

  it("reads a token file beside the config: one a line, comments and blank lines skipped, a bad line named by number", () => {
    const dir = mkdtempSync(join(tmpdir(), "envace-server-tokens-"));
    writeFileSync(join(dir, "server.yaml"), "token_file: tokens.txt\n");
    writeFileSync(join(dir, "tokens.txt"), `# clients\n${GOOD}\n\n  ${GOOD}-b  \n`);
    const config = loadServerConfig(join(dir, "server.yaml"));
    expect(config.token_file).toBe(join(dir, "tokens.txt"));
    expect(serverTokens(config, [])).toEqual([GOOD, `${GOOD}-b`]);
    writeFileSync(join(dir, "tokens.txt"), `${GOOD}\nshort\n`);
    expect(() => serverTokens(config, [])).toThrow(`${join(dir, "tokens.txt")}:2: a bearer token needs at least 32 characters (this one has 5)`);
    writeFileSync(join(dir, "tokens.txt"), "# none yet\n");
    expect(() => serverTokens(config, [])).toThrow(`${join(dir, "tokens.txt")}: the token file holds no token`);
    expect(() => serverTokens(parseServerConfig({ token_file: join(dir, "missing") }, "x"), [])).toThrow(
      `${join(dir, "missing")}: cannot read the token file (ENOENT)`,
    );
  });
});

describe("the served model id", () => {
  const id = (spec: string, model?: string): string => servedModelName(parseModelSpec(spec), parseServerConfig(model === undefined ? {} : { model }, "x"));
  it("tells a run's checkpoints apart, and keeps the config's id and the upstream's model", () => {
    expect(id("tiny:runs/default/checkpoints/step-000040/policy")).toBe("default-step-000040");
    expect(id("tiny:/srv/runs/seed-2/checkpoints/step-000008/policy/")).toBe("seed-2-step-000008");
    expect(id("tiny:runs/default/checkpoints/step-000040/act")).toBe("default-step-000040-act");
    expect(id("tiny:apps/trainer/checkpoints/base")).toBe("base");
    expect(id("onnx:exports/qwen")).toBe("qwen");
    expect(id("tiny:runs/default/checkpoints/step-000040/policy", "shop-agent")).toBe("shop-agent");
    expect(id("openai:http://127.0.0.1:8000/v1#Qwen/Qwen3-8B")).toBe("Qwen/Qwen3-8B");
  });
});

describe("rehearsal fitted to the model's context", () => {
  it("derives the prompt limit from the context, keeps a limit that fits, and refuses one that does not, naming the key", () => {
    expect(fitRehearsalToContext(defaults, 512, "m").rehearsal.max_prompt_tokens).toBe(511);
    expect(fitRehearsalToContext(defaults, undefined, "m")).toBe(defaults);
    const set = parseServerConfig({ rehearsal: { max_prompt_tokens: 300 } }, "x");
    expect(fitRehearsalToContext(set, 512, "m").rehearsal.max_prompt_tokens).toBe(300);
    const over = parseServerConfig({ rehearsal: { max_prompt_tokens: 4096 } }, "x");
    expect(() => fitRehearsalToContext(over, 512, "base/config.json max_position_embeddings")).toThrow(
      new ServerConfigError(
        "rehearsal.max_prompt_tokens: 4096 does not fit the model's context of 512 tokens (base/config.json max_position_embeddings); set at most 511, or leave it out to derive it",
      ),
    );
  });

  it("serves the shipped tiny checkpoint with rehearsal on by default, without a context-length error", async () => {
    const base = fileURLToPath(new URL("../../trainer/checkpoints/base", import.meta.url));
    expect(checkpointContext(base)).toBe(512);
    expect(checkpointContext(tmpdir())).toBeUndefined();
    const model = await policyFromSpec(`tiny:${base}`);
    const server = await startServer({
      policy: model.policy,
      tokenizer: model.tokenizer,
      model: "base",
      contextTokens: checkpointContext(base),
      config: { port: 0, log_level: "silent", rehearsal: { setting: "parallel:1" } },
      tokens: [],
    });
    try {
      const item = { type: "object", properties: { item: { type: "string" } }, required: ["item"] };
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "base",
          max_tokens: 16,
          messages: [{ role: "user", content: "Buy me a rabo." }],
          tools: ["stock", "buy"].map((name) => ({ type: "function", function: { name, parameters: item } })),
        }),
      });
      const body = (await response.json()) as { envace?: { attempts: number } };
      expect(response.status).toBe(200);
      expect(body.envace?.attempts).toBe(1);
    } finally {
      await server.close();
    }
  });
});
