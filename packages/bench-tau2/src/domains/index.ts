import type { z } from "zod";
import type { Database, DbRoot } from "../database.js";
import type { Toolkit } from "../toolkit.js";
import { FlightDb } from "./airline/model.js";
import { airlineTools } from "./airline/tools.js";
import { MockDb, MockUserDb } from "./mock/model.js";
import { mockTools, mockUserTools } from "./mock/tools.js";
import { RetailDb } from "./retail/model.js";
import { retailTools } from "./retail/tools.js";
import { TelecomDb, TelecomUserDb } from "./telecom/model.js";
import { syncTelecom } from "./telecom/sync.js";
import { telecomTools } from "./telecom/tools.js";
import { telecomUserTools } from "./telecom/user-tools.js";

/** One side (agent or user) of a domain: its database model, file and toolkit. */
export interface DomainSide {
  /** The upstream pydantic class of the database, named in Python's attribute errors. */
  readonly className: string;
  readonly schema: z.ZodType<DbRoot>;
  readonly toolkit: Toolkit<DbRoot>;
  /** The database file inside the domain folder (`.json`, or `.toml` read with a TOML parser). */
  readonly file: string;
}

/** How a domain's policy is made from files in its folder. */
export type PolicySource =
  /** One file; `solo`, where the domain has a solo mode, is the file read in it instead. */
  | { readonly kind: "file"; readonly file: string; readonly solo?: string }
  /**
   * Upstream's telecom: the main policy and a tech-support policy, each inside its own tags; the
   * tech-support file by variant (`manual`, the default, or `workflow`). Solo mode reads the files
   * of `solo` instead.
   */
  | ({ readonly kind: "main+tech"; readonly solo?: MainAndTech } & MainAndTech);

/** The two files of a main+tech policy: the main policy, and the tech-support policy by variant. */
export interface MainAndTech {
  readonly main: string;
  readonly tech: Readonly<Record<string, string>>;
}

/** A τ² domain in code: the agent's tools and database, and the user's when it has them. */
export interface DomainDefinition {
  readonly name: string;
  readonly agent: DomainSide;
  readonly user?: DomainSide;
  /** Default: `policy.md`. */
  readonly policy?: PolicySource;
  /**
   * The environment's `sync_tools()`: brings the user's side up to date with the agent's after
   * every tool call that returns, initialisation action and assertion (telecom).
   */
  readonly sync?: (agent: Database<DbRoot>, user: Database<DbRoot>) => void;
}

function side<T extends DbRoot>(className: string, schema: z.ZodType<T>, toolkit: Toolkit<T>, file: string): DomainSide {
  return {
    className,
    schema: schema,
    toolkit: toolkit,
    file,
  };
}

export const retail: DomainDefinition = {
  name: "retail",
  agent: side("RetailDB", RetailDb, retailTools, "db.json"),
};

export const airline: DomainDefinition = {
  name: "airline",
  agent: side("FlightDB", FlightDb, airlineTools, "db.json"),
};

export const mock: DomainDefinition = {
  name: "mock",
  agent: side("MockDB", MockDb, mockTools, "db.json"),
  user: side("MockUserDB", MockUserDb, mockUserTools, "user_db.json"),
  policy: { kind: "file", file: "policy.md", solo: "policy_solo.md" },
};

export const telecom: DomainDefinition = {
  name: "telecom",
  agent: side("TelecomDB", TelecomDb as unknown as z.ZodType<DbRoot>, telecomTools, "db.toml"),
  user: side("TelecomUserDB", TelecomUserDb as unknown as z.ZodType<DbRoot>, telecomUserTools, "user_db.toml"),
  policy: {
    kind: "main+tech",
    main: "main_policy.md",
    tech: { manual: "tech_support_manual.md", workflow: "tech_support_workflow.md" },
    // Upstream's solo manual is the manual itself; the workflow has a solo version.
    solo: { main: "main_policy_solo.md", tech: { manual: "tech_support_manual.md", workflow: "tech_support_workflow_solo.md" } },
  },
  sync: syncTelecom,
};

/** Every domain this package implements, by name. */
export const DOMAINS: Readonly<Record<string, DomainDefinition>> = { retail, airline, mock, telecom };
