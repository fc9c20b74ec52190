import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import * as tokenizers from "@huggingface/tokenizers";
import { InputError, RecordError, type Tokenizer } from "@envace/protocol";
import { ChatTemplate } from "./chat-template.js";

/**
 * The part of `@huggingface/tokenizers`' `Tokenizer` used here. Its published declarations use
 * extensionless relative imports that NodeNext resolution cannot follow, so the surface is typed
 * here once.
 */
interface HfTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
  decode(ids: number[], options: { skip_special_tokens: boolean; clean_up_tokenization_spaces: boolean }): string;
  token_to_id(token: string): number | undefined;
  id_to_token(id: number): string | undefined;
  get_vocab(withAddedTokens: boolean): Map<string, number>;
}
const HfTokenizer = tokenizers.Tokenizer as unknown as new (tokenizer: object, config: object) => HfTokenizer;

/** The files of a Hugging Face model folder that describe its tokenizer. */
export interface HuggingFaceTokenizerFiles {
  /** Parsed `tokenizer.json`. */
  tokenizer: unknown;
  /** Parsed `tokenizer_config.json`. */
  config: unknown;
  /** Parsed `generation_config.json`, when the folder has one (it may list extra stop ids). */
  generationConfig?: unknown;
  /** Contents of `chat_template.jinja`, which newer folders keep beside the config. */
  chatTemplate?: string;
}

export interface LoadTokenizerOptions {
  /**
   * Which template to use when the config holds several named ones
   * (`chat_template: [{name, template}]`). Default `"default"`.
   */
  templateName?: string;
}

/**
 * A Hugging Face tokenizer as the protocol `Tokenizer`, with the model's chat template.
 *
 * `encode` never adds special tokens of its own (no BOS): chat templates spell them out, exactly
 * as `transformers` tokenises a rendered template. `decode` keeps special tokens and performs no
 * clean-up, so `decode(encode(text)) === text`.
 */
