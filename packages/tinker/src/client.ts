import { parseReply, requestJson } from "@envace/http";
import { resolveReduction, type ReductionCalibration } from "./calibration.js";
import { TinkerHttpError } from "./errors.js";
import { retrieveFuture } from "./futures.js";
import { defaultRetryPolicy, TinkerHttp, type RetryPolicy } from "./http.js";
import { TinkerSampler } from "./sampler.js";
import { TinkerTrainingClient } from "./training-client.js";
import { noReductionError, type ForwardBackwardWire, type TrainingClientOptions, type TrainingService } from "./training-service.js";
import {
  AuthTokenResponse,
  ClientConfig,
  CreateModelResponse,
  CreateSamplingSessionResponse,
  CreateSessionResponse,
  ServerCapabilities,
  UntypedFuture,
} from "./wire.js";

/** The hosted service. */
export const HOSTED_TINKER_URL = "https://tinker.thinkingmachines.dev/services/tinker-prod";

/**
 * The Python SDK release whose wire this client speaks, announced as `sdk_version`: protobuf
 * `forward_backward` bodies and results (0.25), with the JSON of earlier releases for servers that
 * refuse protobuf.
 */
export const SDK_WIRE_VERSION = "0.25.0";

const API = "/api/v1";

export interface TinkerConnectOptions {
  /** Server root; routes live under `/api/v1`. See `tinkerEnv` for `TINKER_BASE_URL`. */
  baseUrl: string;
  /** Sent as `X-API-Key`. SkyRL tx ignores it (use any `tml-…` placeholder). */
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  /** Timeout of one request (default 60 s) and of one long poll of a future (default 45 s). */
  requestTimeoutMs?: number;
  pollTimeoutMs?: number;
  /** Session heartbeat period (default 10 s); 0 turns heartbeats off. */
  heartbeatIntervalMs?: number;
  sdkVersion?: string;
  tags?: string[];
  userMetadata?: Record<string, unknown>;
  projectId?: string;
  /**
   * Where warnings go (dropped loss terms, failing heartbeats, a refused wire). Default: Node's
   * `process.emitWarning` with type `TinkerWarning`, which the application can listen to
   * (`process.on("warning")`) or silence (`--no-warnings`); the client never prints by itself.
   */
  onWarning?: (message: string) => void;
  fetch?: typeof fetch;
}

/** `baseUrl` from `TINKER_BASE_URL` (default: hosted Tinker) and `apiKey` from `TINKER_API_KEY`. */
export function tinkerEnv(env: Record<string, string | undefined> = process.env): Pick<TinkerConnectOptions, "baseUrl" | "apiKey"> {
  const apiKey = env.TINKER_API_KEY;
  return { baseUrl: env.TINKER_BASE_URL ?? HOSTED_TINKER_URL, ...(apiKey ? { apiKey } : {}) };
}

/** A connection to a Tinker server: one session, kept alive by heartbeats. */
export class TinkerService implements TrainingService {
  private modelSeq = 0;
  private samplingSeq = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private lastHeartbeatOk = Date.now();
  private heartbeatWarned = false;
  private wire: ForwardBackwardWire = "protobuf";
  private readonly calibrations = new Map<string, Promise<ReductionCalibration>>();

  private constructor(
    readonly http: TinkerHttp,
    readonly sessionId: string,
    readonly clientConfig: ClientConfig,
    private readonly warn: (message: string) => void,
  ) {}

  /** `client/config`, `create_session`, then heartbeats. */
  static async connect(options: TinkerConnectOptions): Promise<TinkerService> {
    const warn = options.onWarning ?? ((message: string) => process.emitWarning(message, "TinkerWarning"));
    const sdkVersion = options.sdkVersion ?? SDK_WIRE_VERSION;
    let token: { value: string; expires: number } | undefined;
    let jwt = false;
    let baseUrl = options.baseUrl;
    while (baseUrl.endsWith("/")) baseUrl = baseUrl.slice(0, -1);
    const http: TinkerHttp = new TinkerHttp({
      baseUrl,
      fetch: options.fetch ?? fetch,
      retry: { ...defaultRetryPolicy, ...options.retry },
      requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
      pollTimeoutMs: options.pollTimeoutMs ?? 45_000,
      userAgent: `envace-tinker/${sdkVersion}`,
      apiKey: async () => {
        if (!jwt) return options.apiKey;
        // Refresh the short-lived token five minutes before it expires.
        if (!token || token.expires - Date.now() < 300_000) token = await exchangeToken(baseUrl, options);
        return token.value;
      },
    });
    const clientConfig = await http.postParsed(`${API}/client/config`, { sdk_version: sdkVersion }, ClientConfig);
    jwt = clientConfig.pjwt_auth_enabled;
    const session = await http.postParsed(
      `${API}/create_session`,
      {
        tags: options.tags ?? [],
        user_metadata: options.userMetadata ?? null,
        sdk_version: sdkVersion,
        ...(options.projectId ? { project_id: options.projectId } : {}),
        type: "create_session",
      },
      CreateSessionResponse,
    );
    if (session.error_message) throw new TinkerHttpError(`${API}/create_session`, 200, session.error_message);
    if (session.warning_message) warn(session.warning_message);
    const service = new TinkerService(http, session.session_id, clientConfig, warn);
    const period = options.heartbeatIntervalMs ?? 10_000;
    if (period > 0) {
      service.heartbeat = setInterval(() => void service.beat(period), period);
      service.heartbeat.unref();
    }
    return service;
  }

