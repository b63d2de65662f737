// The test harness: a real `herald serve` (the binary in HERALD_BIN, built
// by run.js) on 127.0.0.1 with a fresh SQLite data dir, sending to a real
// FCM emulator (`herald fcm-emulator`), and the admin API to create apps
// and read what the SDK's calls did.
import { spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** freePort is a TCP port on 127.0.0.1 that nothing listens on now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function herald() {
  const bin = process.env.HERALD_BIN;
  if (!bin) {
    throw new Error("HERALD_BIN is not set: run the tests with `npm test`, which builds herald");
  }
  return bin;
}

/**
 * run starts a herald subcommand and resolves once a line of its stdout
 * matches ready; it rejects if the process ends first (with its output).
 */
function run(args, env, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(herald(), args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const collect = (chunk) => {
      out += chunk;
      if (ready.test(out)) {
        resolve(child);
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", (chunk) => (out += chunk));
    child.once("exit", (code) => reject(new Error(`herald ${args[0]} exited (${code}) before it was ready:\n${out}`)));
  });
}

/** stop ends a child process this harness started and waits for its exit. */
function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

/**
 * Herald is one running herald serve and its emulator. stop() and
 * start() restart the server on the same port and data dir; close()
 * ends both and removes the data dir. serveArgs are extra flags of serve.
 */
export class Server {
  static async start(serveArgs = []) {
    const s = new Server(serveArgs);
    s.emuPort = await freePort();
    s.port = await freePort();
    s.adminPort = await freePort();
    s.emulator = await run(
      ["fcm-emulator", "--addr", `127.0.0.1:${s.emuPort}`, "--service-account", join(s.dir, "sa.json")],
      {},
      /wrote service-account file/,
    );
    await s.start();
    return s;
  }

  constructor(serveArgs) {
    this.serveArgs = serveArgs;
    this.dir = mkdtempSync(join(tmpdir(), "herald-sdk-js-"));
    this.adminToken = randomBytes(24).toString("base64url");
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  get adminURL() {
    return `http://127.0.0.1:${this.adminPort}`;
  }

  get emulatorURL() {
    return `http://127.0.0.1:${this.emuPort}`;
  }

  async start() {
    this.serve = await run(
      ["serve", "--addr", `127.0.0.1:${this.port}`, "--admin-addr", `127.0.0.1:${this.adminPort}`,
        "--data-dir", join(this.dir, "data"), "--admin-token", this.adminToken,
        "--fcm-endpoint", this.emulatorURL, "--fcm-allow-any-token-uri", ...this.serveArgs],
      { HERALD_DATABASE_URL: "" },
      /herald: public API on /,
    );
  }

  async stop() {
    await stop(this.serve);
  }

  async close() {
    await stop(this.serve);
    await stop(this.emulator);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** admin calls the admin API and returns {status, body}. */
  async admin(method, path, body) {
    const res = await fetch(this.adminURL + path, {
      method,
      headers: { Authorization: `Bearer ${this.adminToken}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  /** mustAdmin is admin that throws unless the status is want. */
  async mustAdmin(want, method, path, body) {
    const r = await this.admin(method, path, body);
    if (r.status !== want) {
      throw new Error(`${method} ${path}: got ${r.status}, want ${want}: ${JSON.stringify(r.body)}`);
    }
    return r.body;
  }

  /**
   * newApp creates an app with FCM credentials on the emulator; with
   * identity, it issues the app's identity secret and turns verification
   * on before any SDK call (so no node has the app cached without it).
   */
  async newApp({ identity = false } = {}) {
    const app = await this.mustAdmin(201, "POST", "/admin/v1/apps", { name: `sdk test ${randomBytes(3).toString("hex")}` });
    await this.mustAdmin(200, "PUT", `/admin/v1/apps/${app.appId}/fcm-credentials`, readFileSync(join(this.dir, "sa.json"), "utf8"));
    if (identity) {
      const { identitySecret } = await this.mustAdmin(200, "POST", `/admin/v1/apps/${app.appId}/identity-secret`);
      await this.mustAdmin(200, "PATCH", `/admin/v1/apps/${app.appId}`, { identityVerification: true });
      app.identitySecret = identitySecret;
    }
    return app;
  }

  /** user is the admin view of a user; null when there is none. */
  async user(app, userId) {
    const r = await this.admin("GET", `/admin/v1/apps/${app.appId}/users/${encodeURIComponent(userId)}`);
    if (r.status === 404) {
      return null;
    }
    if (r.status !== 200) {
      throw new Error(`get user ${userId}: ${r.status}`);
    }
    return r.body;
  }

  /** push is a push's admin view. */
  push(pushId) {
    return this.mustAdmin(200, "GET", `/admin/v1/pushes/${pushId}`);
  }

  /**
   * pushTo sends a push to the user through the Server API and returns
   * its id as the device gets it: the data.pushId of the message the
   * emulator received for token, once the push is done.
   */
  async pushTo(app, userId, token) {
    const res = await fetch(this.url + "/api/push/v2/users", {
      method: "POST",
      headers: { "Content-Type": "application/json", "x-api-key": app.apiKey, "x-secret-key": app.secretKey },
      body: JSON.stringify({ userIds: [userId], title: "Hello", content: "From the SDK test" }),
    });
    if (res.status !== 200) {
      throw new Error(`push: ${res.status} ${await res.text()}`);
    }
    const pushId = await poll(`a message for ${token}`, async () => {
      const r = await fetch(`${this.emulatorURL}/emulator/messages?token=${encodeURIComponent(token)}`);
      const { messages } = await r.json();
      return messages?.[0]?.message?.data?.pushId;
    });
    await poll(`push ${pushId} done`, async () => (await this.push(pushId)).status === "done");
    return pushId;
  }
}

/** poll calls f until it returns something truthy, at most about 10 s. */
export async function poll(what, f) {
  for (let i = 0; i < 1000; i++) {
    const v = await f();
    if (v) {
      return v;
    }
    await new Promise((r) => setTimeout(r, 10)); // polling interval, not a wait for work
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** identityToken is a user's token as the app's back end makes it (docs/operations.md). */
export function identityToken(secret, userId) {
  return createHmac("sha256", secret).update(String(userId), "utf8").digest("hex");
}
