import { describe, expect, it } from "vitest";
import { HttpError } from "@envace/http";
import { ServerConnection } from "./client.js";

/** A `fetch` that records the URLs asked for and answers with `answer`. */
function fakeFetch(answer: () => Promise<Response>): { fetch: typeof fetch; urls: string[] } {
  const urls: string[] = [];
  const fetch = ((input: string | URL | Request) => {
    urls.push(input instanceof Request ? input.url : input.toString());
    return answer();
  }) as typeof globalThis.fetch;
  return { fetch, urls };
}

const refused = (): Promise<Response> =>
  Promise.reject(new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) }));

describe("ServerConnection.reach", () => {
  it("fails with the URL and the connection error once its retries are spent", async () => {
    const { fetch, urls } = fakeFetch(refused);
    const connection = new ServerConnection({ baseURL: "http://127.0.0.1:9/v1/", fetch, retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 1 } });
    const error = await connection.reach().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).code).toBe("connection");
    expect((error as HttpError).message).toBe("http://127.0.0.1:9/v1/models: connection failed (fetch failed: connect ECONNREFUSED 127.0.0.1:9)");
    expect(urls).toEqual(["http://127.0.0.1:9/v1/models", "http://127.0.0.1:9/v1/models", "http://127.0.0.1:9/v1/models"]);
  });

  it("counts any HTTP answer as reached, an error status too", async () => {
    for (const [body, status] of [
      ['{"data": []}', 200],
      ["not found", 404],
      ["starting", 503],
      ["<html>", 200],
    ] as const) {
      const { fetch, urls } = fakeFetch(() => Promise.resolve(new Response(body, { status })));
      await expect(new ServerConnection({ baseURL: "http://localhost:8000/v1", fetch }).reach()).resolves.toBeUndefined();
      expect(urls).toEqual(["http://localhost:8000/v1/models"]);
    }
  });
});
