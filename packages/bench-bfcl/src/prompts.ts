import { pyDeepCopy, pyDumps, PyHashDict, type PyObject, pyRepr, toJson } from "@envace/python-text";
import type { ToolSpec } from "@envace/protocol";
import { GORILLA_TO_JSON_SCHEMA } from "./checker/types.js";
import type { Language } from "./checker/types.js";

/**
 * The prompts BFCL's inference uses, so that runs here are comparable with the leaderboard:
 * the default system prompt for prompting models (Python call syntax, JSON function docs), the
 * message that re-offers held-out functions (miss_func), and the language hints added to
 * function docs. The wording is upstream's and must not change.
 */

const PERSONA = "You are an expert in composing functions.";
const TASK =
  "You are given a question and a set of possible functions. Based on the question, you will need to make one or more function/tool calls to achieve the purpose. If none of the functions can be used, point it out. If the given question lacks the parameters required by the function, also point it out.";
const OUTPUT_FORMAT = "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]";
const TOOL_CALL_FORMAT = `You should only return the function calls in your response.\n\nIf you decide to invoke any of the function(s), you MUST put it in the format of ${OUTPUT_FORMAT}.  You SHOULD NOT include any other text in the response.`;
const MULTI_TURN_BEHAVIOR =
  "At each turn, you should try your best to complete the tasks requested by the user within the current turn. Continue to output functions to call until you have fulfilled the user's request to the best of your ability. Once you have no more functions to call, the system will consider the current turn complete and proceed to the next turn or task.";

/** The message that re-offers held-out functions to a function-calling model. */
export const ADDITIONAL_FUNCTIONS_PROMPT = "I have updated some more functions you can choose from. What about now?";

/** Upstream's default system prompt for prompting models, with the function docs as indented JSON. */
export function systemPrompt(functions: readonly PyHashDict[]): string {
  const tools = `Here is a list of functions in json format that you can invoke.\n${pyDumps([...functions], { indent: 4 })}\n`;
  // Upstream joins persona and task with no space between them.
  return `${PERSONA}${TASK}\n\n${TOOL_CALL_FORMAT}\n\n${MULTI_TURN_BEHAVIOR}\n\n${tools}`;
}

/** The miss_func message for prompting models: the held-out docs as a Python list, then the request. */
export function additionalFunctionsPrompt(functions: readonly PyHashDict[]): string {
  return `${pyRepr([...functions])}\n${ADDITIONAL_FUNCTIONS_PROMPT}`;
}

function hintFor(language: Language): string {
  if (language === "java") return " Note that the provided function is in Java 8 SDK syntax.";
  if (language === "javascript") return " Note that the provided function is in JavaScript syntax.";
  return " Note that the provided function is in Python 3 syntax.";
}

function text(value: PyObject | undefined): string {
  return typeof value === "string" ? value : "";
}

/**
 * Upstream's language-specific preprocessing of function docs for inference: a syntax note on
 * every description, and for Java and JavaScript every parameter retyped as a string whose
 * description says which type to write.
 */
export function withLanguageHints(functions: readonly PyHashDict[], language: Language): PyHashDict[] {
  return functions.map((original) => {
    const doc = pyDeepCopy(original);
    doc.set("description", text(doc.get("description")) + hintFor(language));
    if (language === "python") return doc;
    const properties = (doc.get("parameters") as PyHashDict | undefined)?.get("properties");
    if (!(properties instanceof PyHashDict)) return doc;
    const name = language === "java" ? "Java" : "JavaScript";
    for (const [, param] of properties) {
      if (!(param instanceof PyHashDict)) continue;
      const type = text(param.get("type"));
      let description = text(param.get("description"));
      description +=
        type === "any"
          ? ` This parameter can be of any type of ${name} object in string representation.`
          : ` This is ${name} ${type} type parameter in string representation.`;
      const listTypes = language === "java" ? ["ArrayList", "Array"] : ["array"];
      if (listTypes.includes(type)) {
        description += ` The list elements are of type ${text((param.get("items") as PyHashDict | undefined)?.get("type"))}; they are not in string representation.`;
        param.delete("items");
      }
      if (language === "javascript" && type === "dict" && param.has("properties")) {
        description += ` The dictionary entries have the following schema; they are not in string representation. ${pyDumps(param.get("properties")!)}`;
        param.delete("properties");
      }
      param.set("description", description);
      param.set("type", "string");
    }
    return doc;
  });
}

/** A tool name for providers that allow only `[a-zA-Z0-9_-]`: dots become underscores. */
export function toolNameOf(name: string): string {
  return name.replaceAll(".", "_");
}

/** Gorilla parameter schemas as JSON Schema (upstream's `_cast_to_openai_type`). */
function castProperties(properties: PyHashDict): PyHashDict {
  for (const [, param] of properties) {
    if (!(param instanceof PyHashDict)) continue;
    const type = param.get("type");
    if (typeof type !== "string") param.set("type", "string");
    else {
      if (type === "float") {
        param.set("format", "float");
        param.set("description", `${text(param.get("description"))} This is a float type value.`);
      }
      param.set("type", GORILLA_TO_JSON_SCHEMA[type] ?? "string");
    }
    const mapped = param.get("type");
    if (mapped !== "array" && mapped !== "object") continue;
    const nested = param.get("properties");
    const items = param.get("items");
    if (nested instanceof PyHashDict) param.set("properties", castProperties(nested));
    else if (items instanceof PyHashDict) {
      items.set("type", GORILLA_TO_JSON_SCHEMA[text(items.get("type"))] ?? "string");
      const inner = items.get("items");
      const innerProperties = items.get("properties");
      if (items.get("type") === "array" && inner instanceof PyHashDict) inner.set("type", GORILLA_TO_JSON_SCHEMA[text(inner.get("type"))] ?? "string");
      else if (items.get("type") === "object" && innerProperties instanceof PyHashDict) items.set("properties", castProperties(innerProperties));
    }
  }
  return properties;
}

/** Function docs as OpenAI function tools: JSON Schema types, dots in names replaced. */
export function toTools(functions: readonly PyHashDict[]): ToolSpec[] {
  return functions.map((original) => {
    const doc = pyDeepCopy(original);
    const parameters = doc.get("parameters") instanceof PyHashDict ? (doc.get("parameters") as PyHashDict) : new PyHashDict();
    parameters.set("type", "object");
    const properties = parameters.get("properties");
    parameters.set("properties", castProperties(properties instanceof PyHashDict ? properties : new PyHashDict()));
    const json = toJson(parameters) as Record<string, never>;
    return {
      type: "function",
      function: { name: toolNameOf(text(doc.get("name"))), description: text(doc.get("description")), parameters: json },
    };
  });
}
