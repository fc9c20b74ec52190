import * as ops from "../../py/ops.js";
import { PythonRandom } from "../../py/random.js";
import { deepCopy, float, PyDict, pyEquals, truthy } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { asDict, asStr, item, iter, setItem } from "../python-access.js";
import { randomFrom } from "./seed.js";

const MAX_FUEL_LEVEL = 50;
const MIN_FUEL_LEVEL = float(0.0);
const MILE_PER_GALLON = float(20.0);
const DEFAULT_SEED = 141053;

/** Public attributes: their names, and the scenario key each is loaded from with its default. */
const ATTRIBUTES: readonly (readonly [string, string, () => Py])[] = [
  ["fuelLevel", "fuelLevel", () => float(0.0)],
  ["batteryVoltage", "batteryVoltage", () => float(12.6)],
  ["engine_state", "engineState", () => "stopped"],
  ["remainingUnlockedDoors", "remainingUnlockedDoors", () => 4],
  ["doorStatus", "doorStatus", () => PyDict.of({ driver: "unlocked", passenger: "unlocked", rear_left: "unlocked", rear_right: "unlocked" })],
  ["acTemperature", "acTemperature", () => float(25.0)],
  ["fanSpeed", "fanSpeed", () => 50],
  ["acMode", "acMode", () => "auto"],
  ["humidityLevel", "humidityLevel", () => float(50.0)],
  ["headLightStatus", "headLightStatus", () => "off"],
  ["parkingBrakeStatus", "parkingBrakeStatus", () => "released"],
  ["brakePedalStatus", "brakePedalStatus", () => "released"],
  ["distanceToNextVehicle", "distanceToNextVehicle", () => float(50.0)],
  ["cruiseStatus", "cruiseStatus", () => "inactive"],
  ["destination", "destination", () => "None"],
  ["frontLeftTirePressure", "frontLeftTirePressure", () => float(32.0)],
  ["frontRightTirePressure", "frontRightTirePressure", () => float(32.0)],
  ["rearLeftTirePressure", "rearLeftTirePressure", () => float(30.0)],
  ["rearRightTirePressure", "rearRightTirePressure", () => float(30.0)],
];

/** Distances between zip codes, either direction. */
const DISTANCES: readonly (readonly [string, string, number])[] = [
  ["83214", "74532", 750.0],
  ["56108", "62947", 320.0],
  ["71354", "83462", 450.0],
  ["47329", "52013", 290.0],
  ["69238", "51479", 630.0],
  ["94016", "83214", 980.0],
  ["94016", "94704", 600.0],
  ["94704", "08540", 2550.0],
  ["94016", "08540", 1950.0],
  ["62947", "47329", 1053.0],
  ["94016", "62947", 780.0],
  ["74532", "94016", 880.0],
];

const ZIP_CODES: Readonly<Record<string, string>> = {
  Rivermist: "83214",
  Stonebrook: "74532",
  Maplecrest: "56108",
  Silverpine: "62947",
  Shadowridge: "71354",
  "Sunset Valley": "83462",
  Oakendale: "47329",
  Willowbend: "52013",
  "Crescent Hollow": "69238",
  Autumnville: "51479",
  "San Francisco": "94016",
};

/** A car's engine, doors, climate, brakes, cruise control and navigation (upstream `VehicleControlAPI`). */
export class VehicleControlAPI extends BfclEnvironment {
  readonly className = "VehicleControlAPI";
  private readonly state = new Map<string, Py>();
  private longContext = false;
  private random = new PythonRandom(DEFAULT_SEED);
  private parkingBrakeForce: Py = float(0.0);
  private slopeAngle: Py = float(0.0);
  private brakePedalForce: Py = float(0.0);

