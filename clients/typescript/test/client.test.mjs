// The client against a live `mnemo serve` (see harness.mjs): every call here crosses real HTTP
// to the real gateway, pipeline and embedded Postgres.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import {
  Mnemo,
  MnemoAuthenticationError,
  MnemoConnectionError,
  MnemoNotFoundError,
  MnemoProblemError,
  MnemoValidationError,
} from "../dist/esm/index.js";
import { sharedMnemo } from "./harness.mjs";

let server;
let mnemo;

before(async () => {
  server = await sharedMnemo();
  mnemo = new Mnemo({ baseUrl: server.url, apiKey: server.apiKey });
});

after(async () => {
  await server?.stop();
});

const newUser = () => `user-${randomUUID().slice(0, 8)}`;

async function remember(user, text) {
  const added = await mnemo.memories.add({ user_id: user, text });
  const run = await mnemo.runs.wait(added.run_id);
  assert.equal(run.status, "completed", `run ${run.run_id}: ${run.error}`);
  return run;
}

describe("memories", () => {
  it("adds, waits for the run, then searches, gets, lists and deletes what it stored", async () => {
    const user = newUser();
    const run = await remember(user, "I love hiking in the Swiss Alps every summer");
    const created = run.committed_operations?.created ?? [];
    assert.ok(created.length >= 1, "the run created a memory");

    const found = await mnemo.memories.search({ user_id: user, query: "hiking in the Alps" });
    assert.ok(found.memories.length >= 1);
    const best = found.memories[0];
    assert.match(best.content, /hiking/i);
    assert.equal(typeof best.score, "number");
    assert.equal(best.user_id, user);

    const got = await mnemo.memories.get(best.id, { user_id: user });
    assert.equal(got.id, best.id);
    assert.equal(got.content, best.content);

    const listed = await mnemo.memories.list({ user_id: user });
    assert.deepEqual(listed.memories.map((m) => m.id).sort(), created.map((c) => c.memory_id).sort());

    await mnemo.memories.delete(best.id, { user_id: user });
    await assert.rejects(mnemo.memories.get(best.id, { user_id: user }), (error) => {
      assert.ok(error instanceof MnemoNotFoundError);
      assert.equal(error.status, 404);
      assert.equal(error.problem.status, 404);
      assert.equal(error.problem.title, "Not Found");
      return true;
    });
  });

  it("keeps one user's memories from another's", async () => {
    const owner = newUser();
    const run = await remember(owner, "My locker code is 4711");
    const memoryId = run.committed_operations.created[0].memory_id;
    // Another user of the project: 404, as for a missing memory, so nothing leaks.
    const other = newUser();
    await remember(other, "I like tea");
    await assert.rejects(mnemo.memories.get(memoryId, { user_id: other }), MnemoNotFoundError);
    await assert.rejects(mnemo.memories.delete(memoryId, { user_id: other }), MnemoNotFoundError);
    // A user the project has never seen: Engram's 422, naming user_id.
    await assert.rejects(mnemo.memories.get(memoryId, { user_id: newUser() }), (error) => {
      assert.ok(error instanceof MnemoValidationError);
      assert.equal(error.status, 422);
      assert.equal(error.problem.errors[0].location, "query.user_id");
      return true;
    });
    const found = await mnemo.memories.search({ user_id: other, query: "locker code" });
    assert.ok(!found.memories.some((m) => m.id === memoryId));
    assert.equal((await mnemo.memories.get(memoryId, { user_id: owner })).id, memoryId);
  });

  it("takes chat messages, and stores an add once however often it is sent with one key", async () => {
    const user = newUser();
    const key = randomUUID();
    const body = { user_id: user, messages: [{ role: "user", content: "I work as a nurse in Porto" }], idempotencyKey: key };
    const first = await mnemo.memories.add(body);
    const again = await mnemo.memories.add(body);
    assert.equal(again.run_id, first.run_id);
    const run = await mnemo.runs.wait(first.run_id);
    assert.equal(run.status, "completed");
    const all = [];
    for await (const memory of mnemo.memories.listAll({ user_id: user, limit: 1 })) all.push(memory.id);
    assert.deepEqual(all.sort(), run.committed_operations.created.map((c) => c.memory_id).sort());
  });

  it("pages through every memory with listAll", async () => {
    const user = newUser();
    const runs = [];
    for (const text of ["I own a red bicycle", "My sister lives in Oslo", "I am allergic to peanuts"]) {
      runs.push(await remember(user, text));
    }
    const expected = runs.flatMap((r) => r.committed_operations.created.map((c) => c.memory_id)).sort();
    const seen = [];
    for await (const memory of mnemo.memories.listAll({ user_id: user, limit: 1 })) seen.push(memory.id);
    assert.deepEqual(seen.sort(), expected);
  });
});

