import type { Sampler } from "@envace/protocol";
import type { TrainingBackend } from "@envace/training";
import { CreateSamplingSessionRequest, SampleRequest } from "../wire.js";
import { failureOf } from "./failures.js";
import type { FutureStore } from "./future-store.js";
import { TinkerApiError, scoresPrompts, scoresTopk, type BackendRequest } from "./options.js";
import { parseBody, samplingParamsOf, tokensOf } from "./requests.js";

export interface SamplingSession {
  sampler: Sampler;
  baseModel: string;
  modelPath: string | null;
  /** The caller whose weights these are. */
  owner: string;
  /** The training session they belong to: they go when it expires. */
  sessionId: string;
}

/** The largest `topk_prompt_logprobs` answered by default (`maxTopkPromptLogprobs`). */
export const DEFAULT_MAX_TOPK = 20;

/**
 * Sampling sessions and saved sampler weights, and the `asample` route over them. Each belongs
 * to one caller and one session; at most `capacity` are kept, the least recently used going first.
 */
export class Samplers {
  private readonly sessions = new Map<string, SamplingSession>();
  private readonly paths = new Map<string, SamplingSession>();
  private counter = 0;

  constructor(
    private readonly futures: FutureStore,
    private readonly createBackend: ((request: BackendRequest) => TrainingBackend | Promise<TrainingBackend>) | undefined,
    private readonly capacity = 256,
    private readonly onError: (error: unknown, context: string) => void = () => undefined,
    private readonly maxTopk = DEFAULT_MAX_TOPK,
  ) {}

  /** Keep the sampler of `save_weights_for_sampler`: under its path when named, else as a new session. */
  save(
    sampler: Sampler,
    owner: { sessionId: string; modelId: string; baseModel: string; owner: string },
    name: string | undefined,
  ): { path: string | null; sampling_session_id: string | null } {
    const base = { sampler, baseModel: owner.baseModel, owner: owner.owner, sessionId: owner.sessionId };
    if (name === undefined) {
      const id = `${owner.sessionId}:sample:${++this.counter}`;
      this.keep(this.sessions, id, { ...base, modelPath: null });
      return { path: null, sampling_session_id: id };
    }
    const path = `tinker://${owner.modelId}/sampler_weights/${name}`;
    this.keep(this.paths, path, { ...base, modelPath: path });
    return { path, sampling_session_id: null };
  }

  private keep(map: Map<string, SamplingSession>, key: string, value: SamplingSession): void {
    map.delete(key);
    map.set(key, value);
    while (this.sessions.size + this.paths.size > this.capacity) {
      const oldest = this.sessions.size > 0 ? this.sessions : this.paths;
      oldest.delete(oldest.keys().next().value!);
    }
  }

  /** The entry of `key` if `owner` may use it, marked as recently used. */
  private use(map: Map<string, SamplingSession>, key: string, owner: string): SamplingSession | undefined {
    const found = map.get(key);
    if (found?.owner !== owner) return undefined;
    map.delete(key);
    map.set(key, found);
    return found;
  }

  /** Forget everything of a session that expired. */
  dropSession(sessionId: string): void {
    for (const map of [this.sessions, this.paths]) for (const [key, value] of map) if (value.sessionId === sessionId) map.delete(key);
  }

  /** A name for weights saved without one. */
  ephemeralName(): string {
    return `ephemeral-${++this.counter}`;
  }

  async createSession(body: unknown, session: (id: string) => { id: string; owner: string }): Promise<unknown> {
    const request = parseBody(CreateSamplingSessionRequest, body, "create_sampling_session");
    const owner = session(request.session_id);
    let target: SamplingSession;
    if (request.model_path !== undefined) {
      const saved = this.use(this.paths, request.model_path, owner.owner);
      if (!saved) {
        throw new TinkerApiError(404, "not_found", `create_sampling_session: model_path: no sampler weights "${request.model_path}" on this server`);
      }
      target = { ...saved, sessionId: owner.id };
    } else {
      const baseModel = request.base_model!;
      if (!this.createBackend) {
        throw new TinkerApiError(
          400,
          "unsupported",
          "create_sampling_session: base_model: this server serves one backend and cannot sample a base model; save sampler weights instead",
        );
      }
      const backend = await this.createBackend({ baseModel, loraRank: null });
      target = { sampler: await backend.saveWeightsForSampler(`base-${++this.counter}`), baseModel, modelPath: null, owner: owner.owner, sessionId: owner.id };
    }
    const id = `${owner.id}:sample:${++this.counter}`;
    this.keep(this.sessions, id, target);
    return { type: "create_sampling_session", sampling_session_id: id };
  }

