import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { reply, startScriptedServer, type ScriptedServer } from "@envace/scripted-server";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../..", import.meta.url));
let upstream: ScriptedServer | undefined;
let child: ChildProcessWithoutNullStreams | undefined;
afterEach(async () => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  child = undefined;
  await upstream?.close();
  upstream = undefined;
});

/** `envace serve …` as a process; resolves with its first stdout line, or its exit code and stderr. */
function envaceServe(args: string[], env: Record<string, string> = {}): Promise<{ line: string } | { code: number | null; stderr: string }> {
  const proc = spawn(process.execPath, ["--conditions=@envace/source", "--import", "tsx", "apps/trainer/src/cli.ts", "serve", ...args], { cwd: root, env: { ...process.env, ...env } });
  child = proc;
  let stdout = "";
  let stderr = "";
  proc.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) => {
    proc.stdout.on("data", (data: Buffer) => {
      stdout += data.toString();
      if (stdout.includes("\n")) resolve({ line: stdout.split("\n")[0]! });
    });
    proc.on("exit", (code) => {
      resolve({ code, stderr });
    });
  });
}

describe("envace serve", () => {
  it("prints the URL it listens on, serves the policy there, and exits 0 on SIGTERM", async () => {
    upstream = await startScriptedServer({ script: [reply.text("From behind the server.")] });
    const started = await envaceServe(["--policy", `openai:${upstream.baseURL}#scripted-model`, "--port", "0"], { ENVACE_SERVER_TOKEN: "" });
    expect(started).toHaveProperty("line");
    const match = /^envace serve: scripted-model on (http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec((started as { line: string }).line);
    expect(match).not.toBeNull();
    const client = new OpenAI({ baseURL: match![1], apiKey: "unused", maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: "scripted-model", messages: [{ role: "user", content: "Hi" }] });
    expect(completion.choices[0]!.message.content).toBe("From behind the server.");
    child!.kill("SIGTERM");
    const [code] = (await once(child!, "exit")) as [number | null];
    expect(code).toBe(0);
  });

  it("refuses to bind beyond loopback without a token: one line, exit 1", async () => {
    const result = await envaceServe(["--policy", "openai:http://127.0.0.1:9/v1#m", "--host", "0.0.0.0", "--port", "0"], { ENVACE_SERVER_TOKEN: "" });
    expect(result).toEqual({
      code: 1,
      stderr: "envace serve: refusing to listen on 0.0.0.0 without a bearer token: set ENVACE_SERVER_TOKEN or tokens: in the server config, or bind to 127.0.0.1\n",
    });
  });

  it("names a bad config file and key: exit 1", async () => {
    const result = await envaceServe(["--policy", "openai:http://127.0.0.1:9/v1#m", "--config", "/nonexistent/server.yaml"]);
    expect(result).toEqual({ code: 1, stderr: "envace serve: /nonexistent/server.yaml: cannot read the server config (ENOENT)\n" });
  });
});
