// npm test: builds herald once (unless HERALD_BIN names one) and runs the
// tests, every file against a herald serve of its own.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
let built = "";
if (!process.env.HERALD_BIN) {
  built = mkdtempSync(join(tmpdir(), "herald-sdk-bin-"));
  const bin = join(built, "herald");
  console.log(`building herald into ${bin} (set HERALD_BIN to use another)`);
  execFileSync("go", ["build", "-o", bin, "./cmd/herald"], { cwd: resolve(here, "../../.."), stdio: "inherit" });
  process.env.HERALD_BIN = bin;
}
const files = readdirSync(here).filter((f) => f.endsWith(".test.js")).map((f) => join(here, f));
const r = spawnSync(process.execPath, ["--test", ...files], { stdio: "inherit", env: process.env });
if (built) {
  rmSync(built, { recursive: true, force: true });
}
process.exit(r.status ?? 1);
