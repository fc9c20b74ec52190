import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** The server's Prometheus metrics, in a registry of its own (several servers may share a process). */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "envace_server_requests_total",
    help: "HTTP requests answered, by route and status.",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: "envace_server_request_duration_seconds",
    help: "Time from a request's arrival to its last byte, by route.",
    labelNames: ["route"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });
  readonly rehearsalAttempts = new Counter({
    name: "envace_server_rehearsal_attempts_total",
    help: "Private rehearsal attempts run.",
    registers: [this.registry],
  });
  readonly memoryHits = new Counter({
    name: "envace_server_rehearsal_memory_hits_total",
    help: "Requests that reused a conversation's rehearsal memory.",
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: "envace_server_queue_depth",
    help: "Completion requests waiting for a generation slot.",
    registers: [this.registry],
  });
  readonly inFlight = new Gauge({ name: "envace_server_requests_in_flight", help: "Completion requests generating now.", registers: [this.registry] });
  readonly rejected = new Counter({
    name: "envace_server_rejected_total",
    help: "Completion requests refused with 429 because the queue was full.",
    registers: [this.registry],
  });
  readonly completionTokens = new Counter({
    name: "envace_server_completion_tokens_total",
    help: "Output tokens of committed turns, those of cancelled requests included (0 for models that report no tokens).",
    registers: [this.registry],
  });
  readonly upstreamErrors = new Counter({
    name: "envace_server_upstream_errors_total",
    help: "Requests that failed because the model failed, by kind.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
}
