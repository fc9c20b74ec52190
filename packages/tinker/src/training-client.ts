import type { AdamParams, Datum, ForwardBackwardResult, LossFn, ScoringOptions, TrainingBackend } from "@envace/training";
import { chunkRanges, mergeMetrics } from "./chunks.js";
import {
  gradientProbeRounds,
  gradNormOf,
  lossCandidates,
  lossProbeData,
  matchGradientRatio,
  matchLoss,
  PROBE_CLIP,
  probeForwardData,
  STILL_ADAM,
  type ReductionCalibration,
} from "./calibration.js";
import { noReductionError, type TrainingClientOptions, type TrainingService } from "./training-service.js";
import { checkDatum, toWireDatum } from "./datum.js";
import { TinkerHttpError, TinkerLossError, TinkerRequestFailedError, TinkerUsageError } from "./errors.js";
import { retrieveFuture } from "./futures.js";
import type { TinkerHttp } from "./http.js";
import { evaluateObjective, planLoss, surrogateData, type DroppableTerm, type LossPlan, type LossStrategy, type RemoteReduction } from "./loss-mapping.js";
import { decodeForwardBackwardOutput, encodeForwardBackwardRequest, toNumbers } from "./proto/codec.js";
import { PROTOBUF } from "./proto/schema.js";
import { TinkerSampler } from "./sampler.js";
import {
  CheckpointName,
  ForwardBackwardOutput,
  GetInfoResponse,
  LoadWeightsResponse,
  OptimStepResponse,
  SaveWeightsForSamplerResponse,
  SaveWeightsResponse,
  UnloadModelResponse,
  UntypedFuture,
  type WireDatum,
} from "./wire.js";

const API = "/api/v1";

/** Results that have a protobuf form are asked for in it, with JSON as the fallback. */
const PROTOBUF_OR_JSON = `${PROTOBUF}, application/json`;

/** Statuses that mean "this server does not take protobuf bodies" (415; FastAPI's 422 for a body it cannot parse). */
const REFUSES_PROTOBUF = new Set([415, 422]);

interface Submitted {
  requestId: string;
  resubmit: () => Promise<string>;
}

/**
 * A `TrainingBackend` backed by a Tinker server: every call is one or more requests, numbered
 * with the model's `seq_id` in call order (so calls may be issued without awaiting each other),
 * and resolved through `retrieve_future`.
 */
export class TinkerTrainingClient implements TrainingBackend {
  private seq = 1;
  private datumsSinceStep = 0;
  private readonly warned = new Set<string>();
  /** Measured, named by the options or declared by the server; unknown otherwise, and then training is refused. */
  readonly reduction: RemoteReduction | undefined;
  private readonly strategy: LossStrategy;
  private readonly drop: readonly DroppableTerm[];
  private readonly serverLosses: readonly string[];

  constructor(
    readonly service: TrainingService,
    readonly modelId: string,
    readonly options: TrainingClientOptions,
    private readonly warn: (message: string) => void,
    reduction: RemoteReduction | undefined,
    /** What the reduction probe showed, when one ran. */
    readonly calibration?: ReductionCalibration,
  ) {
    this.reduction = reduction;
    this.strategy = options.lossStrategy ?? "native";
    this.drop = options.dropUnsupportedTerms ?? [];
    this.serverLosses = options.useServerExtensions === false ? [] : service.clientConfig.envace_loss_fns;
  }

  private get http(): TinkerHttp {
    return this.service.http;
  }

  /** Reserve the next `count` sequence numbers, synchronously, so they follow call order. */
  private reserve(count: number): number[] {
    const ids = Array.from({ length: count }, (_, i) => this.seq + i);
    this.seq += count;
    return ids;
  }

  private async submit(route: string, body: Record<string, unknown> | Uint8Array, signal?: AbortSignal): Promise<Submitted> {
    const send = async () => (await this.http.postParsed(`${API}/${route}`, body, UntypedFuture, signal)).request_id;
    return { requestId: await send(), resubmit: send };
  }

  private async result(submitted: Submitted, requestType: string, accept?: string): Promise<unknown> {
    return retrieveFuture(this.http, submitted.requestId, { resubmit: submitted.resubmit, requestType, ...(accept ? { accept } : {}) });
  }

