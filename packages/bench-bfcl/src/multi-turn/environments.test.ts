import type { PyHashDict } from "@envace/python-text";
import { describe, expect, it } from "vitest";
import { parsePyJson } from "../py/json.js";
import { createSession, EnvironmentSet, resultString } from "./runtime.js";

function environments(classes: string[], config = "{}"): EnvironmentSet {
  return new EnvironmentSet({ involvedClasses: classes, initialConfig: parsePyJson(config) as PyHashDict, longContext: false, session: createSession() });
}

function run(set: EnvironmentSet, calls: string[]): string[] {
  return calls.map((call) => set.execute(call));
}

/** Calls made in order on fresh environments, and what each answers. */
interface Transcript {
  readonly classes: string[];
  readonly config?: string;
  readonly calls: string[];
  readonly answers: string[];
}

/** A table of transcripts, one test each, named by its key. */
function replays(transcripts: Record<string, Transcript>): void {
  it.each(Object.entries(transcripts))("%s", (_title, { classes, config, calls, answers }) => {
    expect(run(environments(classes, config), calls)).toEqual(answers);
  });
}

const FILES = JSON.stringify({
  GorillaFileSystem: {
    root: {
      alex: {
        type: "directory",
        contents: {
          docs: { type: "directory", contents: { sub: { type: "directory", contents: {} }, "a.txt": { type: "file", content: "b\na\n" } } },
          archive: { type: "directory", contents: {} },
        },
      },
    },
  },
});

// Expected strings are what upstream's Python environments return for the same calls.
describe("GorillaFileSystem", () => {
  replays({
    "navigates, moves and keeps upstream's parent links after a move": {
      classes: ["GorillaFileSystem"],
      config: FILES,
      calls: ["pwd()", "cd('..')", "mv('docs','archive')", "cd('archive')", "cd('docs')", "pwd()", "cd('sub')", "cd('..')", "pwd()", "ls()"],
      answers: [
        '{"current_working_directory": "/alex"}',
        '{"error": "Current directory is already the root. Cannot go back."}',
        `{"result": "'docs' moved to 'archive/docs'"}`,
        '{"current_working_directory": "archive"}',
        '{"current_working_directory": "docs"}',
        '{"current_working_directory": "/alex/archive/docs"}',
        '{"current_working_directory": "sub"}',
        "{}",
        // `sub` still points at the directory that was moved away, as upstream's objects do.
        '{"current_working_directory": "/alex/docs"}',
        '{"current_directory_content": ["sub", "a.txt"]}',
      ],
    },
    "sorts, counts and reports errors as upstream": {
      classes: ["GorillaFileSystem"],
      config: FILES,
      calls: [
        "cd(folder='docs')",
        "sort(file_name='a.txt')",
        "wc(file_name='a.txt', mode='c')",
        "cat(file_name='sub')",
        "mkdir(dir_name='x/y')",
        "du(human_readable=True)",
      ],
      answers: [
        '{"current_working_directory": "docs"}',
        '{"sorted_content": "a\\nb"}',
        '{"count": 4, "type": "characters"}',
        `{"error": "cat: 'sub': Is a directory"}`,
        `{"error": "mkdir: cannot create directory 'x/y': Invalid character"}`,
        '{"disk_usage": "4.00 B"}',
      ],
    },
  });
});

