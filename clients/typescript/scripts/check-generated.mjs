// Fails when src/generated/openapi.ts is not what openapi-typescript makes of openapi.json
// (run `npm run generate`). That openapi.json is the server's current document is checked
// on the Python side (tests/unit/test_openapi_export.py, against scripts/export_openapi.py).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const committed = join(root, "src", "generated", "openapi.ts");
const scratch = mkdtempSync(join(tmpdir(), "mnemo-openapi-"));
try {
  const fresh = join(scratch, "openapi.ts");
  const cli = join(root, "node_modules", "openapi-typescript", "bin", "cli.js");
  execFileSync(
    process.execPath,
    [cli, join(root, "openapi.json"), "--default-non-nullable", "false", "--output", fresh],
    { stdio: "ignore" },
  );
  if (readFileSync(fresh, "utf8") !== readFileSync(committed, "utf8")) {
    console.error("src/generated/openapi.ts is out of date with openapi.json: run `npm run generate`");
    process.exit(1);
  }
  console.log("src/generated/openapi.ts matches openapi.json");
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