  /**
   * Submit one chunk: as protobuf (a forward pass as `forward_backward` with `forward_only`, as
   * SDK 0.25 does) while the server takes it and the loss config is numeric, else as JSON. A
   * refused protobuf body took no sequence number, so the same chunk goes again as JSON.
   */
  private async submitChunk(
    route: "forward" | "forward_backward",
    seq: number,
    data: WireDatum[],
    lossFn: string,
    config: Record<string, number | string> | null,
  ): Promise<Submitted> {
    const numeric = Object.values(config ?? {}).every((v) => typeof v === "number");
    if (this.service.forwardBackwardWire === "protobuf" && numeric) {
      const body = encodeForwardBackwardRequest({
        model_id: this.modelId,
        seq_id: seq,
        data,
        loss_fn: lossFn,
        loss_fn_config: config as Record<string, number> | null,
        forward_only: route === "forward",
      });
      try {
        return await this.submit("forward_backward", body);
      } catch (error) {
        if (!(error instanceof TinkerHttpError && REFUSES_PROTOBUF.has(error.status))) throw error;
        this.service.fallBackToJson(`HTTP ${error.status}: ${error.detail}`);
      }
    }
    const inputKey = route === "forward" ? "forward_input" : "forward_backward_input";
    return this.submit(route, {
      model_id: this.modelId,
      seq_id: seq,
      [inputKey]: { data, loss_fn: lossFn, ...(config ? { loss_fn_config: config } : {}) },
      type: route,
    });
  }

  /** Submit chunks in sequence order, then wait for all of them. */
  private async runChunks(
    route: "forward" | "forward_backward",
    chunks: readonly { seq: number; data: WireDatum[] }[],
    lossFn: string,
    config: Record<string, number | string> | null,
  ): Promise<{ logprobs: number[][]; metrics: Record<string, number> }> {
    const submitted: Submitted[] = [];
    for (const chunk of chunks) submitted.push(await this.submitChunk(route, chunk.seq, chunk.data, lossFn, config));
    const outputs = await Promise.all(
      submitted.map(async (s, i) => {
        const reply = await this.result(s, route === "forward" ? "Forward" : "ForwardBackward", PROTOBUF_OR_JSON);
        const out = this.http.parse(`${API}/${route}`, reply instanceof Uint8Array ? decodeForwardBackwardOutput(reply) : reply, ForwardBackwardOutput);
        if (out.loss_fn_outputs.length !== chunks[i]!.data.length) {
          throw new TinkerHttpError(`${API}/${route}`, 200, `${out.loss_fn_outputs.length} outputs for ${chunks[i]!.data.length} datums`);
        }
        return out;
      }),
    );
    return {
      logprobs: outputs.flatMap((out) => out.loss_fn_outputs.map((o) => o.logprobs.data)),
      metrics: mergeMetrics(outputs.map((out, i) => ({ metrics: out.metrics, datums: chunks[i]!.data.length }))),
    };
  }

  private ranges(data: readonly Datum[]): [number, number][] {
    const config = this.service.clientConfig;
    return chunkRanges(data, config.fwdbwd_max_chunk_len, config.fwdbwd_max_chunk_bytes_count);
  }

  async forwardBackward(data: Datum[], loss: LossFn, options: ScoringOptions = {}): Promise<ForwardBackwardResult> {
    checkTemperature(options);
    checkData(data);
    const plan = planLoss(data, loss, { reduction: this.reduction ?? "sum", strategy: this.strategy, drop: this.drop, serverLosses: this.serverLosses });
    if (plan.kind !== "extension") this.requireReduction();
    if (plan.kind !== "extension") this.warnDropped(plan);
    if (this.reduction === "datum-token-mean" && plan.kind !== "extension") {
      if (this.datumsSinceStep > 0) {
        throw new TinkerLossError(
          "under the datum-token-mean reduction the server divides the accumulated gradient by every datum since the last " +
            "optimizer step, so a second forwardBackward before optimStep would rescale the first; send the whole batch in one call",
        );
      }
      this.datumsSinceStep += data.length;
    }
    // The extension's reduction spans the whole call, so it goes as one request.
    const ranges = plan.kind === "extension" ? [[0, data.length] as [number, number]] : this.ranges(data);
    const forwardSeqs = plan.kind === "surrogate" ? this.reserve(ranges.length) : [];
    const seqs = this.reserve(ranges.length);

    if (plan.kind === "extension") {
      const out = await this.runChunks("forward_backward", [{ seq: seqs[0]!, data: plan.data }], plan.lossFn, plan.config);
      const loss = out.metrics["loss:sum"];
      if (loss === undefined) throw new TinkerHttpError(`${API}/forward_backward`, 200, "the reply has no loss:sum metric");
      return { logprobs: out.logprobs, loss, metrics: out.metrics };
    }

    let wire: WireDatum[];
    let lossFn: string;
    let config: Record<string, number> | null = null;
    if (plan.kind === "surrogate") {
      const learner = await this.forwardRanges(data, ranges, forwardSeqs);
      const target = evaluateObjective(plan.objective, data, learner);
      wire = surrogateData(data, learner, target.gradLogprobs, this.reduction ?? "sum");
      lossFn = "importance_sampling";
    } else {
      wire = plan.data;
      lossFn = plan.lossFn;
      config = plan.config;
    }
    const out = await this.runChunks(
      "forward_backward",
      ranges.map(([start, end], i) => ({ seq: seqs[i]!, data: wire.slice(start, end) })),
      lossFn,
      config,
    );
    const evaluated = evaluateObjective(plan.objective, data, out.logprobs);
    const remote = Object.fromEntries(Object.entries(out.metrics).map(([key, value]) => [`remote_${key}`, value]));
    return { logprobs: out.logprobs, loss: evaluated.loss, metrics: { ...remote, ...evaluated.metrics } };
  }

