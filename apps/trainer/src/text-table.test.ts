import { expect, it } from "vitest";
import { renderTable } from "./text-table.js";

it("pads each column to its widest cell, two spaces apart, with no trailing spaces", () => {
  expect(
    renderTable([
      ["a", "bb", "c"],
      ["ddd", "e", ""],
    ]),
  ).toBe("a    bb  c\nddd  e");
  expect(renderTable([])).toBe("");
});
