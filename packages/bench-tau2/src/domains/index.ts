import type { z } from "zod";
import type { DbRoot } from "../database.js";
import type { Toolkit } from "../toolkit.js";
import { FlightDb } from "./airline/model.js";
import { airlineTools } from "./airline/tools.js";
import { MockDb, MockUserDb } from "./mock/model.js";
import { mockTools, mockUserTools } from "./mock/tools.js";
import { RetailDb } from "./retail/model.js";
import { retailTools } from "./retail/tools.js";

/** One side (agent or user) of a domain: its database model, file and toolkit. */
export interface DomainSide {
  /** The upstream pydantic class of the database, named in Python's attribute errors. */
  readonly className: string;
  readonly schema: z.ZodType<DbRoot>;
  readonly toolkit: Toolkit<DbRoot>;
  /** The database file inside the domain folder. */
  readonly file: string;
}

/** A τ² domain in code: the agent's tools and database, and the user's when it has them. */
export interface DomainDefinition {
  readonly name: string;
  readonly agent: DomainSide;
  readonly user?: DomainSide;
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
};

/** Every domain this package implements, by name. */
export const DOMAINS: Readonly<Record<string, DomainDefinition>> = { retail, airline, mock };