  override load(config: PyDict, longContext: boolean): void {
    this.random = randomFrom(config.has("random_seed") ? config.get("random_seed")! : DEFAULT_SEED);
    for (const [name, key, fallback] of ATTRIBUTES) this.state.set(name, config.has(key) ? config.get(key)! : deepCopy(fallback()));
    // The unlocked-door count is always recomputed from the doors.
    const doors = asDict(this.get("doorStatus"), "keys");
    this.state.set("remainingUnlockedDoors", 4 - doors.values().filter((status) => pyEquals(status, "locked")).length);
    this.parkingBrakeForce = config.has("parkingBrakeForce") ? config.get("parkingBrakeForce")! : float(0.0);
    this.slopeAngle = config.has("slopeAngle") ? config.get("slopeAngle")! : float(0.0);
    this.brakePedalForce = config.has("brakePedalForce") ? config.get("brakePedalForce")! : float(0.0);
    this.longContext = longContext;
  }

  override publicState(): Map<string, Py> {
    return new Map([...this.state, ["long_context", this.longContext]]);
  }

  private get(key: string): Py {
    return this.state.get(key) ?? null;
  }

  private set(key: string, value: Py): void {
    this.state.set(key, value);
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("startEngine", ["ignitionMode"], (mode) => {
      if (pyEquals(mode, "STOP")) this.set("engine_state", "stopped");
      if (ops.compare(">", this.get("remainingUnlockedDoors"), 0)) {
        const unlocked = [...asDict(this.get("doorStatus"), "items")].filter(([, status]) => pyEquals(status, "unlocked")).map(([door]) => asStr(door, "join"));
        return PyDict.of({ error: `All doors must be locked before starting the engine. Here are the unlocked doors: ${unlocked.join(", ")}` });
      }
      if (!pyEquals(this.get("brakePedalStatus"), "pressed")) return PyDict.of({ error: "Brake pedal needs to be pressed when starting the engine." });
      if (!pyEquals(this.brakePedalForce, float(1000.0))) return PyDict.of({ error: "Must press the brake fully before starting the engine." });
      if (ops.compare("<", this.get("fuelLevel"), MIN_FUEL_LEVEL)) return PyDict.of({ error: "Fuel tank is empty." });
      if (pyEquals(mode, "START")) this.set("engine_state", "running");
      else return PyDict.of({ error: "Invalid ignition mode." });
      return PyDict.of({ engineState: this.get("engine_state"), fuelLevel: this.get("fuelLevel"), batteryVoltage: this.get("batteryVoltage") });
    });
    this.define("fillFuelTank", ["fuelAmount"], (amount) => {
      if (ops.compare("<", amount, 0)) return PyDict.of({ error: "Fuel amount cannot be negative." });
      if (ops.compare(">", ops.add(this.get("fuelLevel"), amount), MAX_FUEL_LEVEL)) return PyDict.of({ error: "Cannot fill gas above the tank capacity." });
      if (ops.compare("<", ops.add(this.get("fuelLevel"), amount), MIN_FUEL_LEVEL)) return PyDict.of({ error: "Fuel tank is empty. Min fuel level is 0 gallons." });
      this.set("fuelLevel", ops.add(this.get("fuelLevel"), amount));
      return PyDict.of({ fuelLevel: this.get("fuelLevel") });
    });
    this.define("lockDoors", ["unlock", "door"], (unlock, doors) => {
      const target = truthy(unlock) ? "unlocked" : "locked";
      const status = this.get("doorStatus");
      for (const door of iter(doors)) {
        if (pyEquals(item(status, door), target)) continue;
        setItem(status, door, target);
        this.set("remainingUnlockedDoors", ops.add(this.get("remainingUnlockedDoors"), truthy(unlock) ? 1 : -1));
      }
      return PyDict.of({ lockStatus: target, remainingUnlockedDoors: this.get("remainingUnlockedDoors") });
    });
    this.define(
      "adjustClimateControl",
      ["temperature", { name: "unit", default: "celsius" }, { name: "fanSpeed", default: 50 }, { name: "mode", default: "auto" }],
      (temperature, unit, fanSpeed, mode) => {
        if (!(ops.compare("<=", 0, fanSpeed) && ops.compare("<=", fanSpeed, 100))) return PyDict.of({ error: "Fan speed must be between 0 and 100." });
        this.set("acTemperature", temperature);
        if (pyEquals(unit, "fahrenheit")) this.set("acTemperature", ops.truediv(ops.mul(ops.sub(temperature, 32), 5), 9));
        this.set("fanSpeed", fanSpeed);
        this.set("acMode", mode);
        return PyDict.of({ currentACTemperature: temperature, climateMode: mode, humidityLevel: this.get("humidityLevel") });
      },
    );
    this.define("get_outside_temperature_from_google", [], () => {
      if (this.longContext) {
        const weather = asDict(this.filler("LONG_WEATHER_EXTENSION"), "items");
        weather.set("outsideTemperature", float(this.random.uniform(-10.0, 40.0)));
        return weather;
      }
      return PyDict.of({ outsideTemperature: float(this.random.uniform(-10.0, 40.0)) });
    });
    this.define("get_outside_temperature_from_weather_com", [], () => PyDict.of({ error: 404 }));
    this.define("setHeadlights", ["mode"], (mode) => {
      if (!["on", "off", "auto"].some((m) => pyEquals(m, mode))) return PyDict.of({ error: "Invalid headlight mode." });
      const status = pyEquals(mode, "on") ? "on" : "off";
      this.set("headLightStatus", status);
      return PyDict.of({ headlightStatus: status });
    });
    this.define("displayCarStatus", ["option"], (option) => {
      const status = new PyDict();
      if (this.longContext) status.set("metadata", this.filler("CAR_STATUS_METADATA_EXTENSION"));
      const fields: Readonly<Record<string, readonly (readonly [string, () => Py])[]>> = {
        fuel: [["fuelLevel", () => this.get("fuelLevel")]],
        battery: [["batteryVoltage", () => this.get("batteryVoltage")]],
        doors: [["doorStatus", () => this.get("doorStatus")]],
        climate: [
          ["currentACTemperature", () => this.get("acTemperature")],
          ["fanSpeed", () => this.get("fanSpeed")],
          ["climateMode", () => this.get("acMode")],
          ["humidityLevel", () => this.get("humidityLevel")],
        ],
        headlights: [["headlightStatus", () => this.get("headLightStatus")]],
        parkingBrake: [
          ["parkingBrakeStatus", () => this.get("parkingBrakeStatus")],
          ["parkingBrakeForce", () => this.parkingBrakeForce],
          ["slopeAngle", () => this.slopeAngle],
        ],
        brakePedal: [
          ["brakePedalStatus", () => this.get("brakePedalStatus")],
          ["brakePedalForce", () => this.brakePedalForce],
        ],
        engine: [["engineState", () => this.get("engine_state")]],
      };
      const chosen = typeof option === "string" && Object.hasOwn(fields, option) ? fields[option]! : undefined;
      if (chosen === undefined) status.set("error", "Invalid option");
      else for (const [key, read] of chosen) status.set(key, read());
      return status;
    });
    this.define("activateParkingBrake", ["mode"], (mode) => {
      if (!["engage", "release"].some((m) => pyEquals(m, mode))) return PyDict.of({ error: "Invalid mode" });
      const engage = pyEquals(mode, "engage");
      const status = engage ? "engaged" : "released";
      const force = float(engage ? 500.0 : 0.0);
      this.set("parkingBrakeStatus", status);
      this.parkingBrakeForce = force;
      this.slopeAngle = float(10.0);
      const reply = new PyDict();
      if (this.longContext) reply.set("parkingBrakeInstruction", this.filler("PARKING_BRAKE_INSTRUCTION"));
      reply.set("parkingBrakeStatus", status);
      reply.set("_parkingBrakeForce", force);
      reply.set("_slopeAngle", float(10.0));
      return reply;
    });
    this.define("pressBrakePedal", ["pedalPosition"], (position) => {
      if (!(ops.compare("<=", 0, position) && ops.compare("<=", position, 1))) return PyDict.of({ error: "Pedal position must be between 0 and 1." });
      if (pyEquals(position, 0)) {
        this.set("brakePedalStatus", "released");
        this.brakePedalForce = float(0.0);
        return PyDict.of({ brakePedalStatus: "released", brakePedalForce: float(0.0) });
      }
      const force = ops.mul(position, 1000);
      this.set("brakePedalStatus", "pressed");
      this.brakePedalForce = force;
      return PyDict.of({ brakePedalStatus: "pressed", brakePedalForce: ops.toFloat(force) });
    });
    this.define("releaseBrakePedal", [], () => {
      this.set("brakePedalStatus", "released");
      this.brakePedalForce = float(0.0);
      return PyDict.of({ brakePedalStatus: "released", brakePedalForce: float(0.0) });
    });
    this.define("setCruiseControl", ["speed", "activate", "distanceToNextVehicle"], (speedArg, activate, distanceArg) => {
      const distance = ops.toFloat(distanceArg);
      const speed = ops.toFloat(speedArg);
      if (pyEquals(this.get("engine_state"), "stopped")) return PyDict.of({ error: "Start the engine before activating the cruise control." });
      if (truthy(activate)) {
        this.set("distanceToNextVehicle", distance);
        if (ops.compare("<", speed, 0) || ops.compare(">", speed, 120) || !pyEquals(ops.mod(speed, 5), 0)) return PyDict.of({ error: "Invalid speed" });
        this.set("cruiseStatus", "active");
        return PyDict.of({ cruiseStatus: "active", currentSpeed: speed, distanceToNextVehicle: distance });
      }
      this.set("cruiseStatus", "inactive");
      this.set("distanceToNextVehicle", distance);
      return PyDict.of({ cruiseStatus: "inactive", currentSpeed: speed, distanceToNextVehicle: distance });
    });
    this.define("get_current_speed", [], () => PyDict.of({ currentSpeed: float(this.random.uniform(0.0, 120.0)) }));
    this.define("display_log", ["messages"], (messages) => PyDict.of({ log: messages }));
    this.define("estimate_drive_feasibility_by_mileage", ["distance"], (distance) =>
      PyDict.of({ canDrive: !ops.compare("<", ops.mul(this.get("fuelLevel"), MILE_PER_GALLON), distance) }),
    );
    this.define("liter_to_gallon", ["liter"], (liter) => PyDict.of({ gallon: ops.mul(liter, float(0.264172)) }));
    this.define("gallon_to_liter", ["gallon"], (gallon) => PyDict.of({ liter: ops.mul(gallon, float(3.78541)) }));
    this.define("estimate_distance", ["cityA", "cityB"], (cityA, cityB) => {
      const known = DISTANCES.find(([a, b]) => (pyEquals(cityA, a) && pyEquals(cityB, b)) || (pyEquals(cityA, b) && pyEquals(cityB, a)));
      const result = known ? PyDict.of({ distance: float(known[2]) }) : PyDict.of({ error: "distance not found in database." });
      if (this.longContext) result.set("intermediaryCities", this.filler("INTERMEDIARY_CITIES"));
      return result;
    });
    this.define("get_zipcode_based_on_city", ["city"], (city) =>
      PyDict.of({ zipcode: typeof city === "string" && Object.hasOwn(ZIP_CODES, city) ? ZIP_CODES[city]! : "00000" }),
    );
    this.define("set_navigation", ["destination"], (destination) => {
      this.set("destination", destination);
      return PyDict.of({ status: ops.add("Navigating to ", destination) });
    });
    this.define("check_tire_pressure", [], () => {
      const pressures = ["frontLeftTirePressure", "frontRightTirePressure", "rearLeftTirePressure", "rearRightTirePressure"];
      const mean = ops.truediv(pressures.reduce<Py>((sum, key) => ops.add(sum, this.get(key)), 0), 4);
      const healthy = ops.compare("<=", 30, mean) && ops.compare("<=", mean, 35);
      const status = new PyDict(pressures.map((key) => [key, this.get(key)]));
      status.set("healthy_tire_pressure", healthy);
      status.set("car_info", this.longContext ? this.filler("CAR_STATUS_METADATA_EXTENSION") : new PyDict());
      return status;
    });
    this.define("find_nearest_tire_shop", [], () => PyDict.of({ shopLocation: "456 Oakwood Avenue, Rivermist, 83214" }));
  }
}
