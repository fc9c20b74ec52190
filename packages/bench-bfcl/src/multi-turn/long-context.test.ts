import type { PyHashDict } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { parsePyJson } from "../py/json.js";
import { FILLER_NAMES, parseLongContextModule } from "./long-context.js";
import { createSession, EnvironmentSet } from "./runtime.js";

/** A stand-in for upstream's long_context.py: literal assignments, every name the environments read. */
function fillerModule(): string {
  const values: Record<string, string> = {
    FILE_CONTENT_EXTENSION: '" Filler paragraph."',
    FILES_TAIL_USED: "['log.txt']",
    POPULATE_FILE_EXTENSION: "['image_1.jpg', 'image_2.jpg']",
    WATCH_LIST_EXTENSION: "['AAA', 'BBB']",
    INTERMEDIARY_CITIES: "[\n  'Springfield',\n  'Riverdale',\n]",
  };
  return FILLER_NAMES.map((name) => `${name} = ${values[name] ?? "{}"}`).join("\n\n");
}

describe("the long-context filler", () => {
  it("reads upstream's module of literal assignments", () => {
    const filler = parseLongContextModule(fillerModule());
    expect(filler.get("INTERMEDIARY_CITIES")).toEqual(["Springfield", "Riverdale"]);
    expect(() => parseLongContextModule("A = 1")).toThrow("missing FILE_CONTENT_EXTENSION");
  });

  it("buries the scenario in filler: extended file contents and populated innermost folders", () => {
    const set = new EnvironmentSet({
      involvedClasses: ["GorillaFileSystem", "TradingBot"],
      initialConfig: parsePyJson(
        '{"GorillaFileSystem": {"root": {"w": {"type": "directory", "contents": {"a.txt": {"type": "file", "content": "A."}, "log.txt": {"type": "file", "content": "L."}}}}}, "TradingBot": {"authenticated": true}}',
      ) as PyHashDict,
      longContext: true,
      session: createSession(parseLongContextModule(fillerModule())),
    });
    expect(set.execute("ls()")).toBe('{"current_directory_content": ["a.txt", "log.txt", "image_1.jpg", "image_2.jpg"]}');
    expect(set.execute("cat(file_name='a.txt')")).toBe('{"file_content": "A. Filler paragraph."}');
    expect(set.execute("cat(file_name='log.txt')")).toBe('{"file_content": "L."}');
    expect(set.execute("get_watchlist()")).toBe("['NVDA', 'AAA', 'BBB']");
  });
});