  private async beat(period: number): Promise<void> {
    try {
      const reply = await this.http.send("POST", `${API}/session_heartbeat`, { session_id: this.sessionId, type: "session_heartbeat" }, { timeoutMs: period });
      if (reply.status === 200) {
        this.lastHeartbeatOk = Date.now();
        this.heartbeatWarned = false;
        return;
      }
    } catch {
      // A missed beat is only worth a warning once it has gone on for a while.
    }
    if (!this.heartbeatWarned && Date.now() - this.lastHeartbeatOk > 120_000) {
      this.heartbeatWarned = true;
      this.warn(`session ${this.sessionId}: heartbeats have failed for over 120 s; the server may expire the session`);
    }
  }

  /** The wire `forward_backward` uses now. */
  get forwardBackwardWire(): ForwardBackwardWire {
    return this.wire;
  }

  /** The server refused a protobuf body: speak JSON (as SDK 0.24 did) for the rest of the session. */
  fallBackToJson(reason: string): void {
    if (this.wire === "json") return;
    this.wire = "json";
    this.warn(`the server refused a protobuf forward_backward (${reason}); sending JSON from now on`);
  }

  /** Models (and context lengths) the server offers. */
  capabilities(): Promise<ServerCapabilities> {
    return this.http.getParsed(`${API}/get_server_capabilities`, ServerCapabilities);
  }

  /**
   * Measure how the server reduces losses for `baseModel`, once per service: a probe on a scratch
   * model that is unloaded afterwards, so the weights a run trains are never touched.
   */
  calibrateReduction(baseModel: string, loraRank?: number): Promise<ReductionCalibration> {
    let calibration = this.calibrations.get(baseModel);
    if (!calibration) {
      calibration = (async () => {
        const scratch = await this.createTrainingClient({
          baseModel,
          ...(loraRank !== undefined ? { loraRank } : {}),
          seed: 0,
          calibrateReduction: false,
          useServerExtensions: false,
        });
        try {
          return await scratch.measureReduction();
        } finally {
          await scratch.unload().catch((error: unknown) => this.warn(`could not unload the calibration model ${scratch.modelId}: ${String(error)}`));
        }
      })();
      this.calibrations.set(baseModel, calibration);
      calibration.catch(() => this.calibrations.delete(baseModel));
    }
    return calibration;
  }

  /**
   * Create a model (a LoRA adapter on hosted Tinker) and a client that trains it. The server's
   * reduction is measured first (unless `calibrateReduction` is false); a reduction that disagrees
   * with it, or none at all under `requireReduction`, is refused before the model is created.
   */
  async createTrainingClient(options: TrainingClientOptions): Promise<TinkerTrainingClient> {
    const server = this.http.options.baseUrl;
    const calibration = (options.calibrateReduction ?? true) ? await this.calibrateReduction(options.baseModel, options.loraRank) : undefined;
    const reduction = resolveReduction(server, calibration, options.reduction, this.clientConfig.envace_loss_reduction);
    if (calibration?.reduction === undefined && calibration !== undefined)
      this.warn(`${server}: the reduction probe was inconclusive (${calibration.evidence})`);
    if (options.requireReduction && reduction === undefined) throw noReductionError(server, calibration);
    const future = await this.http.postParsed(
      `${API}/create_model`,
      {
        session_id: this.sessionId,
        model_seq_id: this.modelSeq++,
        base_model: options.baseModel,
        lora_config: {
          rank: options.loraRank ?? 32,
          ...(options.seed !== undefined ? { seed: options.seed } : {}),
          train_unembed: options.trainUnembed ?? true,
          train_mlp: options.trainMlp ?? true,
          train_attn: options.trainAttn ?? true,
        },
        user_metadata: options.userMetadata ?? null,
        type: "create_model",
      },
      UntypedFuture,
    );
    const created = this.http.parse(
      `${API}/create_model`,
      await retrieveFuture(this.http, future.request_id, { requestType: "CreateModel" }),
      CreateModelResponse,
    );
    return new TinkerTrainingClient(this, created.model_id, options, this.warn, reduction, calibration);
  }

  /** A sampler for saved sampler weights (`tinker://…`) or for a base model. */
  async createSampler(source: { modelPath: string } | { baseModel: string }, stopTokenIds: readonly number[] = []): Promise<TinkerSampler> {
    const reply = await this.http.postParsed(
      `${API}/create_sampling_session`,
      {
        session_id: this.sessionId,
        sampling_session_seq_id: this.samplingSeq++,
        ...("modelPath" in source ? { model_path: source.modelPath } : { base_model: source.baseModel }),
        type: "create_sampling_session",
      },
      CreateSamplingSessionResponse,
    );
    return new TinkerSampler(this.http, reply.sampling_session_id, "modelPath" in source ? source.modelPath : null, stopTokenIds);
  }

  /** The next per-session number of a sampling session (for ephemeral sampler saves). */
  nextSamplingSeq(): number {
    return this.samplingSeq++;
  }

  /** Stop the heartbeats. Models stay loaded on the server until it expires the session. */
  close(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

async function exchangeToken(baseUrl: string, options: TinkerConnectOptions): Promise<{ value: string; expires: number }> {
  const url = `${baseUrl}${API}/auth/token`;
  const reply = await requestJson({
    url,
    body: {},
    headers: options.apiKey ? { "X-API-Key": options.apiKey } : {},
    timeoutMs: options.requestTimeoutMs ?? 60_000,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const { jwt } = parseReply(AuthTokenResponse, reply, url);
  return { value: jwt, expires: jwtExpiry(jwt) };
}

/** The `exp` claim of a JWT in milliseconds, or one hour from now when it has none. */
export function jwtExpiry(jwt: string): number {
  const payload = jwt.split(".")[1];
  if (payload) {
    try {
      const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown };
      if (typeof claims.exp === "number") return claims.exp * 1_000;
    } catch {
      // Not a JWT we can read: fall through to the default lifetime.
    }
  }
  return Date.now() + 3_600_000;
}
