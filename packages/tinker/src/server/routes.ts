import { TinkerApiError } from "./options.js";

/** One route of the server: its method, its path under `/api/v1` (`{id}` is a parameter), and whether it needs a key. */
export interface RouteSpec {
  method: "GET" | "POST";
  path: string;
  /** False only for liveness: everything else needs a valid `X-API-Key` when the server has keys. */
  protected: boolean;
}

export const API_PREFIX = ["api", "v1"] as const;

/** Every route the server answers, under `/api/v1`. */
export const ROUTES: readonly RouteSpec[] = [
  { method: "GET", path: "healthz", protected: false },
  { method: "GET", path: "get_server_capabilities", protected: true },
  { method: "POST", path: "client/config", protected: true },
  { method: "POST", path: "client/dynamic_config", protected: true },
  { method: "POST", path: "create_session", protected: true },
  { method: "POST", path: "session_heartbeat", protected: true },
  { method: "POST", path: "create_model", protected: true },
  { method: "POST", path: "get_info", protected: true },
  { method: "POST", path: "unload_model", protected: true },
  { method: "POST", path: "forward_backward", protected: true },
  { method: "POST", path: "forward", protected: true },
  { method: "POST", path: "optim_step", protected: true },
  { method: "POST", path: "save_weights", protected: true },
  { method: "POST", path: "save_weights_for_sampler", protected: true },
  { method: "POST", path: "load_weights", protected: true },
  { method: "POST", path: "create_sampling_session", protected: true },
  { method: "GET", path: "samplers/{id}", protected: true },
  { method: "POST", path: "asample", protected: true },
  { method: "POST", path: "retrieve_future", protected: true },
  { method: "POST", path: "weights_info", protected: true },
  { method: "POST", path: "telemetry", protected: true },
];

export interface MatchedRoute {
  spec: RouteSpec;
  /** The `{id}` segment, decoded. */
  param: string | undefined;
  /** The decoded path, for messages. */
  pathname: string;
}

/**
 * The path segments a request target stands for, decoded: origin-form or absolute-form, query
 * and fragment dropped, dot segments resolved (also when percent-encoded), empty segments from
 * doubled slashes dropped, each segment percent-decoded. A segment that decodes to one holding
 * `/` or NUL stays one segment, so it can never match a route of several segments.
 */
export function targetSegments(target: string): string[] {
  if (!target.startsWith("/") && !/^https?:\/\//i.test(target)) {
    throw new TinkerApiError(400, "invalid_target", "the request target is neither a path nor an absolute URL");
  }
  let pathname: string;
  try {
    // An origin-form target is appended to a fixed origin, so `//x/…` stays a path, not a host.
    pathname = new URL(target.startsWith("/") ? `http://localhost${target}` : target).pathname;
  } catch {
    throw new TinkerApiError(400, "invalid_target", "the request target is not a valid URL");
  }
  const segments: string[] = [];
  for (const raw of pathname.split("/")) {
    if (raw === "") continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw new TinkerApiError(400, "invalid_target", "the request path holds a malformed percent-encoding");
    }
    segments.push(segment);
  }
  return segments;
}

/**
 * The route a request's method and target resolve to, decided on the decoded path alone, so how
 * the target is spelled cannot choose the route's protection. HEAD is answered as GET.
 */
export function matchRoute(method: string, target: string): MatchedRoute {
  const segments = targetSegments(target);
  const pathname = `/${segments.join("/")}`;
  const rest = segments.slice(API_PREFIX.length);
  const underApi = API_PREFIX.every((part, i) => segments[i] === part);
  const candidates = underApi ? ROUTES.flatMap((spec) => (matches(spec, rest) ? [{ spec, param: paramOf(spec, rest) }] : [])) : [];
  if (candidates.length === 0) throw new TinkerApiError(404, "not_found", `no route ${method} ${printable(pathname)}`);
  const asked = method === "HEAD" ? "GET" : method;
  const found = candidates.find((c) => c.spec.method === asked);
  if (!found) {
    throw new TinkerApiError(
      405,
      "method_not_allowed",
      `${printable(pathname)} takes ${candidates.map((c) => c.spec.method).join(", ")}, not ${printable(method)}`,
    );
  }
  return { spec: found.spec, param: found.param, pathname };
}

function matches(spec: RouteSpec, rest: readonly string[]): boolean {
  const parts = spec.path.split("/");
  return parts.length === rest.length && parts.every((part, i) => (part === "{id}" ? !/[/\0]/.test(rest[i]!) : part === rest[i]));
}

function paramOf(spec: RouteSpec, rest: readonly string[]): string | undefined {
  const at = spec.path.split("/").indexOf("{id}");
  return at < 0 ? undefined : rest[at];
}

/** A path or method as it may appear in a message: control characters escaped, length capped. */
export function printable(text: string): string {
  const clipped = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  let out = "";
  for (const c of clipped) {
    const code = c.charCodeAt(0);
    out += code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : c;
  }
  return out;
}
