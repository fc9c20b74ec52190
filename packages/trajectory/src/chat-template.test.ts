import type { Message } from "@envace/protocol";
import { describe, expect, it } from "vitest";
import { ChatTemplate } from "./chat-template.js";

describe("ChatTemplate messages from clients", () => {
  // Lists each message's fields as the template sees them, then asks for two names no message has.
  const template = new ChatTemplate(
    "{%- for m in messages %}[{%- for k, v in m.items() %}{{ k }}={{ v }};{%- endfor %}]{%- endfor %}" +
      "{{ messages[0].toString is defined }},{{ messages[0].constructor is defined }}",
  );

  it("keep a `__proto__` or `constructor` field as a field", () => {
    // JSON.parse makes `__proto__` an own field, as a request body parsed from the wire does.
    const message = JSON.parse('{"role": "user", "content": "hi", "__proto__": "p", "constructor": "c"}') as Message;
    expect(template.render([message])).toBe("[role=user;content=hi;__proto__=p;constructor=c;]false,true");
  });

  it("do not take an object under `__proto__` as the message's prototype", () => {
    const message = JSON.parse('{"content": "hi", "__proto__": {"role": "system"}}') as Message;
    const text = new ChatTemplate("{{ messages[0].role is defined }}|{{ messages[0]['__proto__'].role }}").render([message]);
    expect(text).toBe("false|system");
  });

  it("show no inherited name on a message that lacks the field", () => {
    expect(template.render([{ role: "user", content: "hi" }])).toBe("[role=user;content=hi;]false,false");
  });
});