  /**
   * Throw the `TinkerReductionError` that training with Tinker's own losses would throw: neither the
   * options nor the server say how the server reduces losses. Call it early to fail before a run
   * spends time on rollouts.
   */
  requireReduction(): void {
    if (this.reduction !== undefined) return;
    throw noReductionError(this.http.options.baseUrl, this.calibration);
  }

  /**
   * Run the reduction probe on this model (a scratch model: see `TinkerService.calibrateReduction`).
   * A server that reports a reduced loss (`loss:sum`) is told apart by a zero-gradient `ppo` probe;
   * one that reports none, by the gradient norms of two `importance_sampling` rounds, each ended by
   * an optimizer step with learning rate 0. A probe the server refuses is inconclusive.
   */
  async measureReduction(): Promise<ReductionCalibration> {
    try {
      const [forwardSeq] = this.reserve(1);
      const learner = (await this.runChunks("forward", [{ seq: forwardSeq!, data: probeForwardData() }], "cross_entropy", null)).logprobs;
      const probe = lossProbeData(learner);
      const [probeSeq] = this.reserve(1);
      const out = await this.runChunks("forward_backward", [{ seq: probeSeq!, data: probe }], "ppo", PROBE_CLIP);
      const reported = out.metrics["loss:sum"];
      if (reported !== undefined)
        return matchLoss(
          reported,
          lossCandidates(
            out.logprobs,
            probe.map((d) => toNumbers(d.loss_fn_inputs.logprobs!.data)),
          ),
        );
      // No reduced loss: clear what the probe accumulated, then compare gradient norms.
      if (gradNormOf(await this.optimStep(STILL_ADAM)) === undefined) {
        return { evidence: "the server reports neither a reduced loss (loss:sum) nor a gradient norm" };
      }
      const norms: number[] = [];
      for (const round of gradientProbeRounds(learner[1]!)) {
        const [seq] = this.reserve(1);
        await this.runChunks("forward_backward", [{ seq: seq!, data: round }], "importance_sampling", null);
        norms.push(gradNormOf(await this.optimStep(STILL_ADAM)) ?? Number.NaN);
      }
      return matchGradientRatio(norms[0]!, norms[1]!);
    } catch (error) {
      if (error instanceof TinkerRequestFailedError || (error instanceof TinkerHttpError && error.status >= 400 && error.status < 500)) {
        return { evidence: `the server refused the probe: ${error.message}` };
      }
      throw error;
    }
  }

