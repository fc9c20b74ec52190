import { HttpError, send } from "@envace/http";

/** Whether the model answers; `reason` is a stable code a client may see (no URL). */
export interface Readiness {
  ready: boolean;
  reason?: string;
}

export type ReadinessProbe = () => Promise<Readiness>;

export interface UpstreamProbeOptions {
  /** Headers of the probe, e.g. the upstream's `authorization`. */
  headers?: Record<string, string>;
  /** How long the upstream has to answer. Default 2 s. */
  timeoutMs?: number;
  /** How long an answer is reused, so that probes from many load balancers cost the upstream one request. Default 1 s. */
  cacheMs?: number;
  /** Called when readiness changes, with what the log should say (the URL included). */
  onChange?: (readiness: Readiness, detail: string) => void;
  now?: () => number;
}

/**
 * Readiness of an OpenAI-compatible upstream: `GET {baseURL}/models` answers 2xx within the
 * timeout. One probe runs at a time, and its answer is kept for `cacheMs` after it settles.
 */
export function upstreamProbe(baseURL: string, options: UpstreamProbeOptions = {}): ReadinessProbe {
  const { timeoutMs = 2000, cacheMs = 1000, now = Date.now } = options;
  const url = `${baseURL.endsWith("/") ? baseURL.slice(0, -1) : baseURL}/models`;
  let last: { at: number; answer: Promise<Readiness> } | undefined;
  let pending: Promise<Readiness> | undefined;
  let previous: boolean | undefined;
  const probe = async (): Promise<{ readiness: Readiness; detail: string }> => {
    try {
      const reply = await send({ url, timeoutMs, ...(options.headers ? { headers: options.headers } : {}) });
      if (reply.status >= 200 && reply.status < 300) return { readiness: { ready: true }, detail: `${url} answered ${reply.status}` };
      return { readiness: { ready: false, reason: `upstream_status_${reply.status}` }, detail: `${url} answered ${reply.status}` };
    } catch (error) {
      const code = error instanceof HttpError ? error.code : "error";
      return { readiness: { ready: false, reason: `upstream_${code}` }, detail: (error as Error).message };
    }
  };
  return () => {
    if (pending !== undefined) return pending;
    if (last !== undefined && now() - last.at < cacheMs) return last.answer;
    pending = probe().then(({ readiness, detail }) => {
      if (readiness.ready !== previous) options.onChange?.(readiness, detail);
      previous = readiness.ready;
      pending = undefined;
      last = { at: now(), answer: Promise.resolve(readiness) };
      return readiness;
    });
    return pending;
  };
}
