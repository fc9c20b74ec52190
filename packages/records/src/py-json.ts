import { RecordError } from "@envace/protocol";
import { JsonDecodeError, jsonLoads, type PyValue } from "@envace/python-text";
import { readText } from "./read-text.js";

// Data written for Python programs (benchmark tasks, databases, saved runs) is read as
// `json.loads` reads it: ints of any size, `NaN`, a repeated key's last value. Its errors are
// the records' errors: a `RecordError` naming the file and line.

/** Read a JSON file as Python reads it; syntax errors name the file and line. */
export async function readPyJsonFile(file: string): Promise<PyValue> {
  return parsePyJsonText(await readText(file), file);
}

/**
 * Read JSON text as Python reads it; a syntax error names the file and its line there (`line`,
 * when the text is one line of a bigger file, else the line within the text).
 */
export function parsePyJsonText(text: string, file: string, line?: number): PyValue {
  let syntax: JsonDecodeError;
  try {
    return jsonLoads(text);
  } catch (error) {
    if (!(error instanceof JsonDecodeError)) throw error;
    syntax = error;
  }
  throw new RecordError({ file, line: line ?? syntax.line }, [{ path: "", message: `not JSON (${syntaxReason(syntax)})` }]);
}

/**
 * One line of JSON Lines as Python reads it, for `parseJsonLines`' `parse`: a syntax error says
 * what and at which column, and the reader names the file and line.
 */
export function parsePyJsonLine(line: string): PyValue {
  try {
    return jsonLoads(line);
  } catch (error) {
    // As `JSON.parse`, the default, throws: a `SyntaxError` whose message is the reason.
    throw error instanceof JsonDecodeError ? new SyntaxError(syntaxReason(error)) : error;
  }
}

function syntaxReason(error: JsonDecodeError): string {
  return `${error.reason}, column ${error.column}`;
}
