import { pyDeepCopy, pyDumps, PyException, PyHashDict, type PyObject, pyStr } from "@envace/python-text";
import { BfclDataError } from "../errors.js";
import { evaluate } from "../py/evaluate.js";
import { parseExpression } from "../py/syntax.js";
import type { BfclEnvironment, LongContextFiller, Session } from "./environment.js";
import { GorillaFileSystem } from "./envs/file-system.js";
import { MathAPI } from "./envs/math.js";
import { MessageAPI } from "./envs/message.js";
import { TicketAPI } from "./envs/ticket.js";
import { TradingBot } from "./envs/trading.js";
import { TravelAPI } from "./envs/travel.js";
import { TwitterAPI } from "./envs/twitter.js";
import { VehicleControlAPI } from "./envs/vehicle.js";

type EnvironmentClass = new (session: Session) => BfclEnvironment;

/** The eight multi-turn environment classes, by their upstream names. */
export const ENVIRONMENT_CLASSES: Readonly<Record<string, EnvironmentClass>> = {
  GorillaFileSystem,
  MathAPI,
  MessageAPI,
  TwitterAPI,
  TicketAPI,
  TradingBot,
  TravelAPI,
  VehicleControlAPI,
};

/** Calls upstream refuses to evaluate, by function name. */
const FORBIDDEN = ["kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"];

export const EXECUTION_ERROR_PREFIX = "Error during execution: ";

/** A new session: the state every instance of one entry's evaluation shares. */
export function createSession(filler?: LongContextFiller): Session {
  const copy = filler ? new Map([...filler].map(([name, value]) => [name, pyDeepCopy(value)])) : undefined;
  return copy ? { defaults: new Map(), filler: copy } : { defaults: new Map() };
}

/**
 * One side's persistent instances for an entry (upstream keeps one set for the model and one
 * for the ground truth): each involved class loaded with its initial config, and the call
 * executor that turns a call string into upstream's result string.
 */
export class EnvironmentSet {
  readonly instances = new Map<string, BfclEnvironment>();
  private readonly owners = new Map<string, BfclEnvironment>();

  constructor(options: { involvedClasses: readonly string[]; initialConfig: PyHashDict; longContext: boolean; session: Session }) {
    for (const className of options.involvedClasses) {
      const Class = ENVIRONMENT_CLASSES[className];
      if (Class === undefined) throw new BfclDataError(`unknown BFCL environment class "${className}" (known: ${Object.keys(ENVIRONMENT_CLASSES).join(", ")})`);
      const instance = new Class(options.session);
      if (!instance.stateless) {
        const config = options.initialConfig.get(className) ?? new PyHashDict();
        if (!(config instanceof PyHashDict)) throw new BfclDataError(`initial_config.${className} is not an object`);
        instance.load(pyDeepCopy(config), options.longContext);
      }
      this.instances.set(className, instance);
      // A later class's method shadows an earlier one of the same name, as upstream's mapping does.
      for (const name of instance.methods().keys()) this.owners.set(name, instance);
    }
  }

  /** Names of every callable method. */
  methodNames(): string[] {
    return [...this.owners.keys()];
  }

  /**
   * Execute one call string and return upstream's result string: a string as is, a dict as
   * `json.dumps` writes it (or `str` when it holds something JSON cannot), anything else via
   * `str`, and a failure as `Error during execution: <message>`.
   */
  execute(call: string): string {
    try {
      const forbidden = this.forbiddenName(call);
      if (forbidden !== undefined) throw new PyException("Exception", `Function call ${forbidden} is not allowed.`);
      return resultString(this.evaluateCall(call));
    } catch (error) {
      if (error instanceof PyException) return `${EXECUTION_ERROR_PREFIX}${error.text}`;
      throw error;
    }
  }

  /** Upstream looks at the text before the first "(", after its instance prefix. */
  private forbiddenName(call: string): string | undefined {
    const paren = call.indexOf("(");
    const head = paren < 0 ? call : call.slice(0, paren);
    const dot = head.indexOf(".");
    if (dot < 0 && this.owners.has(head)) return undefined;
    // Python's head.split(".")[1]: the text between the first dot and the next.
    const next = dot < 0 ? -1 : head.indexOf(".", dot + 1);
    const name = dot < 0 ? head : head.slice(dot + 1, next < 0 ? undefined : next);
    return FORBIDDEN.includes(name) ? name : undefined;
  }

  private evaluateCall(call: string): PyObject {
    const tree = parseExpression(call);
    return evaluate(tree, {
      call: (func, args, keywords) => {
        if (func.kind !== "name") throw new PyException("TypeError", "only calls of environment methods are supported");
        // `print` is the one builtin models reach for; it returns None.
        if (func.id === "print" && !this.owners.has("print")) return null;
        const owner = this.owners.get(func.id);
        if (owner === undefined) throw new PyException("NameError", `name '${func.id}' is not defined`);
        return owner.invoke(func.id, args, keywords);
      },
    });
  }

  /** Public attributes of every instance, by class. */
  states(): Map<string, Map<string, PyObject>> {
    return new Map([...this.instances].map(([name, instance]) => [name, instance.publicState()]));
  }
}

/** How upstream turns a call's return value into the string the model and the checker see. */
export function resultString(value: PyObject): string {
  if (typeof value === "string") return value;
  if (value instanceof PyHashDict) {
    try {
      return pyDumps(value);
    } catch (error) {
      // Upstream writes `str(result)` when `json.dumps` fails (a set, an `mpf` inside).
      if (!(error instanceof PyException)) throw error;
    }
  }
  return pyStr(value);
}
