import { OpenAIChatPolicy } from "@envace/models";
import { startScriptedServer, type Script, type ScriptedServer } from "@envace/scripted-server";
import { afterAll, beforeAll } from "vitest";
import { loadDomain, loadUserGuidelines, type LoadDomainOptions, type Tau2Domain, type UserGuidelines } from "../load.js";

/** What a suite runs against: a domain, the user guidelines beside it, and a scripted model on loopback. */
export interface Loopback {
  readonly domain: Tau2Domain;
  readonly guidelines: UserGuidelines;
  readonly server: ScriptedServer;
  /** A policy that asks the server, for either side of a conversation. */
  readonly policy: OpenAIChatPolicy;
}

/**
 * Registers the suite's `beforeAll`, which loads the domain (and the user guidelines from the same
 * folder) and starts a scripted OpenAI-compatible server with the script made for that domain, and
 * its `afterAll`, which closes the server. The fields are set once `beforeAll` has run. Options
 * are a function because they may name files the suite writes, or data a skipped suite lacks.
 */
export function onLoopback(name: string, options: () => LoadDomainOptions, script: (domain: Tau2Domain) => Script): Loopback {
  const harness: { -readonly [K in keyof Loopback]?: Loopback[K] } = {};
  beforeAll(async () => {
    const load = options();
    harness.domain = await loadDomain(name, load);
    harness.guidelines = await loadUserGuidelines(load.data);
    harness.server = await startScriptedServer({ script: script(harness.domain) });
    harness.policy = new OpenAIChatPolicy({ baseURL: harness.server.baseURL, model: "scripted-model", tokenData: "off" });
  });
  afterAll(() => harness.server?.close());
  return harness as Loopback;
}