  describe(id: string, owner: string): unknown {
    const session = this.use(this.sessions, id, owner);
    if (!session) throw new TinkerApiError(404, "not_found", `unknown sampler "${id}"`);
    return { sampler_id: id, base_model: session.baseModel, ...(session.modelPath ? { model_path: session.modelPath } : {}) };
  }

  sample(body: unknown, owner: string): unknown {
    const request = parseBody(SampleRequest, body, "asample");
    let session: SamplingSession | undefined;
    if (request.sampling_session_id !== undefined) {
      session = this.use(this.sessions, request.sampling_session_id, owner);
      if (!session) throw new TinkerApiError(404, "not_found", `asample: unknown sampling_session_id "${request.sampling_session_id}"`);
    } else if (request.model_path !== undefined) {
      session = this.use(this.paths, request.model_path, owner);
      if (!session) throw new TinkerApiError(404, "not_found", `asample: model_path: no sampler weights "${request.model_path}" on this server`);
    } else {
      throw new TinkerApiError(400, "invalid_request", "asample: give a sampling_session_id or a model_path");
    }
    const sampler = session.sampler;
    if (request.prompt_logprobs && !scoresPrompts(sampler)) {
      throw new TinkerApiError(400, "unsupported", "asample: prompt_logprobs: this server's sampler cannot score prompts");
    }
    const k = request.topk_prompt_logprobs;
    if (k > this.maxTopk) {
      throw new TinkerApiError(
        400,
        "invalid_request",
        `asample: topk_prompt_logprobs: ${k} is more than this server answers (at most ${this.maxTopk}, maxTopkPromptLogprobs)`,
      );
    }
    if (k > 0 && !scoresTopk(sampler)) {
      throw new TinkerApiError(400, "unsupported", "asample: topk_prompt_logprobs: this server's sampler cannot rank prompt tokens");
    }
    const prompt = tokensOf(request.prompt, "prompt");
    const { params, stopTokenIds } = samplingParamsOf(request);
    const futureId = this.futures.create(owner, "sample");
    void (async () => {
      try {
        const sequences = [];
        for (let i = 0; i < request.num_samples; i++) {
          // Distinct seeds per sample, so a seeded request still gives a varied group.
          const seeded = params.seed !== undefined ? { ...params, seed: params.seed + i } : params;
          sequences.push(cutAtStopToken(await sampler.sample(prompt, seeded), stopTokenIds));
        }
        // Nothing predicts the first prompt token: its entry is null in both lists. One scoring pass serves both.
        const ranked = k > 0 && scoresTopk(sampler) ? await sampler.topkPromptLogprobs(prompt, k) : null;
        const scores = ranked?.logprobs ?? (request.prompt_logprobs && scoresPrompts(sampler) ? await sampler.promptLogprobs(prompt) : null);
        this.futures.resolve(futureId, {
          type: "sample",
          sequences,
          prompt_logprobs: request.prompt_logprobs && scores ? [null, ...scores] : null,
          topk_prompt_logprobs: ranked ? [null, ...ranked.topk] : null,
          prompt_cache_hit_tokens: 0,
        });
      } catch (error) {
        const failure = failureOf(error, "asample", this.onError);
        this.futures.reject(futureId, failure.message, failure.category);
      }
    })();
    return { request_id: futureId };
  }
}

/** A generation cut after the first of `stopTokenIds` (kept, as the stop token is) with reason `stop`. */
function cutAtStopToken(out: Awaited<ReturnType<Sampler["sample"]>>, stopTokenIds: readonly number[]): unknown {
  if (out.finishReason === "abort") throw new DOMException("the sampler aborted", "AbortError");
  const at = out.tokens.findIndex((t) => stopTokenIds.includes(t));
  if (at < 0) return { stop_reason: out.finishReason, tokens: out.tokens, logprobs: out.logprobs };
  return { stop_reason: "stop", tokens: out.tokens.slice(0, at + 1), logprobs: out.logprobs.slice(0, at + 1) };
}
