import { describe, expect, it } from "vitest";
import type { DbRoot } from "./database.js";
import { Toolkit } from "./toolkit.js";

const toolkit = new Toolkit<DbRoot>("ProtoTools", [
  {
    name: "lookup",
    kind: "read",
    description: "Look up an item.",
    params: [
      { name: "__proto__", description: "A parameter whose name is Object's accessor.", schema: { type: "string" } },
      { name: "item_ids", description: "The items.", schema: { type: "array" }, default: null },
    ],
    run: () => null,
  },
]);

describe("Toolkit.specs", () => {
  it("keeps a parameter named `__proto__` as a property, in pydantic's layout", () => {
    const [spec] = toolkit.specs();
    // Written by hand: what pydantic's model_json_schema gives for these two fields.
    expect(JSON.stringify(spec)).toBe(
      '{"type":"function","function":{"name":"lookup","description":"Look up an item.","parameters":{"properties":{' +
        '"__proto__":{"description":"A parameter whose name is Object\'s accessor.","title":"  Proto  ","type":"string"},' +
        '"item_ids":{"description":"The items.","title":"Item Ids","type":"array","default":null}},' +
        '"required":["__proto__"],"title":"parameters","type":"object"}}}',
    );
  });
});