  private warnDropped(plan: Exclude<LossPlan, { kind: "extension" }>): void {
    const key = plan.dropped.join(",");
    if (plan.dropped.length === 0 || this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(`model ${this.modelId}: training without ${plan.dropped.join(" and ")} (listed in dropUnsupportedTerms); the server cannot compute it`);
  }

  private forwardRanges(data: readonly Datum[], ranges: readonly [number, number][], seqs: readonly number[]): Promise<number[][]> {
    const wire = data.map((d) => toWireDatum(d.tokens, { target_tokens: d.targetTokens, weights: d.mask }));
    return this.runChunks(
      "forward",
      ranges.map(([start, end], i) => ({ seq: seqs[i]!, data: wire.slice(start, end) })),
      "cross_entropy",
      null,
    ).then((out) => out.logprobs);
  }

  async forward(data: Datum[], options: ScoringOptions = {}): Promise<number[][]> {
    checkTemperature(options);
    checkData(data);
    const ranges = this.ranges(data);
    return this.forwardRanges(data, ranges, this.reserve(ranges.length));
  }

  async optimStep(adam: AdamParams): Promise<Record<string, number>> {
    const [seq] = this.reserve(1);
    this.datumsSinceStep = 0;
    const submitted = await this.submit("optim_step", {
      model_id: this.modelId,
      seq_id: seq,
      adam_params: {
        learning_rate: adam.learningRate,
        beta1: adam.beta1,
        beta2: adam.beta2,
        eps: adam.eps,
        weight_decay: adam.weightDecay,
        grad_clip_norm: adam.gradClipNorm,
      },
      type: "optim_step",
    });
    const reply = this.http.parse(`${API}/optim_step`, await this.result(submitted, "OptimStep"), OptimStepResponse);
    return reply.metrics ?? {};
  }

  /**
   * Save the current weights for sampling and return a sampler over them. With a name the
   * weights are kept (`tinker://…/sampler_weights/<name>`); without one they are ephemeral.
   */
  async saveWeightsForSampler(name?: string): Promise<TinkerSampler> {
    if (name !== undefined) checkName(name);
    const [seq] = this.reserve(1);
    const body =
      name !== undefined
        ? { model_id: this.modelId, seq_id: seq, path: name, type: "save_weights_for_sampler" }
        : { model_id: this.modelId, seq_id: seq, sampling_session_seq_id: this.service.nextSamplingSeq(), type: "save_weights_for_sampler" };
    const submitted = await this.submit("save_weights_for_sampler", body);
    const saved = this.http.parse(`${API}/save_weights_for_sampler`, await this.result(submitted, "SaveWeightsForSampler"), SaveWeightsForSamplerResponse);
    const stops = this.options.stopTokenIds ?? [];
    if (saved.sampling_session_id) return new TinkerSampler(this.http, saved.sampling_session_id, saved.path ?? null, stops);
    if (saved.path) return this.service.createSampler({ modelPath: saved.path }, stops);
    throw new TinkerHttpError(`${API}/save_weights_for_sampler`, 200, "the reply has neither a path nor a sampling_session_id");
  }

  /** Save weights and optimizer state; returns the `tinker://…/weights/<name>` path. */
  async saveWeights(name: string): Promise<string> {
    checkName(name);
    const [seq] = this.reserve(1);
    const submitted = await this.submit("save_weights", { model_id: this.modelId, seq_id: seq, path: name, type: "save_weights" });
    return this.http.parse(`${API}/save_weights`, await this.result(submitted, "SaveWeights"), SaveWeightsResponse).path;
  }

  /**
   * Load saved weights (and, with `optimizer`, the optimizer state). Servers allow this only as a
   * model's first request, i.e. right after `createTrainingClient`.
   */
  async loadWeights(path: string, options: { optimizer?: boolean } = {}): Promise<void> {
    const [seq] = this.reserve(1);
    const submitted = await this.submit("load_weights", {
      model_id: this.modelId,
      seq_id: seq,
      path,
      optimizer: options.optimizer ?? false,
      type: "load_weights",
    });
    this.http.parse(`${API}/load_weights`, await this.result(submitted, "LoadWeights"), LoadWeightsResponse);
  }

  info(): Promise<GetInfoResponse> {
    return this.http.postParsed(`${API}/get_info`, { model_id: this.modelId, type: "get_info" }, GetInfoResponse);
  }

  /** Unload the model from the server; the client is unusable afterwards. */
  async unload(): Promise<void> {
    const submitted = await this.submit("unload_model", { model_id: this.modelId, type: "unload_model" });
    this.http.parse(`${API}/unload_model`, await this.result(submitted, "UnloadModel"), UnloadModelResponse);
  }
}

/** Tinker's losses score the model's own distribution; the protocol has no temperature to send. */
function checkTemperature(options: ScoringOptions): void {
  if ((options.temperature ?? 1) !== 1) {
    throw new TinkerLossError(`a Tinker server scores temperature 1 only (asked for ${options.temperature}); sample training rollouts at temperature 1`);
  }
}

function checkData(data: readonly Datum[]): void {
  if (data.length === 0) throw new TinkerUsageError("no datums: a request needs at least one");
  data.forEach(checkDatum);
}

function checkName(name: string): void {
  const result = CheckpointName.safeParse(name);
  if (!result.success) throw new TinkerUsageError(`checkpoint name "${name}": ${result.error.issues[0]!.message}`);
}
