import { describe, expect, it } from "vitest";
import { chinaHoliday } from "./holidays.js";
import { addMinutes, checkTimeFormat, compare, joinStrings, radians, strptime } from "./python.js";

describe("CPython's strptime, as VitaBench's time checks use it", () => {
  it("accepts unpadded fields and runs of whitespace, and rejects impossible dates and trailing text", () => {
    expect(strptime("2025-6-1 9:0:0", "%Y-%m-%d %H:%M:%S")).toEqual({ year: 2025, month: 6, day: 1, hour: 9, minute: 0, second: 0 });
    expect(checkTimeFormat("2025-06-01  09:00:00")).toBe(true);
    expect(checkTimeFormat("2025-02-29 10:00:00")).toBe(false);
    expect(checkTimeFormat("2024-02-29 10:00:00")).toBe(true);
    expect(checkTimeFormat("2025-11-07T10:00:00")).toBe(false);
    expect(checkTimeFormat("20230622", "%Y-%m-%d")).toBe(false);
    expect(checkTimeFormat("2024-05-12 16:19:36", "%Y-%m-%d")).toBe(false);
  });

  it("raises TypeError for a non-string, as strptime does", () => {
    expect(() => checkTimeFormat(20250101n)).toThrow("strptime() argument 1 must be str, not int");
  });

  it("adds minutes across midnight", () => {
    expect(addMinutes(strptime("2025-12-31 23:50:00", "%Y-%m-%d %H:%M:%S")!, 31)).toBe("2026-01-01 00:21:00");
  });
});

describe("Python operators on the agent's raw arguments", () => {
  it("compares numbers, and names the types otherwise", () => {
    expect(compare(2n, ">", 0n)).toBe(true);
    expect(compare(0.5, ">=", 0n)).toBe(true);
    expect(() => compare("2", ">", 0n)).toThrow("'>' not supported between instances of 'str' and 'int'");
    expect(() => compare(null, ">=", 0n)).toThrow("'>=' not supported between instances of 'NoneType' and 'int'");
  });

  it("joins strings and iterates a string's characters", () => {
    expect(joinStrings(["Fashion", "Color"])).toBe("FashionColor");
    expect(joinStrings("abc")).toBe("abc");
    expect(() => joinStrings(["a", 1n])).toThrow("sequence item 1: expected str instance, int found");
    expect(() => radians("120.5")).toThrow("must be real number, not str");
  });
});

describe("China's holidays, English names", () => {
  it("names statutory days, observed days and swapped days (values seen in upstream's labels)", () => {
    expect(chinaHoliday(2024, 2, 10)).toBe("Chinese New Year (Spring Festival)");
    expect(chinaHoliday(2024, 2, 13)).toBe("Chinese New Year (Spring Festival) (observed)");
    expect(chinaHoliday(2024, 9, 16)).toBe("Day off (substituted from 09/14/2024)");
    expect(chinaHoliday(2025, 4, 4)).toBe("Tomb-Sweeping Day");
    expect(chinaHoliday(2025, 5, 2)).toBe("Labor Day");
    expect(chinaHoliday(2023, 6, 22)).toBe("Dragon Boat Festival");
    expect(chinaHoliday(2024, 10, 3)).toBe("National Day");
    expect(chinaHoliday(2024, 11, 28)).toBeUndefined();
  });
});
