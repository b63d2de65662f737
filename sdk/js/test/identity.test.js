// Identity verification on: the calls that bind the device to a user need
// that user's token (401 ERR-AB-SDK-31 without a valid one, nothing
// changed); off, no token is needed (calls.test.js) and one given is
// ignored.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Herald, HeraldError, MemoryStore } from "../dist/index.js";
import { Server, identityToken } from "./harness.js";

let server;
before(async () => {
  server = await Server.start();
});
after(async () => {
  await server?.close();
});

const refused = (e) => e instanceof HeraldError && e.code === "ERR-AB-SDK-31" && e.status === 401 && e.details[0]?.field === "identityToken";

test("with verification on, a missing or wrong token is refused and a valid one is accepted", async () => {
  const app = await server.newApp({ identity: true });
  const errors = [];
  const herald = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store: new MemoryStore(), onError: (e, call) => errors.push(`${call.kind} ${e.code}`) });

  // An anonymous device binds no one: no token needed.
  await herald.registerPushToken("fcm-token-hana", { platform: "web" });
  await assert.rejects(herald.setUserId("hana"), refused);
  await herald.identity(identityToken(app.identitySecret, "someone-else"));
  await assert.rejects(herald.setUserId("hana"), refused);
  assert.equal(await server.user(app, "hana"), null, "a refused call changes nothing");
  assert.deepEqual(errors, ["setUserId ERR-AB-SDK-31", "setUserId ERR-AB-SDK-31"]);
  assert.equal(await herald.pending(), 0, "a refusal is final: not retried");

  await herald.identity(identityToken(app.identitySecret, "hana"));
  assert.equal((await herald.setUserId("hana")).userId, "hana");
  assert.equal((await herald.setConsent({ marketing: true })).marketing, true);
  assert.deepEqual((await herald.setTags({ plan: "gold" })).tags, { plan: "gold" });
  // A new FCM token for a mapped device needs the user's token too.
  await herald.registerPushToken("fcm-token-hana-2", { platform: "web" });

  // The identity token is kept in the store: a new instance on it (the
  // app restarted) sends it without being told again.
  herald.close();
  const store = new MemoryStore();
  const first = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store });
  await first.identity(identityToken(app.identitySecret, "ivan"));
  await first.setUserId("ivan");
  await first.registerPushToken("fcm-token-ivan", { platform: "android" });
  first.close();
  const second = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store });
  await second.setConsent({ marketing: true });
  second.close();

  // A device mapped to a user cannot change its consent or its user's tags
  // without the token.
  const bare = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store });
  await bare.identity(null);
  await assert.rejects(bare.setConsent({ marketing: false }), refused);
  await assert.rejects(bare.setTags({ plan: "free" }), refused);
  bare.close();

  const hana = await server.user(app, "hana");
  assert.deepEqual({ tokenSuffix: hana.devices[0].tokenSuffix, marketing: hana.devices[0].marketing, tags: hana.tags }, { tokenSuffix: "n-hana-2".slice(-8), marketing: true, tags: { plan: "gold" } });
  const ivan = await server.user(app, "ivan");
  assert.deepEqual({ marketing: ivan.devices[0].marketing, tags: ivan.tags }, { marketing: true, tags: {} });
  const { identityRefusals } = await server.mustAdmin(200, "GET", `/admin/v1/apps/${app.appId}`);
  assert.equal(identityRefusals, 4);
});

test("with verification off, a token is not needed and one given is ignored", async () => {
  const app = await server.newApp();
  const herald = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store: new MemoryStore() });
  await herald.identity("not-a-token");
  await herald.registerPushToken("fcm-token-jo", { platform: "web" });
  assert.equal((await herald.setUserId("jo")).userId, "jo");
  assert.equal((await herald.setConsent({ marketing: true })).marketing, true);
  assert.equal((await server.user(app, "jo")).devices.length, 1);
  herald.close();
});
