/** Retry is how failed sends are retried. */
export interface Retry {
  /** The first wait, in milliseconds (default 1,000). */
  baseMs?: number;
  /** The longest wait, in milliseconds (default 300,000: 5 minutes). */
  maxMs?: number;
}

export const defaultBaseMs = 1000;
export const defaultMaxMs = 5 * 60 * 1000;

/**
 * backoff is the wait before retry number attempt (1 for the first retry):
 * baseMs doubled at each attempt, capped at maxMs, then jittered to
 * between half of it and all of it (random in [0, 1)) so that devices
 * back online together do not retry in step. A Retry-After from the
 * server (retryAfterMs) is never cut short.
 */
export function backoff(attempt: number, random: number, retry: Retry = {}, retryAfterMs = 0): number {
  const base = retry.baseMs ?? defaultBaseMs;
  const max = retry.maxMs ?? defaultMaxMs;
  const exp = Math.min(max, base * 2 ** Math.min(Math.max(attempt - 1, 0), 52));
  const wait = Math.round(exp / 2 + (random * exp) / 2);
  return Math.max(wait, retryAfterMs);
}

/**
 * parseRetryAfter reads a Retry-After header, whole seconds or an HTTP
 * date, as milliseconds from now; 0 when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number {
  if (value === null || value.trim() === "") {
    return 0;
  }
  const v = value.trim();
  if (/^\d+$/.test(v)) {
    return Number(v) * 1000;
  }
  const at = Date.parse(v);
  return Number.isNaN(at) ? 0 : Math.max(0, at - now);
}
