// Retries against a live `mnemo serve` whose project may add one memory per two seconds: the
// second add is refused with 429 and a Retry-After, which the client honours before it tries
// again. With retries off, the refusal reaches the caller as a typed problem document.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";

import { Mnemo, MnemoRateLimitError } from "../dist/esm/index.js";
import { startMnemo } from "./harness.mjs";

let server;

before(async () => {
  server = await startMnemo({ env: { MNEMO_PROJECT_ADDS_PER_SECOND: "0.5", MNEMO_PROJECT_ADD_BURST: "1" } });
});

after(async () => {
  await server?.stop();
});

it("waits as long as Retry-After says, then the add goes through", async () => {
  const retries = [];
  const mnemo = new Mnemo({
    baseUrl: server.url,
    apiKey: server.apiKey,
    onRetry: (event) => retries.push(event),
  });
  const impatient = new Mnemo({ baseUrl: server.url, apiKey: server.apiKey, retry: { maxRetries: 0 } });

  const first = await mnemo.memories.add({ user_id: "rita", text: "I keep bees" });
  await assert.rejects(impatient.memories.add({ user_id: "rita", text: "I keep goats" }), (error) => {
    assert.ok(error instanceof MnemoRateLimitError);
    assert.equal(error.status, 429);
    assert.equal(error.problem.title, "Too Many Requests");
    assert.ok(error.retryAfterSeconds >= 1, `Retry-After: ${error.retryAfterSeconds}`);
    return true;
  });
  assert.equal(retries.length, 0);

  const second = await mnemo.memories.add({ user_id: "rita", text: "I keep hens" });
  assert.notEqual(second.run_id, first.run_id);
  assert.ok(retries.length >= 1, "the add was refused at least once before it went through");
  for (const event of retries) {
    assert.ok(event.error instanceof MnemoRateLimitError);
    assert.equal(event.delayMs, event.error.retryAfterSeconds * 1000);
  }
  assert.equal((await mnemo.runs.wait(second.run_id)).status, "completed");
});
