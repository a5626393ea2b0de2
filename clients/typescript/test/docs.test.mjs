// The TypeScript snippet of docs/guides/agents-and-mcp.md, run as it is written (it is plain
// JavaScript too) against the live server, with MNEMO_URL and MNEMO_API_KEY set.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { sharedMnemo } from "./harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const page = join(here, "..", "..", "..", "docs", "guides", "agents-and-mcp.md");
let server;

before(async () => {
  server = await sharedMnemo();
});

after(async () => {
  await server?.stop();
});

it("the guide's snippet remembers and recalls", async () => {
  const blocks = [...readFileSync(page, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.equal(blocks.length, 1);
  // Inside the package, so that `import ... from "mnemo-client"` resolves to this build.
  const script = join(here, `.docs-snippet-${process.pid}.mjs`);
  writeFileSync(script, blocks[0]);
  try {
    const env = { ...process.env, MNEMO_URL: server.url, MNEMO_API_KEY: server.apiKey };
    const { stdout } = await promisify(execFile)(process.execPath, [script], { env });
    assert.match(stdout, /Lisbon/);
  } finally {
    rmSync(script, { force: true });
  }
});
