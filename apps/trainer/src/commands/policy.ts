// The model behind a `--policy` (or `--user`) option, as every evaluation command loads it.
import { ModelSpecError, parseModelSpec, policyFromSpec, type ModelSpec, type ResolvedModel } from "@envace/models";
import { UsageError } from "../faults.js";

/**
 * The API key for OpenAI-compatible servers (models and judges), read here, at the command's
 * edge: libraries take it as an argument. Unset: none (`EMPTY`, which self-hosted servers accept).
 */
export function openAiKey(env: NodeJS.ProcessEnv = process.env): { apiKey?: string } {
  const key = env.OPENAI_API_KEY;
  return key === undefined || key === "" ? {} : { apiKey: key };
}

/** The spec of `option`, or a usage error that quotes the option. */
export function modelSpec(spec: string, option = "--policy"): ModelSpec {
  try {
    return parseModelSpec(spec);
  } catch (error) {
    throw error instanceof ModelSpecError ? new UsageError(`${option}: ${error.message}`) : error;
  }
}

/**
 * Load the model of `spec`; a server must answer before the command starts, so an unreachable
 * one stops it with the server's URL and error instead of a run of failed tasks.
 */
export async function loadModel(spec: string, option = "--policy"): Promise<ResolvedModel> {
  modelSpec(spec, option);
  let model: ResolvedModel;
  try {
    model = await policyFromSpec(spec, openAiKey());
  } catch (error) {
    throw error instanceof ModelSpecError ? new UsageError(`${option}: ${error.message}`) : error;
  }
  await model.connection?.reach();
  return model;
}
