// Starts a real `mnemo serve` for the tests: loopback, a free port, a fresh data dir (its
// embedded Postgres included), the hash embedder and the offline LLM fallback, so nothing
// leaves the machine. The key is the one serve writes with `--print-key-to` (serve shows a
// new key only on a terminal, and its stderr here is a pipe).
//
// The mnemo command: $MNEMO_BIN, else the repository's .venv/bin/mnemo.
import { spawn, execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export function mnemoBin() {
  const bin = process.env.MNEMO_BIN ?? join(repo, ".venv", "bin", "mnemo");
  if (!existsSync(bin)) {
    throw new Error(`no mnemo command at ${bin}: run \`make install\` at the repository root or set MNEMO_BIN`);
  }
  return bin;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function serverEnv(extra) {
  const env = { ...process.env };
  // The server under test must not pick up the caller's deployment.
  // mnemo refuses unknown MNEMO_* variables, MNEMO_BIN and MNEMO_TEST_* included.
  for (const name of Object.keys(env)) if (name.startsWith("MNEMO_")) delete env[name];
  return { ...env, MNEMO_EMBEDDING_PROVIDER: "hash", MNEMO_WORKER_PROCESSES: "0", ...extra };
}

/**
 * A running `mnemo serve`: `{ url, apiKey, dataDir, createKey(project), stop() }`.
 * `env` adds MNEMO_* settings (e.g. rate limits).
 */
export async function startMnemo({ env = {}, startSeconds = 120 } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), "mnemo-ts-"));
  chmodSync(scratch, 0o755); // the embedded Postgres runs as another user when we are root
  const dataDir = join(scratch, "data");
  const keyFile = join(scratch, "key");
  const port = await freePort();
  const childEnv = serverEnv(env);
  const child = spawn(
    mnemoBin(),
    [
      "serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", dataDir,
      "--print-key-to", keyFile,
    ],
    { env: childEnv, stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mnemo serve did not start in ${startSeconds} s:\n${log}`)), startSeconds * 1000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      log += chunk;
      if (/Application startup complete/.test(log) && existsSync(keyFile)) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${port}`, apiKey: readFileSync(keyFile, "utf8").trim() });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`mnemo serve exited with ${code} before it was ready:\n${log}`));
    });
  });
  let started;
  try {
    started = await ready;
  } catch (error) {
    child.kill("SIGKILL");
    rmSync(scratch, { recursive: true, force: true });
    throw error;
  }
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    ...started,
    dataDir,
    log: () => log,
    /** A key of `project` made by `mnemo keys create`, as an operator would. */
    async createKey(project) {
      const { stdout } = await promisify(execFile)(
        mnemoBin(),
        ["keys", "create", "--project", project, "--name", "ts-test", "--data-dir", dataDir],
        { env: childEnv },
      );
      return stdout.trim();
    },
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * The server a test file uses: the one `scripts/test.mjs` started for the whole run (its
 * address and key in MNEMO_TEST_URL / MNEMO_TEST_API_KEY), else one of its own. Each test
 * makes its own users, projects and groups, so files can share a server.
 */
export async function sharedMnemo() {
  const url = process.env.MNEMO_TEST_URL;
  const apiKey = process.env.MNEMO_TEST_API_KEY;
  const dataDir = process.env.MNEMO_TEST_DATA_DIR;
  if (!url || !apiKey || !dataDir) return startMnemo();
  return {
    url,
    apiKey,
    dataDir,
    log: () => "",
    async createKey(project) {
      const { stdout } = await promisify(execFile)(
        mnemoBin(),
        ["keys", "create", "--project", project, "--name", "ts-test", "--data-dir", dataDir],
        { env: serverEnv({}) },
      );
      return stdout.trim();
    },
    async stop() {}, // the runner's
  };
}
