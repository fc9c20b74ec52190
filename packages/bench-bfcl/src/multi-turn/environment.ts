import { PyException, type PyHashDict, type PyObject, pyDeepCopy, typeError } from "@envace/python-text";

/** A parameter of an environment method: required, or with a default as Python would bind it. */
export interface Param {
  readonly name: string;
  /**
   * The default value. A mutable default (a list) is one object shared by every call, as a
   * Python default argument is; the session keeps that object.
   */
  readonly default?: PyObject;
}

export interface Method {
  readonly name: string;
  readonly params: readonly Param[];
  readonly run: (...args: PyObject[]) => PyObject;
}

/** State shared by every environment instance of one entry's evaluation. */
export interface Session {
  /** Mutable default arguments, one object per class, method and parameter. */
  readonly defaults: Map<string, PyObject>;
  /** The long-context filler, when the entry needs it. */
  readonly filler?: LongContextFiller;
}

/** The upstream long-context extensions, by their upstream names (see `long-context.ts`). */
export type LongContextFiller = ReadonlyMap<string, PyObject>;

/**
 * One BFCL multi-turn environment class (GorillaFileSystem, TravelAPI, ...), ported from its
 * Python original. Public methods are callable by name; public attributes make up the state
 * the state check compares.
 */
export abstract class BfclEnvironment {
  abstract readonly className: string;
  private readonly table = new Map<string, Method>();

  constructor(protected readonly session: Session) {}

  /** Load a scenario (upstream `_load_scenario`); the config is already a private deep copy. */
  abstract load(config: PyHashDict, longContext: boolean): void;

  /** Public attributes, in definition order (`vars(instance)` minus `_`-prefixed names). */
  abstract publicState(): Map<string, PyObject>;

  /** Stateless classes (MathAPI) are never loaded. */
  readonly stateless: boolean = false;

  protected define(name: string, params: readonly (string | Param)[], run: (...args: PyObject[]) => PyObject): void {
    this.table.set(name, { name, params: params.map((p) => (typeof p === "string" ? { name: p } : p)), run });
  }

  methods(): ReadonlyMap<string, Method> {
    return this.table;
  }

  /** The long-context extension named `name` (upstream's module-level constants). */
  protected filler(name: string): PyObject {
    const value = this.session.filler?.get(name);
    if (value === undefined) throw new PyException("RuntimeError", `long-context filler "${name}" is not loaded`);
    return value;
  }

  /** Call a method as Python binds a call: positional arguments by order, then keywords, then defaults. */
  invoke(name: string, positional: readonly PyObject[], keywords: ReadonlyMap<string, PyObject>): PyObject {
    const method = this.table.get(name);
    if (method === undefined) throw new PyException("AttributeError", `'${this.className}' object has no attribute '${name}'`);
    return method.run(...this.bind(method, positional, keywords));
  }

  private bind(method: Method, positional: readonly PyObject[], keywords: ReadonlyMap<string, PyObject>): PyObject[] {
    const qualname = `${this.className}.${method.name}()`;
    const params = method.params;
    if (positional.length > params.length) {
      const required = params.filter((p) => p.default === undefined).length;
      const takes = required === params.length ? `${params.length + 1}` : `from ${required + 1} to ${params.length + 1}`;
      const plural = required === params.length && params.length === 0 ? "argument" : "arguments";
      throw typeError(`${qualname} takes ${takes} positional ${plural} but ${positional.length + 1} were given`);
    }
    const bound = new Map<string, PyObject>();
    params.slice(0, positional.length).forEach((p, i) => bound.set(p.name, positional[i]!));
    for (const [key, value] of keywords) {
      if (!params.some((p) => p.name === key)) throw typeError(`${qualname} got an unexpected keyword argument '${key}'`);
      if (bound.has(key)) throw typeError(`${qualname} got multiple values for argument '${key}'`);
      bound.set(key, value);
    }
    const missing = params.filter((p) => !bound.has(p.name) && p.default === undefined).map((p) => `'${p.name}'`);
    if (missing.length > 0) {
      const names =
        missing.length === 1 ? missing[0] : missing.length === 2 ? missing.join(" and ") : `${missing.slice(0, -1).join(", ")}, and ${missing.at(-1)}`;
      throw typeError(`${qualname} missing ${missing.length} required positional argument${missing.length > 1 ? "s" : ""}: ${names}`);
    }
    return params.map((p) => (bound.has(p.name) ? bound.get(p.name)! : this.defaultOf(method, p)));
  }

  private defaultOf(method: Method, param: Param): PyObject {
    const value = param.default!;
    if (!Array.isArray(value)) return value;
    const key = `${this.className}.${method.name}.${param.name}`;
    if (!this.session.defaults.has(key)) this.session.defaults.set(key, [...value]);
    return this.session.defaults.get(key)!;
  }
}

/**
 * An environment whose public attributes are one map, in definition order: every port but the
 * file system and math keeps its state this way.
 */
export abstract class StateEnvironment extends BfclEnvironment {
  protected readonly state = new Map<string, PyObject>();

  /** Upstream's `_load_scenario`: each key from the scenario, else a deep copy of its default. */
  protected loadState(config: PyHashDict, keys: readonly string[], defaults: PyHashDict): void {
    for (const key of keys) this.state.set(key, config.has(key) ? config.get(key)! : pyDeepCopy(defaults.get(key) ?? null));
  }

  override publicState(): Map<string, PyObject> {
    return new Map(this.state);
  }

  protected get(key: string): PyObject {
    return this.state.get(key) ?? null;
  }
}
