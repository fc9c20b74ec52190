import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnvaceError, InvariantError } from "@envace/errors";
import { RecordError, type Task } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { VitaEnvironment } from "./environment.js";
import { FieldError, Fields } from "./fields.js";
import { loadVitaTasks } from "./task.js";
import { deliveryTask } from "./testing/fixture.js";

async function tasksFile(tasks: unknown): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), "vita-")), "tasks_en.json");
  await writeFile(file, JSON.stringify(tasks));
  return file;
}

async function loadError(tasks: unknown): Promise<RecordError> {
  const error = await loadVitaTasks(await tasksFile(tasks), "delivery").catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RecordError);
  return error as RecordError;
}

describe("loadVitaTasks", () => {
  it("reads a task's fields, rubrics and current time", async () => {
    const [task] = await loadVitaTasks(await tasksFile([deliveryTask()]), "delivery");
    expect(task!.id).toBe("T1");
    expect(task!.time).toBe("2025-06-21 11:20:00");
    expect(task!.criteria?.overall_rubrics).toEqual(["Is polite"]);
    expect(task!.criteria?.expected_states?.[0]?.state_rubrics).toEqual(["Orders rice noodles"]);
  });

  it("names the file, the task id and the field of a value upstream's models reject", async () => {
    const bad = deliveryTask("T7");
    (bad.environment as { stores: { S1: { products: { price: unknown }[] } } }).stores.S1.products[0]!.price = "cheap";
    const file = await tasksFile([deliveryTask(), bad]);
    const error = (await loadVitaTasks(file, "delivery").catch((e: unknown) => e)) as RecordError;
    expect(error.message).toBe(`${file} (record task T7): environment.stores.S1.products.0.price: expected a number`);
  });

  it("reads a rejected field as a FieldError: an EnvaceError naming the path and the reason", () => {
    const error = (() => {
      try {
        Fields.of(null, "environment");
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(FieldError);
    expect(error).toBeInstanceOf(EnvaceError);
    expect(error).toMatchObject({
      code: "vita-field",
      name: "FieldError",
      path: "environment",
      reason: "expected an object",
      message: "environment: expected an object",
    });
  });

  it("names missing task fields and repeated ids", async () => {
    const { instructions: _dropped, ...noInstructions } = deliveryTask("T2");
    expect((await loadError([noInstructions])).message).toMatch(/\(record task T2\): instructions: /);
    expect((await loadError([deliveryTask("T3"), deliveryTask("T3")])).message).toMatch(/\(record task T3\): id: duplicate task id$/);
    expect((await loadError({ tasks: [] })).message).toMatch(/expected a list of tasks$/);
  });
});

describe("VitaEnvironment", () => {
  it("refuses to be used before reset() with an InvariantError", () => {
    const environment = new VitaEnvironment(new Map());
    expect(() => environment.tools()).toThrow(InvariantError);
    expect(() => environment.tools()).toThrow("reset() first");
  });

  it("answers protocol tool calls as upstream: text for checks that fail, typed errors for exceptions", async () => {
    const tasks = await loadVitaTasks(await tasksFile([deliveryTask()]), "delivery");
    const environment = new VitaEnvironment(new Map(tasks.map((t) => [t.id, t])));
    await environment.reset({ id: "T1" } as Task);
    expect(environment.tools().map((spec) => spec.function.name)).toContain("create_delivery_order");
    expect(environment.tools()).toHaveLength(20);

    const info = await environment.call({ id: "c1", name: "get_delivery_product_info", arguments: { product_id: "P1" } });
    // The list of attributes is joined with ", "; the int price prints as a float.
    expect(info).toEqual({
      status: "ok",
      callId: "c1",
      name: "get_delivery_product_info",
      content:
        "StoreProduct(store_name=Noodle House, store_id=S1, product_name=Rice noodles, product_id=P1, attributes=Mild, Large, quantity=0, price=25.0, tags=['Mild'])",
    });
    const wrongUser = await environment.call({ id: "c2", name: "search_delivery_orders", arguments: { user_id: "U2" } });
    expect(wrongUser).toMatchObject({ status: "ok", content: "User ID does not match" });
    const unknown = await environment.call({ id: "c3", name: "refund", arguments: {} });
    expect(unknown).toMatchObject({ status: "error", error: { code: "TOOL_NOT_AVAILABLE", message: "Error: Tool 'refund' not found." } });
    const missing = await environment.call({ id: "c4", name: "pay_delivery_order", arguments: {} });
    expect(missing).toMatchObject({
      status: "error",
      error: { code: "INVALID_PARAMETERS", message: "Error: DeliveryTools.pay_delivery_order() missing 1 required positional argument: 'order_id'" },
    });
    // A float goes through str() and then JSON: the quotes are part of the answer.
    expect(await environment.call({ id: "c5", name: "delivery_distance_to_time", arguments: { distance: 1000 } })).toMatchObject({ content: '"32.0"' });
  });
});
