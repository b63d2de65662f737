// Each call of the SDK against a real herald serve, its effect read back
// through the admin API.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Herald, HeraldError, MemoryStore } from "../dist/index.js";
import { Server } from "./harness.js";

let server;
before(async () => {
  server = await Server.start();
});
after(async () => {
  await server?.close();
});

function sdk(app, extra = {}) {
  const errors = [];
  const herald = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, appVersion: "2.1.0", store: new MemoryStore(), onError: (e) => errors.push(e), ...extra });
  return { herald, errors };
}

test("registerPushToken, setUserId, setConsent and setTags reach the user's record", async () => {
  const app = await server.newApp();
  const { herald, errors } = sdk(app);
  const deviceId = await herald.deviceId();

  const registered = await herald.registerPushToken("fcm-token-alice", { platform: "android", locale: "ko-KR", timeZone: "Asia/Seoul" });
  assert.deepEqual(registered, { deviceId, userId: null, marketing: false, marketingNight: false });

  const mapped = await herald.setUserId("alice");
  assert.equal(mapped.userId, "alice");
  const consent = await herald.setConsent({ marketing: true, marketingNight: true });
  assert.deepEqual(consent, { deviceId, marketing: true, marketingNight: true });
  const tags = await herald.setTags({ plan: "gold", visits: 3, beta: true });
  assert.deepEqual(tags, { deviceId, userId: "alice", tags: { plan: "gold", visits: 3, beta: true } });
  await herald.setTags({ beta: null });

  const u = await server.user(app, "alice");
  assert.equal(u.state, "registered");
  assert.deepEqual(u.tags, { plan: "gold", visits: 3 });
  assert.equal(u.devices.length, 1);
  const d = u.devices[0];
  assert.deepEqual(
    { deviceId: d.deviceId, platform: d.platform, appSourceVersion: d.appSourceVersion, tokenSuffix: d.tokenSuffix, locale: d.locale, timeZone: d.timeZone, marketing: d.marketing, marketingNight: d.marketingNight },
    { deviceId, platform: "android", appSourceVersion: "2.1.0", tokenSuffix: "fcm-token-alice".slice(-8), locale: "ko-KR", timeZone: "Asia/Seoul", marketing: true, marketingNight: true },
  );
  assert.equal(await herald.pending(), 0);
  assert.deepEqual(errors, []);
  herald.close();
});

test("setUserId before the first registration is sent with it", async () => {
  const app = await server.newApp();
  const { herald } = sdk(app);
  assert.equal(await herald.setUserId("bob"), null);
  const d = await herald.registerPushToken("fcm-token-bob", { platform: "web", locale: "en-GB", timeZone: "Europe/London" });
  assert.equal(d.userId, "bob");
  const u = await server.user(app, "bob");
  assert.equal(u.devices[0].deviceId, await herald.deviceId());
  assert.equal(u.devices[0].locale, "en-GB");

  // setUserId(null) unmaps the device: bob has no device left.
  assert.equal((await herald.setUserId(null)).userId, null);
  assert.equal((await server.user(app, "bob")).devices.length, 0);
  herald.close();
});

test("a refused call rejects with the spec's code and reaches onError; the queue goes on", async () => {
  const app = await server.newApp();
  const { herald, errors } = sdk(app);
  await herald.registerPushToken("fcm-token-carol", { platform: "ios", locale: null, timeZone: null });

  // Tags need a user mapped to the device: 409 ERR-AB-ACS-44.
  const tags = herald.setTags({ plan: "gold" });
  // marketingNight without marketing: 400 ERR-AB-VAL-00 naming the field.
  const consent = herald.setConsent({ marketing: false, marketingNight: true });
  const mapped = herald.setUserId("carol");

  await assert.rejects(tags, (e) => e instanceof HeraldError && e.code === "ERR-AB-ACS-44" && e.status === 409 && e.path === "/api/sdk/v2/tags");
  await assert.rejects(consent, (e) => {
    assert.ok(e instanceof HeraldError);
    assert.equal(e.code, "ERR-AB-VAL-00");
    assert.equal(e.status, 400);
    assert.ok(e.details.length > 0, "the refusal names what was wrong");
    return true;
  });
  assert.equal((await mapped).userId, "carol");
  assert.deepEqual(errors.map((e) => e.code), ["ERR-AB-ACS-44", "ERR-AB-VAL-00"]);

  const u = await server.user(app, "carol");
  assert.deepEqual(u.tags, {});
  assert.equal(u.devices[0].marketing, false);
  assert.equal(u.devices[0].locale, undefined, "locale null sends none");
  herald.close();
});

test("consent for a device never registered is refused with ERR-AB-NTF-01", async () => {
  const app = await server.newApp();
  const { herald } = sdk(app);
  await assert.rejects(herald.setConsent({ marketing: true }), (e) => e instanceof HeraldError && e.code === "ERR-AB-NTF-01" && e.status === 404);
  herald.close();
});

test("an unknown API key is refused with ERR-AB-KSY-13", async () => {
  const herald = Herald.init({ baseUrl: server.url, apiKey: "hk_" + "0".repeat(32), store: new MemoryStore() });
  await assert.rejects(herald.registerPushToken("t", {}), (e) => e instanceof HeraldError && e.code === "ERR-AB-KSY-13" && e.status === 404);
  herald.close();
});

test("reportReceived and reportOpened count a real push once, however often they are sent", async () => {
  const app = await server.newApp();
  const { herald } = sdk(app);
  await herald.setUserId("dana");
  await herald.registerPushToken("fcm-token-dana", { platform: "android" });
  const pushId = await server.pushTo(app, "dana", "fcm-token-dana");

  assert.deepEqual(await herald.reportReceived(pushId), { accepted: 1, ignored: 0 });
  assert.deepEqual(await herald.reportReceived(pushId), { accepted: 0, ignored: 1 });
  assert.deepEqual(await herald.reportOpened(pushId), { accepted: 1, ignored: 0 });
  assert.deepEqual(await herald.reportOpened(pushId), { accepted: 0, ignored: 1 });
  // Another instance on another store (the app reinstalled) is another
  // device, to which the push was never sent: ignored, never an error.
  const other = sdk(app).herald;
  assert.deepEqual(await other.reportOpened(pushId), { accepted: 0, ignored: 1 });

  const p = await server.push(pushId);
  assert.equal(p.counts.received, 1);
  assert.equal(p.counts.opened, 1);
  herald.close();
  other.close();
});

test("a device whose clock runs 10 minutes fast still has its reports counted", async () => {
  const app = await server.newApp();
  const fast = () => new Date(Date.now() + 10 * 60 * 1000);
  const { herald } = sdk(app, { now: fast });
  await herald.setUserId("lee");
  await herald.registerPushToken("fcm-token-lee", { platform: "android" });
  const pushId = await server.pushTo(app, "lee", "fcm-token-lee");
  // Dated by the device, Herald would ignore it (over 5 minutes ahead).
  assert.deepEqual(await herald.reportOpened(pushId), { accepted: 1, ignored: 0 });
  assert.equal((await server.push(pushId)).counts.opened, 1);
  herald.close();
});