describe("errors are typed problem documents", () => {
  it("names the offending field of a refused request, and stores nothing", async () => {
    const user = newUser();
    await assert.rejects(mnemo.memories.search({ user_id: user, query: "" }), (error) => {
      assert.ok(error instanceof MnemoValidationError);
      assert.ok(error instanceof MnemoProblemError);
      assert.equal(error.problem.type, "about:blank");
      assert.deepEqual(error.errors.map((e) => e.location), ["body.query"]);
      return true;
    });
    await assert.rejects(mnemo.memories.add({ user_id: user, text: [] }), (error) => {
      assert.ok(error instanceof MnemoValidationError);
      assert.ok(error.errors.some((e) => e.location.startsWith("body.input.string.content")), JSON.stringify(error.errors));
      return true;
    });
    assert.equal((await mnemo.memories.list({ user_id: user })).total, 0);
  });

  it("reports an unknown key as 401 and a run of another project as 404", async () => {
    const stranger = new Mnemo({ baseUrl: server.url, apiKey: "mnemo_not-a-key" });
    await assert.rejects(stranger.groups.list(), (error) => {
      assert.ok(error instanceof MnemoAuthenticationError);
      assert.equal(error.status, 401);
      return true;
    });
    const added = await mnemo.memories.add({ user_id: newUser(), text: "I play the cello" });
    const otherProject = new Mnemo({ baseUrl: server.url, apiKey: await server.createKey(`p-${randomUUID().slice(0, 8)}`) });
    await assert.rejects(otherProject.runs.get(added.run_id), MnemoNotFoundError);
    assert.equal((await mnemo.runs.wait(added.run_id)).status, "completed");
  });

  it("gives up on an unreachable server after its retries, saying where it tried", async () => {
    const retries = [];
    const gone = new Mnemo({
      baseUrl: "http://127.0.0.1:9", // the discard port: nothing listens there
      apiKey: "x",
      retry: { maxRetries: 2, baseDelayMs: 1 },
      onRetry: (event) => retries.push(event.attempt),
    });
    await assert.rejects(gone.groups.list(), (error) => {
      assert.ok(error instanceof MnemoConnectionError);
      assert.match(error.message, /127\.0\.0\.1:9\/v1\/groups/);
      return true;
    });
    assert.deepEqual(retries, [1, 2]);
  });
});

describe("groups and runs", () => {
  it("lists, creates and reads groups", async () => {
    const names = (await mnemo.groups.list()).map((g) => g.name);
    assert.ok(names.includes("default"));
    const name = `g${randomUUID().slice(0, 8)}`;
    const created = await mnemo.groups.put(name, { template: "default" });
    assert.equal(created.name, name);
    const read = await mnemo.groups.get(name);
    assert.deepEqual(read, created);
    assert.ok(read.topics.length >= 1);
    assert.ok((await mnemo.groups.list()).some((g) => g.name === name));
  });

  it("gets a run by id", async () => {
    const added = await mnemo.memories.add({ user_id: newUser(), text: "I drink my coffee black" });
    const run = await mnemo.runs.get(added.run_id);
    assert.equal(run.run_id, added.run_id);
    assert.ok(["running", "in_buffer", "completed"].includes(run.status));
    assert.equal((await mnemo.runs.wait(added.run_id)).status, "completed");
  });
});
