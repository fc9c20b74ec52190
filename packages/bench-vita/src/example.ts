import { parseVitaTasks, toProtocolTask, VitaEnvironment } from "@envace/bench-vita";

// One delivery task in upstream's format (tasks_en.json holds a list of these).
const store = { name: "Noodle House", store_id: "S1", score: 5, tags: ["Quick service"] };
const task = {
  id: "demo",
  domain: "delivery",
  instructions: "Order some mild rice noodles.",
  user_scenario: { user_profile: { instructions: "You want mild rice noodles." } },
  environment: {
    time: "2025-06-21 11:20:00",
    user_id: "U1",
    location: [{ address: "No. 1 Home Road, Kunming", longitude: 102.7, latitude: 25.05 }],
    stores: {
      S1: {
        ...store,
        location: { address: "No. 9 Shop Street, Kunming", longitude: 102.71, latitude: 25.05 },
        products: [{ product_id: "P1", name: "Rice noodles", store_id: "S1", store_name: "Noodle House", price: 25, attributes: "Mild", tags: ["Mild"] }],
      },
    },
  },
};
const tasks = parseVitaTasks(JSON.stringify([task]), "tasks_en.json", "delivery");

const environment = new VitaEnvironment(new Map(tasks.map((t) => [t.id, t])));
await environment.reset(toProtocolTask(tasks[0]!));
const call = async (name: string, args: Record<string, unknown>): Promise<void> => {
  const result = await environment.call({ id: name, name, arguments: args as never });
  console.log(`${name} →`, result.status === "ok" ? result.content : `${result.error.code}: ${result.error.message}`);
};
await call("delivery_store_search_recommand", { keywords: ["noodle"] });
await call("address_to_longitude_latitude", { address: "Home Road" });
await call("create_delivery_order", {
  user_id: "U1",
  store_id: "S1",
  product_ids: ["P1"],
  product_cnts: [2],
  address: "No. 1 Home Road, Kunming",
  dispatch_time: "2025-06-21 11:30:00",
});
await call("pay_delivery_order", { order_id: "OT7a71410abe" });
await call("create_delivery_order", { user_id: "U1", store_id: "S1" });
console.log(await environment.state());