describe("call binding and execution", () => {
  it("binds positional and keyword arguments by signature, with Python's errors", () => {
    const set = environments(["GorillaFileSystem", "MathAPI"], FILES);
    expect(
      run(set, ["cd()", "cd('a', folder='b')", "pwd(1)", "tail('a', 1, 2)", "cd(x=1)", "add()"]).map((r) => r.replace("Error during execution: ", "")),
    ).toEqual([
      "GorillaFileSystem.cd() missing 1 required positional argument: 'folder'",
      "GorillaFileSystem.cd() got multiple values for argument 'folder'",
      "GorillaFileSystem.pwd() takes 1 positional argument but 2 were given",
      "GorillaFileSystem.tail() takes from 2 to 3 positional arguments but 4 were given",
      "GorillaFileSystem.cd() got an unexpected keyword argument 'x'",
      "MathAPI.add() missing 2 required positional arguments: 'a' and 'b'",
    ]);
  });

  replays({
    "refuses unknown and forbidden functions": {
      classes: ["MathAPI"],
      // Upstream names the text between the first dot and the next: `os.kill(...)` is `kill`.
      calls: ["undefined_function(a=1)", "kill(pid=1)", "os.kill(pid=1)"],
      answers: [
        "Error during execution: name 'undefined_function' is not defined",
        "Error during execution: Function call kill is not allowed.",
        "Error during execution: Function call kill is not allowed.",
      ],
    },
  });

  it("writes a returned dict with json.dumps, falling back to str for what JSON cannot hold", () => {
    const math = environments(["MathAPI"]);
    expect(
      run(math, [
        "mean(numbers=[1, 2])",
        "round_number(2.5)",
        "round_number(2.675, 2)",
        "square_root(2, 5)",
        "logarithm(8, 2, 3)",
        "add('a', 'b')",
        "divide(1, 0)",
      ]),
    ).toEqual([
      '{"result": 1.5}',
      '{"result": 2.0}',
      '{"result": 2.67}',
      "{'result': Decimal('1.4142')}",
      "{'result': mpf('3.00049')}",
      '{"result": "ab"}',
      '{"error": "Cannot divide by zero"}',
    ]);
    // A negative argument makes mpmath's logarithm complex.
    expect(math.execute("logarithm(value=630.0, base=-10, precision=5)")).toBe("{'result': mpc(real='0.97826862', imag='-1.3347263')}");
    expect(resultString(["x", null])).toBe("['x', None]");
  });
});

describe("seeded and stateful environments", () => {
  replays({
    "TwitterAPI shares a mutable default argument between calls, as Python does": {
      classes: ["TwitterAPI"],
      config: '{"TwitterAPI": {"username": "u", "password": "p"}}',
      calls: ["authenticate_twitter('u', 'p')", "post_tweet('one')", "mention(0, ['@x'])", "post_tweet('two')"],
      answers: [
        '{"authentication_status": true}',
        '{"id": 0, "username": "u", "content": "one", "tags": [], "mentions": []}',
        '{"mention_status": "Users mentioned successfully"}',
        '{"id": 1, "username": "u", "content": "two", "tags": [], "mentions": ["@x"]}',
      ],
    },
    "draws ids and readings from the seeded generator": {
      classes: ["TravelAPI", "VehicleControlAPI", "MessageAPI"],
      calls: [
        "authenticate_travel('c', 's', 'r', 'read_write', 'Ada', 'L')",
        "get_outside_temperature_from_google()",
        "message_login('USR001')",
        "send_message('USR002', 'hi')",
      ],
      answers: [
        '{"expires_in": 2, "access_token": "251675", "token_type": "Bearer", "scope": "read_write"}',
        '{"outsideTemperature": 36.63485703790535}',
        `{"login_status": true, "message": "User 'USR001' logged in successfully."}`,
        `{"sent_status": true, "message_id": {"new_id": 67410}, "message": "Message sent to 'USR002' successfully."}`,
      ],
    },
    "VehicleControlAPI needs locked doors and a fully pressed brake to start": {
      classes: ["VehicleControlAPI"],
      calls: ["startEngine('START')", "lockDoors(False, ['driver', 'passenger', 'rear_left', 'rear_right'])", "pressBrakePedal(1)", "startEngine('START')"],
      answers: [
        '{"error": "All doors must be locked before starting the engine. Here are the unlocked doors: driver, passenger, rear_left, rear_right"}',
        '{"lockStatus": "locked", "remainingUnlockedDoors": 0}',
        '{"brakePedalStatus": "pressed", "brakePedalForce": 1000.0}',
        '{"engineState": "running", "fuelLevel": 0.0, "batteryVoltage": 12.6}',
      ],
    },
  });

  it("TradingBot keeps float balances floats", () => {
    const bot = environments(["TradingBot"]);
    expect(run(bot, ["trading_login('a', 'b')", "fund_account(100)", "fund_account(50.5)"])).toEqual([
      '{"status": "Logged in successfully"}',
      '{"status": "Account funded successfully", "new_balance": 10100.0}',
      '{"status": "Account funded successfully", "new_balance": 10150.5}',
    ]);
    // Timestamps are seeded draws within the day after the environment's fixed "now".
    expect(bot.execute("get_transaction_history()")).toBe(
      '{"transaction_history": [{"type": "deposit", "amount": 100, "timestamp": "2024-09-02 05:40:15"}, {"type": "deposit", "amount": 50.5, "timestamp": "2024-09-01 12:26:34"}]}',
    );
  });
});
