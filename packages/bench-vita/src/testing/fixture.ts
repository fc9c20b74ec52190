/** A small delivery task in upstream's format: one store with one product, the user's address, one day's weather. */
export function deliveryTask(id = "T1"): Record<string, unknown> {
  return {
    id,
    domain: "delivery",
    message_history: null,
    environment: {
      time: "2025-06-21 11:20:00",
      user_id: "U1",
      orders: {},
      weather: [{ city: "Kunming City", category: "rainy", datetime: "2025-06-21", temperature: [17, 25], humidity: 84 }],
      location: [{ address: "No. 1 Home Road, Kunming", longitude: 102.7, latitude: 25.05 }],
      user_historical_behaviors: { occupation: "Doctor" },
      stores: {
        S1: {
          name: "Noodle House",
          store_id: "S1",
          score: 5,
          location: { address: "No. 9 Shop Street, Kunming", longitude: 102.71, latitude: 25.05 },
          tags: ["Quick service"],
          products: [{ product_id: "P1", name: "Rice noodles", store_id: "S1", store_name: "Noodle House", price: 25, attributes: ["Mild", "Large"], tags: ["Mild"] }],
        },
      },
    },
    user_scenario: { user_profile: { "user id": "U1", instructions: "Order noodles." } },
    instructions: "Order some mild rice noodles.",
    evaluation_criteria: { expected_states: [{ required_orders: [], optional_orders: [], state_rubrics: ["Orders rice noodles"] }], overall_rubrics: ["Is polite"] },
  };
}
