export { Herald } from "./herald.js";
export type { ConsentChange, Consent, Device, Options, Platform, QueuedCall, RegisterOptions, Reported, TagValue, Tags, UserId } from "./herald.js";
export { HeraldError, QueueFull, BadAnswer } from "./errors.js";
export type { ErrorDetail } from "./errors.js";
export { MemoryStore, defaultStore } from "./store.js";
export type { Store } from "./store.js";
export { backoff, parseRetryAfter } from "./backoff.js";
export type { Retry } from "./backoff.js";
export type { Kind } from "./queue.js";
