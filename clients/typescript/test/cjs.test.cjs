// The CommonJS build loads with require() and offers what the ES module build does.
const assert = require("node:assert/strict");
const { it } = require("node:test");

it("require('mnemo-client') gives the CommonJS build", async () => {
  const cjs = require("mnemo-client");
  assert.equal(typeof cjs.Mnemo, "function");
  assert.equal(require.resolve("mnemo-client").endsWith("dist/cjs/index.js"), true);
  const esm = await import("mnemo-client");
  assert.deepEqual(Object.keys(cjs).filter((k) => k !== "__esModule").sort(), Object.keys(esm).sort());
  const problem = cjs.toProblem(503, "Service Unavailable", "<html>busy</html>");
  const error = cjs.problemError(problem, cjs.parseRetryAfter("3"));
  assert.ok(error instanceof cjs.MnemoServerError);
  assert.equal(error.retryAfterSeconds, 3);
  assert.equal(error.problem.detail, "<html>busy</html>");
});