export class HuggingFaceTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly stopTokenIds: readonly number[];
  readonly eosToken: string | undefined;
  readonly bosToken: string | undefined;
  /** The model's chat template; `undefined` when the folder has none. */
  readonly chatTemplate: ChatTemplate | undefined;
  readonly #tokenizer: HfTokenizer;

  constructor(files: HuggingFaceTokenizerFiles, options: LoadTokenizerOptions & { source?: string } = {}) {
    const where = options.source ?? "tokenizer";
    const config = asObject(files.config, `${where}/tokenizer_config.json`);
    try {
      this.#tokenizer = new HfTokenizer(asObject(files.tokenizer, `${where}/tokenizer.json`), config);
    } catch (error) {
      throw new RecordError({ file: `${where}/tokenizer.json` }, [{ path: "", message: `not a tokenizer the library can load (${(error as Error).message})` }]);
    }
    let maxId = -1;
    for (const id of this.#tokenizer.get_vocab(true).values()) maxId = Math.max(maxId, id);
    this.vocabSize = maxId + 1;

    const file = `${where}/tokenizer_config.json`;
    this.eosToken = specialToken(config, "eos_token", file);
    this.bosToken = specialToken(config, "bos_token", file);
    const special = Object.create(null) as Record<string, string>;
    for (const key of ["bos_token", "eos_token", "pad_token", "unk_token"] as const) {
      const value = specialToken(config, key, file);
      if (value !== undefined) special[key] = value;
    }

    const stops = new Set<number>();
    const eosId = this.eosToken === undefined ? undefined : this.#tokenizer.token_to_id(this.eosToken);
    if (eosId !== undefined) stops.add(eosId);
    for (const id of generationStopIds(files.generationConfig, `${where}/generation_config.json`)) stops.add(id);
    this.stopTokenIds = [...stops];

    const template = files.chatTemplate ?? configTemplate(config, options.templateName ?? "default", file);
    this.chatTemplate = template === undefined ? undefined : new ChatTemplate(template, special);
  }

  encode(text: string): number[] {
    return this.#tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  decode(tokens: readonly number[]): string {
    return this.#tokenizer.decode([...tokens], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  }

  /** The id of one token string (`"<|im_end|>"`), or `undefined` if the vocabulary lacks it. */
  tokenToId(token: string): number | undefined {
    return this.#tokenizer.token_to_id(token);
  }

  /** The token string of one id, or `undefined` if out of range. */
  idToToken(id: number): string | undefined {
    return this.#tokenizer.id_to_token(id);
  }
}

/**
 * Load the tokenizer of a Hugging Face model folder: `tokenizer.json` and `tokenizer_config.json`
 * (required), `generation_config.json` and `chat_template.jinja` (used when present).
 * A missing folder or file, or a file that is not JSON, throws an error naming its path.
 */
export async function loadHuggingFaceTokenizer(dir: string, options: LoadTokenizerOptions = {}): Promise<HuggingFaceTokenizer> {
  const info = await stat(dir).catch(() => undefined);
  if (info === undefined) throw new InputError(`Hugging Face model folder not found: ${dir}`);
  if (!info.isDirectory()) throw new InputError(`not a folder: ${dir} (expected a Hugging Face model folder)`);

  const tokenizerPath = join(dir, "tokenizer.json");
  const configPath = join(dir, "tokenizer_config.json");
  // Read in order, so the error for a folder missing several files always names the same one.
  const tokenizer = await readJson(tokenizerPath, true);
  const config = await readJson(configPath, true);
  const generationConfig = await readJson(join(dir, "generation_config.json"), false);
  const chatTemplate = await readText(join(dir, "chat_template.jinja"));
  return new HuggingFaceTokenizer(
    { tokenizer, config, generationConfig, ...(chatTemplate === undefined ? {} : { chatTemplate }) },
    { ...options, source: dir },
  );
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

async function readJson(path: string, required: boolean): Promise<unknown> {
  const text = await readText(path);
  if (text === undefined) {
    if (required) throw new InputError(`missing ${path} (a Hugging Face model folder needs tokenizer.json and tokenizer_config.json)`);
    return undefined;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RecordError({ file: path }, [{ path: "", message: `not JSON (${(error as Error).message})` }]);
  }
}

function asObject(value: unknown, file: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RecordError({ file }, [{ path: "", message: "expected a JSON object" }]);
  }
  return value as Record<string, unknown>;
}

/** A special token is written either as a string or as an AddedToken object `{content: …}`. */
function specialToken(config: Record<string, unknown>, key: string, file: string): string | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "object" && typeof (value as { content?: unknown }).content === "string") {
    return (value as { content: string }).content;
  }
  throw new RecordError({ file }, [{ path: key, message: "expected a token string or an object with `content`" }]);
}

function configTemplate(config: Record<string, unknown>, name: string, file: string): string | undefined {
  const value = config.chat_template;
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const named = value.filter(
      (entry): entry is { name: string; template: string } =>
        typeof entry === "object" &&
        entry !== null &&
        typeof (entry as { name?: unknown }).name === "string" &&
        typeof (entry as { template?: unknown }).template === "string",
    );
    const found = named.find((entry) => entry.name === name);
    if (found !== undefined) return found.template;
    throw new RecordError({ file }, [
      { path: "chat_template", message: `no template named "${name}" (has: ${named.map((e) => e.name).join(", ") || "none"})` },
    ]);
  }
  throw new RecordError({ file }, [{ path: "chat_template", message: "expected a string or a list of {name, template}" }]);
}

function generationStopIds(value: unknown, file: string): number[] {
  if (value === undefined) return [];
  const eos = asObject(value, file).eos_token_id;
  if (eos === undefined || eos === null) return [];
  const ids = Array.isArray(eos) ? eos : [eos];
  return ids.map((id, index) => {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0) {
      throw new RecordError({ file }, [{ path: Array.isArray(eos) ? `eos_token_id[${index}]` : "eos_token_id", message: "expected a token id" }]);
    }
    return id;
  });
}
