// The retries' waits as a pure function of the attempt, the jitter and a
// server's Retry-After.
import assert from "node:assert/strict";
import { test } from "node:test";

import { backoff, parseRetryAfter } from "../dist/index.js";

test("backoff doubles from baseMs, is capped at maxMs and jittered within its upper half", () => {
  const retry = { baseMs: 100, maxMs: 1000 };
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoff(n, 0, retry)), [50, 100, 200, 400, 500, 500]);
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => backoff(n, 0.999999, retry)), [100, 200, 400, 800, 1000, 1000]);
  assert.equal(backoff(1e6, 0.5, retry), 750, "a huge attempt stays at the cap");
  assert.equal(backoff(1, 0), 500, "the default base is 1 s");
  assert.equal(backoff(50, 0.999999), 300000, "the default cap is 5 minutes");
});

test("a Retry-After is never cut short, even past the cap", () => {
  assert.equal(backoff(1, 0, { baseMs: 100, maxMs: 1000 }, 3000), 3000);
  assert.equal(backoff(4, 0.999999, { baseMs: 100, maxMs: 1000 }, 10), 800);
});

test("parseRetryAfter reads seconds and HTTP dates", () => {
  const now = Date.parse("2030-01-04T10:00:00Z");
  assert.equal(parseRetryAfter("5", now), 5000);
  assert.equal(parseRetryAfter(" 0 ", now), 0);
  assert.equal(parseRetryAfter("Fri, 04 Jan 2030 10:00:30 GMT", now), 30000);
  assert.equal(parseRetryAfter("Fri, 04 Jan 2030 09:00:00 GMT", now), 0, "a date past is now");
  assert.equal(parseRetryAfter(null, now), 0);
  assert.equal(parseRetryAfter("soon", now), 0);
  assert.equal(parseRetryAfter("-3", now), 0);
});
