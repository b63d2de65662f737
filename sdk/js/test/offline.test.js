// Calls made while herald is down: queued in the store, retried with
// backoff, sent in order once it is back, by the same instance or by a
// new one on the same store, and never counted twice.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Herald, MemoryStore } from "../dist/index.js";
import { Server } from "./harness.js";

let server;
before(async () => {
  server = await Server.start();
});
after(async () => {
  await server?.close();
});

/** retries records the waits the SDK asks for, and runs none of them. */
function retries() {
  const waits = [];
  return { waits, schedule: (_fn, ms) => (waits.push(ms), () => {}) };
}

test("offline calls wait in the store, survive a new instance and are sent in order once herald is back", async () => {
  const app = await server.newApp();
  const store = new MemoryStore();
  const r = retries();
  const a = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store, schedule: r.schedule, random: () => 0, retry: { baseMs: 1000, maxMs: 4000 } });

  await server.stop();
  // The registration must reach herald before the user, the user before
  // the tags (409 without one), and a push can only be reported once it
  // was sent to the registered device: order matters.
  const calls = [
    a.registerPushToken("fcm-token-erin", { platform: "web", locale: "ko-KR", timeZone: "Asia/Seoul" }),
    a.setUserId("erin"),
    a.setTags({ plan: "gold" }),
    a.setConsent({ marketing: true }),
  ];
  let settled = 0;
  for (const c of calls) {
    c.then(() => settled++, () => settled++);
  }
  // The first flush joins the first try, under way since the first call;
  // each other one tries again at once. Every try fails on the refused
  // connection, and the wait doubles from baseMs (random 0 picks its
  // lower half), capped at maxMs.
  for (let i = 0; i < 4; i++) {
    await a.flush();
  }
  assert.deepEqual(r.waits, [500, 1000, 2000, 2000]);
  assert.equal(await a.pending(), 4);
  assert.equal(settled, 0);
  const deviceId = await a.deviceId();
  a.close(); // the app is closed offline

  await server.start();
  const b = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store });
  assert.equal(await b.deviceId(), deviceId, "the device id is kept in the store");
  await b.flush();
  assert.equal(await b.pending(), 0);
  assert.equal(settled, 0, "the closed instance's promises never settle");

  const u = await server.user(app, "erin");
  assert.equal(u.devices.length, 1);
  assert.deepEqual(
    { deviceId: u.devices[0].deviceId, locale: u.devices[0].locale, timeZone: u.devices[0].timeZone, marketing: u.devices[0].marketing, tags: u.tags },
    { deviceId, locale: "ko-KR", timeZone: "Asia/Seoul", marketing: true, tags: { plan: "gold" } },
  );
  b.close();
});

test("two live instances on one store (two tabs) keep each other's offline calls", async () => {
  const app = await server.newApp();
  const store = new MemoryStore();
  const r = retries();
  const a = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store, schedule: r.schedule });
  await a.setUserId("kim");
  await a.registerPushToken("fcm-token-kim", { platform: "web" });
  const b = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store, schedule: r.schedule });
  assert.equal(await b.deviceId(), await a.deviceId());

  await server.stop();
  a.setConsent({ marketing: true });
  b.setTags({ plan: "gold" });
  await a.flush();
  await b.flush();
  a.close();
  b.close();

  await server.start();
  const c = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store });
  await c.flush();
  assert.equal(await c.pending(), 0);
  const u = await server.user(app, "kim");
  assert.deepEqual({ marketing: u.devices[0].marketing, tags: u.tags }, { marketing: true, tags: { plan: "gold" } });
  c.close();
});

test("reports made offline resolve once sent, and count once even when sent again", async () => {
  const app = await server.newApp();
  const store = new MemoryStore();
  const r = retries();
  const herald = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store, schedule: r.schedule });
  await herald.setUserId("finn");
  await herald.registerPushToken("fcm-token-finn", { platform: "android" });
  const pushId = await server.pushTo(app, "finn", "fcm-token-finn");

  await server.stop();
  const received = herald.reportReceived(pushId);
  const opened = herald.reportOpened(pushId);
  const openedAgain = herald.reportOpened(pushId);
  await herald.flush(); // joins the first try, which fails
  assert.equal(r.waits.length, 1);
  assert.equal(await herald.pending(), 3);

  await server.start();
  await herald.flush();
  assert.deepEqual(await received, { accepted: 1, ignored: 0 });
  assert.deepEqual(await opened, { accepted: 1, ignored: 0 });
  assert.deepEqual(await openedAgain, { accepted: 0, ignored: 1 });

  // A call whose answer was lost (the app closed as it was sent) is sent
  // again by the next instance: a repeat changes nothing.
  const again = Herald.init({ baseUrl: server.url, apiKey: app.apiKey, store });
  assert.deepEqual(await again.reportReceived(pushId), { accepted: 0, ignored: 1 });
  const p = await server.push(pushId);
  assert.equal(p.counts.received, 1);
  assert.equal(p.counts.opened, 1);
  herald.close();
  again.close();
});

test("a 429 is retried no sooner than its Retry-After", async () => {
  // One SDK request a second per client address, bursts of two.
  const limited = await Server.start(["--sdk-client-rate-limit", "1"]);
  try {
    const app = await limited.newApp();
    const waits = [];
    const herald = Herald.init({
      baseUrl: limited.url, apiKey: app.apiKey, store: new MemoryStore(), retry: { baseMs: 1, maxMs: 1 },
      schedule: (fn, ms) => {
        waits.push(ms);
        const t = setTimeout(fn, ms); // the limiter runs on the real clock
        return () => clearTimeout(t);
      },
    });
    const answers = await Promise.all([
      herald.registerPushToken("fcm-token-gus", { platform: "android" }),
      herald.setUserId("gus"),
      herald.setConsent({ marketing: true }),
      herald.setTags({ plan: "silver" }),
    ]);
    assert.equal(answers[3].tags.plan, "silver");
    assert.ok(waits.length > 0, "some call was refused with 429");
    for (const w of waits) {
      assert.ok(w >= 1000, `waited ${w} ms, below the Retry-After of 1 s`);
    }
    herald.close();
  } finally {
    await limited.close();
  }
});
