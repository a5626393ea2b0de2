// `npm test`: starts one `mnemo serve` for every test file (a start takes seconds: embedded
// Postgres is made fresh), runs them with node's test runner, and stops the server.
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { startMnemo } from "../test/harness.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const files = readdirSync(join(root, "test"))
  .filter((name) => /\.test\.(mjs|cjs)$/.test(name))
  .sort()
  .map((name) => join("test", name));

const server = await startMnemo();
let code = 1;
try {
  const child = spawn(process.execPath, ["--test", "--test-concurrency=1", ...files, ...process.argv.slice(2)], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, MNEMO_TEST_URL: server.url, MNEMO_TEST_API_KEY: server.apiKey, MNEMO_TEST_DATA_DIR: server.dataDir },
  });
  code = await new Promise((resolve) => child.once("exit", (status) => resolve(status ?? 1)));
} finally {
  await server.stop();
}
process.exit(code);
