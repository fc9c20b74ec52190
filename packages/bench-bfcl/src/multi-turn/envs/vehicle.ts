import { iterate, operator, pyDeepCopy, pyEquals, pyFloat, PyHashDict, type PyObject, truthy } from "@envace/python-text";
import { PythonRandom } from "../../py/random.js";
import { StateEnvironment } from "../environment.js";
import { asDict, asStr } from "../python-access.js";
import { randomFrom } from "./seed.js";

const MAX_FUEL_LEVEL = 50n;
const MIN_FUEL_LEVEL = 0.0;
const MILE_PER_GALLON = 20.0;
const DEFAULT_SEED = 141053n;

/** Public attributes: their names, and the scenario key each is loaded from with its default. */
const ATTRIBUTES: readonly (readonly [string, string, () => PyObject])[] = [
  ["fuelLevel", "fuelLevel", () => 0.0],
  ["batteryVoltage", "batteryVoltage", () => 12.6],
  ["engine_state", "engineState", () => "stopped"],
  ["remainingUnlockedDoors", "remainingUnlockedDoors", () => 4n],
  ["doorStatus", "doorStatus", () => PyHashDict.of({ driver: "unlocked", passenger: "unlocked", rear_left: "unlocked", rear_right: "unlocked" })],
  ["acTemperature", "acTemperature", () => 25.0],
  ["fanSpeed", "fanSpeed", () => 50n],
  ["acMode", "acMode", () => "auto"],
  ["humidityLevel", "humidityLevel", () => 50.0],
  ["headLightStatus", "headLightStatus", () => "off"],
  ["parkingBrakeStatus", "parkingBrakeStatus", () => "released"],
  ["brakePedalStatus", "brakePedalStatus", () => "released"],
  ["distanceToNextVehicle", "distanceToNextVehicle", () => 50.0],
  ["cruiseStatus", "cruiseStatus", () => "inactive"],
  ["destination", "destination", () => "None"],
  ["frontLeftTirePressure", "frontLeftTirePressure", () => 32.0],
  ["frontRightTirePressure", "frontRightTirePressure", () => 32.0],
  ["rearLeftTirePressure", "rearLeftTirePressure", () => 30.0],
  ["rearRightTirePressure", "rearRightTirePressure", () => 30.0],
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
export class VehicleControlAPI extends StateEnvironment {
  readonly className = "VehicleControlAPI";
  private longContext = false;
  private random = new PythonRandom(DEFAULT_SEED);
  private parkingBrakeForce: PyObject = 0.0;
  private slopeAngle: PyObject = 0.0;
  private brakePedalForce: PyObject = 0.0;

  override load(config: PyHashDict, longContext: boolean): void {
    this.random = randomFrom(config.has("random_seed") ? config.get("random_seed")! : DEFAULT_SEED);
    for (const [name, key, fallback] of ATTRIBUTES) this.state.set(name, config.has(key) ? config.get(key)! : pyDeepCopy(fallback()));
    // The unlocked-door count is always recomputed from the doors.
    const doors = asDict(this.get("doorStatus"), "keys");
    this.state.set("remainingUnlockedDoors", BigInt(4 - doors.values().filter((status) => pyEquals(status, "locked")).length));
    this.parkingBrakeForce = config.has("parkingBrakeForce") ? config.get("parkingBrakeForce")! : 0.0;
    this.slopeAngle = config.has("slopeAngle") ? config.get("slopeAngle")! : 0.0;
    this.brakePedalForce = config.has("brakePedalForce") ? config.get("brakePedalForce")! : 0.0;
    this.longContext = longContext;
  }

  override publicState(): Map<string, PyObject> {
    return new Map([...this.state, ["long_context", this.longContext]]);
  }

  private set(key: string, value: PyObject): void {
    this.state.set(key, value);
  }

  constructor(...args: ConstructorParameters<typeof StateEnvironment>) {
    super(...args);
    this.define("startEngine", ["ignitionMode"], (mode) => {
      if (pyEquals(mode, "STOP")) this.set("engine_state", "stopped");
      if (operator.gt(this.get("remainingUnlockedDoors"), 0n)) {
        const unlocked = [...asDict(this.get("doorStatus"), "items")].filter(([, status]) => pyEquals(status, "unlocked")).map(([door]) => asStr(door, "join"));
        return PyHashDict.of({ error: `All doors must be locked before starting the engine. Here are the unlocked doors: ${unlocked.join(", ")}` });
      }
      if (!pyEquals(this.get("brakePedalStatus"), "pressed")) return PyHashDict.of({ error: "Brake pedal needs to be pressed when starting the engine." });
      if (!pyEquals(this.brakePedalForce, 1000.0)) return PyHashDict.of({ error: "Must press the brake fully before starting the engine." });
      if (operator.lt(this.get("fuelLevel"), MIN_FUEL_LEVEL)) return PyHashDict.of({ error: "Fuel tank is empty." });
      if (pyEquals(mode, "START")) this.set("engine_state", "running");
      else return PyHashDict.of({ error: "Invalid ignition mode." });
      return PyHashDict.of({ engineState: this.get("engine_state"), fuelLevel: this.get("fuelLevel"), batteryVoltage: this.get("batteryVoltage") });
    });
    this.define("fillFuelTank", ["fuelAmount"], (amount) => {
      if (operator.lt(amount, 0n)) return PyHashDict.of({ error: "Fuel amount cannot be negative." });
      if (operator.gt(operator.add(this.get("fuelLevel"), amount), MAX_FUEL_LEVEL)) return PyHashDict.of({ error: "Cannot fill gas above the tank capacity." });
      if (operator.lt(operator.add(this.get("fuelLevel"), amount), MIN_FUEL_LEVEL))
        return PyHashDict.of({ error: "Fuel tank is empty. Min fuel level is 0 gallons." });
      this.set("fuelLevel", operator.add(this.get("fuelLevel"), amount));
      return PyHashDict.of({ fuelLevel: this.get("fuelLevel") });
    });
    this.define("lockDoors", ["unlock", "door"], (unlock, doors) => {
      const target = truthy(unlock) ? "unlocked" : "locked";
      const status = this.get("doorStatus");
      for (const door of iterate(doors)) {
        if (pyEquals(operator.getitem(status, door), target)) continue;
        operator.setitem(status, door, target);
        this.set("remainingUnlockedDoors", operator.add(this.get("remainingUnlockedDoors"), truthy(unlock) ? 1n : -1n));
      }
      return PyHashDict.of({ lockStatus: target, remainingUnlockedDoors: this.get("remainingUnlockedDoors") });
    });
    this.define(
      "adjustClimateControl",
      ["temperature", { name: "unit", default: "celsius" }, { name: "fanSpeed", default: 50n }, { name: "mode", default: "auto" }],
      (temperature, unit, fanSpeed, mode) => {
        if (!(operator.le(0n, fanSpeed) && operator.le(fanSpeed, 100n))) return PyHashDict.of({ error: "Fan speed must be between 0 and 100." });
        this.set("acTemperature", temperature);
        if (pyEquals(unit, "fahrenheit")) this.set("acTemperature", operator.truediv(operator.mul(operator.sub(temperature, 32n), 5n), 9n));
        this.set("fanSpeed", fanSpeed);
        this.set("acMode", mode);
        return PyHashDict.of({ currentACTemperature: temperature, climateMode: mode, humidityLevel: this.get("humidityLevel") });
      },
    );
    this.define("get_outside_temperature_from_google", [], () => {
      if (this.longContext) {
        const weather = asDict(this.filler("LONG_WEATHER_EXTENSION"), "items");
        weather.set("outsideTemperature", this.random.uniform(-10.0, 40.0));
        return weather;
      }
      return PyHashDict.of({ outsideTemperature: this.random.uniform(-10.0, 40.0) });
    });
    this.define("get_outside_temperature_from_weather_com", [], () => PyHashDict.of({ error: 404n }));
    this.define("setHeadlights", ["mode"], (mode) => {
      if (!["on", "off", "auto"].some((m) => pyEquals(m, mode))) return PyHashDict.of({ error: "Invalid headlight mode." });
      const status = pyEquals(mode, "on") ? "on" : "off";
      this.set("headLightStatus", status);
      return PyHashDict.of({ headlightStatus: status });
    });
    this.define("displayCarStatus", ["option"], (option) => {
      const status = new PyHashDict();
      if (this.longContext) status.set("metadata", this.filler("CAR_STATUS_METADATA_EXTENSION"));
      const fields: Readonly<Record<string, readonly (readonly [string, () => PyObject])[]>> = {
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
      if (!["engage", "release"].some((m) => pyEquals(m, mode))) return PyHashDict.of({ error: "Invalid mode" });
      const engage = pyEquals(mode, "engage");
      const status = engage ? "engaged" : "released";
      const force = engage ? 500.0 : 0.0;
      this.set("parkingBrakeStatus", status);
      this.parkingBrakeForce = force;
      this.slopeAngle = 10.0;
      const reply = new PyHashDict();
      if (this.longContext) reply.set("parkingBrakeInstruction", this.filler("PARKING_BRAKE_INSTRUCTION"));
      reply.set("parkingBrakeStatus", status);
      reply.set("_parkingBrakeForce", force);
      reply.set("_slopeAngle", 10.0);
      return reply;
    });
    this.define("pressBrakePedal", ["pedalPosition"], (position) => {
      if (!(operator.le(0n, position) && operator.le(position, 1n))) return PyHashDict.of({ error: "Pedal position must be between 0 and 1." });
      if (pyEquals(position, 0n)) {
        this.set("brakePedalStatus", "released");
        this.brakePedalForce = 0.0;
        return PyHashDict.of({ brakePedalStatus: "released", brakePedalForce: 0.0 });
      }
      const force = operator.mul(position, 1000n);
      this.set("brakePedalStatus", "pressed");
      this.brakePedalForce = force;
      return PyHashDict.of({ brakePedalStatus: "pressed", brakePedalForce: pyFloat(force) });
    });
    this.define("releaseBrakePedal", [], () => {
      this.set("brakePedalStatus", "released");
      this.brakePedalForce = 0.0;
      return PyHashDict.of({ brakePedalStatus: "released", brakePedalForce: 0.0 });
    });
    this.define("setCruiseControl", ["speed", "activate", "distanceToNextVehicle"], (speedArg, activate, distanceArg) => {
      const distance = pyFloat(distanceArg);
      const speed = pyFloat(speedArg);
      if (pyEquals(this.get("engine_state"), "stopped")) return PyHashDict.of({ error: "Start the engine before activating the cruise control." });
      if (truthy(activate)) {
        this.set("distanceToNextVehicle", distance);
        if (operator.lt(speed, 0n) || operator.gt(speed, 120n) || !pyEquals(operator.mod(speed, 5n), 0n)) return PyHashDict.of({ error: "Invalid speed" });
        this.set("cruiseStatus", "active");
        return PyHashDict.of({ cruiseStatus: "active", currentSpeed: speed, distanceToNextVehicle: distance });
      }
      this.set("cruiseStatus", "inactive");
      this.set("distanceToNextVehicle", distance);
      return PyHashDict.of({ cruiseStatus: "inactive", currentSpeed: speed, distanceToNextVehicle: distance });
    });
    this.define("get_current_speed", [], () => PyHashDict.of({ currentSpeed: this.random.uniform(0.0, 120.0) }));
    this.define("display_log", ["messages"], (messages) => PyHashDict.of({ log: messages }));
    this.define("estimate_drive_feasibility_by_mileage", ["distance"], (distance) =>
      PyHashDict.of({ canDrive: !operator.lt(operator.mul(this.get("fuelLevel"), MILE_PER_GALLON), distance) }),
    );
    this.define("liter_to_gallon", ["liter"], (liter) => PyHashDict.of({ gallon: operator.mul(liter, 0.264172) }));
    this.define("gallon_to_liter", ["gallon"], (gallon) => PyHashDict.of({ liter: operator.mul(gallon, 3.78541) }));
    this.define("estimate_distance", ["cityA", "cityB"], (cityA, cityB) => {
      const known = DISTANCES.find(([a, b]) => (pyEquals(cityA, a) && pyEquals(cityB, b)) || (pyEquals(cityA, b) && pyEquals(cityB, a)));
      const result = known ? PyHashDict.of({ distance: known[2] }) : PyHashDict.of({ error: "distance not found in database." });
      if (this.longContext) result.set("intermediaryCities", this.filler("INTERMEDIARY_CITIES"));
      return result;
    });
    this.define("get_zipcode_based_on_city", ["city"], (city) =>
      PyHashDict.of({ zipcode: typeof city === "string" && Object.hasOwn(ZIP_CODES, city) ? ZIP_CODES[city]! : "00000" }),
    );
    this.define("set_navigation", ["destination"], (destination) => {
      this.set("destination", destination);
      return PyHashDict.of({ status: operator.add("Navigating to ", destination) });
    });
    this.define("check_tire_pressure", [], () => {
      const pressures = ["frontLeftTirePressure", "frontRightTirePressure", "rearLeftTirePressure", "rearRightTirePressure"];
      const mean = operator.truediv(
        pressures.reduce<PyObject>((sum, key) => operator.add(sum, this.get(key)), 0n),
        4n,
      );
      const healthy = operator.le(30n, mean) && operator.le(mean, 35n);
      const status = new PyHashDict(pressures.map((key) => [key, this.get(key)]));
      status.set("healthy_tire_pressure", healthy);
      status.set("car_info", this.longContext ? this.filler("CAR_STATUS_METADATA_EXTENSION") : new PyHashDict());
      return status;
    });
    this.define("find_nearest_tire_shop", [], () => PyHashDict.of({ shopLocation: "456 Oakwood Avenue, Rivermist, 83214" }));
  }
}
