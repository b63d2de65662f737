import { backoff, parseRetryAfter, type Retry } from "./backoff.js";
import { errorFromAnswer, HeraldError, QueueFull } from "./errors.js";
import { Queue, type Call, type Kind } from "./queue.js";
import { defaultStore, type Store } from "./store.js";

/** A user's id: a string or a number, as the spec has it. */
export type UserId = string | number;

/** A tag's value; null in setTags deletes the tag. */
export type TagValue = string | number | boolean;

/** Platform is what a push token was issued for. */
export type Platform = "android" | "ios" | "web";

/** Options of Herald.init. */
export interface Options {
  /** Herald's public listener, such as `https://push.example.com`. */
  baseUrl: string;
  /** The app's API key (`hk_…`), the one that ships inside the app. */
  apiKey: string;
  /** The app's version, a semantic version such as `1.6.0` (default `0.0.0`). */
  appVersion?: string;
  /** Where the device id, state and queue are kept (default: localStorage, else memory). */
  store?: Store;
  /** Called with every call Herald refused for good, awaited or not, and from any instance. */
  onError?: (error: HeraldError, call: QueuedCall) => void;
  /** The waits between retries. */
  retry?: Retry;
  /** The most calls waiting in the queue; more are refused with HERALD-SDK-QUEUE-FULL (default 1,000). */
  maxQueue?: number;
  /** How long one request may take before it is abandoned and retried, in ms (default 15,000). */
  timeoutMs?: number;
  /** The fetch to send with (default: the global one). */
  fetch?: typeof fetch;
  /** Random numbers in [0, 1) for the retries' jitter (default Math.random). */
  random?: () => number;
  /** Runs fn after ms and returns what cancels it (default setTimeout). */
  schedule?: (fn: () => void, ms: number) => () => void;
  /** The device's clock, which dates reports sent late (default the system's). */
  now?: () => Date;
}

/** QueuedCall is what onError is told of the refused call. */
export interface QueuedCall {
  kind: Kind;
  body: Record<string, unknown>;
}

/** Device is the answer of registerPushToken and setUserId: the device as stored. */
export interface Device {
  deviceId: string;
  userId: string | null;
  marketing: boolean;
  marketingNight: boolean;
}

/** Consent is the answer of setConsent: the device's consent pair. */
export interface Consent {
  deviceId: string;
  marketing: boolean;
  marketingNight: boolean;
}

/** Tags is the answer of setTags: the user's tags after the update. */
export interface Tags {
  deviceId: string;
  userId: string;
  tags: Record<string, TagValue>;
}

/** Reported is the answer of reportReceived and reportOpened; a repeat is ignored. */
export interface Reported {
  accepted: number;
  ignored: number;
}

/** RegisterOptions are what registerPushToken tells of the device besides its token. */
export interface RegisterOptions {
  /** Default `web`. */
  platform?: Platform;
  /** A BCP 47 tag such as `ko-KR`; default the runtime's language, null to send none. */
  locale?: string | null;
  /** An IANA time zone such as `Asia/Seoul`; default the runtime's, null to send none. */
  timeZone?: string | null;
}

/** ConsentChange is the in-app marketing consent switch; an absent flag is left as it is. */
export interface ConsentChange {
  marketing?: boolean;
  marketingNight?: boolean;
}

/** state is what the SDK remembers of the device, in the store. */
interface State {
  deviceId: string;
  userId: UserId | null;
  identityToken: string | null;
  /** The push token last given to registerPushToken; null before. */
  pushToken: string | null;
}

interface Waiter {
  resolve(body: unknown): void;
  reject(err: HeraldError): void;
}

/** Outcome is what one send of a call came to. */
type Outcome = { body: unknown } | { refused: HeraldError } | { retryAfterMs: number };

/**
 * Herald is the app-side SDK of one app on one device. Every call is put
 * in a queue kept in the store, then sent in order, one at a time: a call
 * that cannot be sent now (no network, 429, 5xx) is retried with backoff,
 * also by a later instance on the same store; a call Herald refuses (4xx)
 * is dropped and rejects with a HeraldError. The promise a call returns
 * resolves with Herald's answer once it is sent, however long that takes.
 */
export class Herald {
  private readonly base: string;
  private readonly store: Store;
  private readonly prefix: string;
  private readonly queue: Queue;
  private readonly waiters = new Map<string, Waiter>();
  private readonly ready: Promise<void>;
  private state: State = { deviceId: "", userId: null, identityToken: null, pushToken: null };
  private stateWrites: Promise<void> = Promise.resolve();
  private draining: Promise<void> | null = null;
  private cancelRetry: (() => void) | null = null;
  private failures = 0;
  private closed = false;
  private seq = 0;
  private readonly online = (): void => {
    void this.flush();
  };

  private constructor(private readonly opts: Options) {
    if (!opts.baseUrl || !opts.apiKey) {
      throw new TypeError("Herald.init needs baseUrl and apiKey");
    }
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.store = opts.store ?? defaultStore();
    this.prefix = `herald:${opts.apiKey}:`;
    this.queue = new Queue(this.store, this.prefix + "queue");
    this.ready = this.load();
    globalThis.addEventListener?.("online", this.online);
  }

  /**
   * init starts the SDK for the app whose API key is given. Calls queued
   * by an earlier instance on the same store are sent at once.
   */
  static init(opts: Options): Herald {
    return new Herald(opts);
  }

  /** deviceId is this device's id, made once and kept in the store. */
  async deviceId(): Promise<string> {
    await this.ready;
    return this.state.deviceId;
  }

  /** pending is how many calls wait in the queue, the one being sent included. */
  async pending(): Promise<number> {
    await this.ready;
    return this.queue.length;
  }

  /**
   * identity sets the identity token of the user (hex HMAC-SHA256 of the
   * userId under the app's identity secret, made by the app's back end),
   * sent from now on with every call that binds the device to its user.
   * Call it before setUserId, and again when the user changes; null
   * forgets it. Needed only while the app's identity verification is on.
   */
  async identity(token: string | null): Promise<void> {
    await this.ready;
    this.state.identityToken = token;
    this.saveState();
  }

  /**
   * setUserId maps the device to the user (null unmaps it and forgets the
   * identity token). Before any registerPushToken on this device there is
   * nothing to map: the user is kept and sent with the registration, and
   * the promise resolves with null.
   */
  async setUserId(userId: UserId | null): Promise<Device | null> {
    await this.ready;
    this.state.userId = userId;
    if (userId === null) {
      this.state.identityToken = null;
    }
    this.saveState();
    if (this.state.pushToken === null) {
      return null;
    }
    const body = userId === null ? { deviceId: this.state.deviceId, userId } : this.withIdentity({ deviceId: this.state.deviceId, userId });
    return this.enqueue<Device>("setUserId", "POST", "/api/sdk/v2/user", body);
  }

  /**
   * registerPushToken registers the device's FCM token, with the user set
   * by setUserId if any, and the device's language and time zone (by
   * default the runtime's), which localized and night-aware pushes use.
   */
  async registerPushToken(token: string, opts: RegisterOptions = {}): Promise<Device> {
    await this.ready;
    this.state.pushToken = token;
    this.saveState();
    const body: Record<string, unknown> = {
      deviceId: this.state.deviceId,
      token,
      platform: opts.platform ?? "web",
      appSourceVersion: this.opts.appVersion ?? "0.0.0",
    };
    if (this.state.userId !== null) {
      body.userId = this.state.userId;
    }
    const locale = opts.locale === undefined ? runtimeLocale() : opts.locale;
    const timeZone = opts.timeZone === undefined ? runtimeTimeZone() : opts.timeZone;
    if (locale) {
      body.locale = locale;
    }
    if (timeZone) {
      body.timeZone = timeZone;
    }
    return this.enqueue<Device>("registerPushToken", "POST", "/api/sdk/v2/push-token", this.withIdentity(body));
  }

  /** setConsent is the in-app marketing consent switch of this device. */
  async setConsent(change: ConsentChange): Promise<Consent> {
    await this.ready;
    const body: Record<string, unknown> = { deviceId: this.state.deviceId };
    if (change.marketing !== undefined) {
      body.marketing = change.marketing;
    }
    if (change.marketingNight !== undefined) {
      body.marketingNight = change.marketingNight;
    }
    return this.enqueue<Consent>("setConsent", "PATCH", "/api/sdk/v2/consent", this.withIdentity(body));
  }

  /**
   * setTags sets tags of the device's user (null deletes one; tags not
   * named are kept). The device must be mapped to a user (setUserId).
   */
  async setTags(tags: Record<string, TagValue | null>): Promise<Tags> {
    await this.ready;
    return this.enqueue<Tags>("setTags", "PATCH", "/api/sdk/v2/tags", this.withIdentity({ deviceId: this.state.deviceId, tags }));
  }

  /**
   * reportReceived reports that the push (the message's `data.pushId`)
   * arrived: dated by Herald when sent at once, by the device's clock when
   * sent later (made offline).
   */
  reportReceived(pushId: string): Promise<Reported> {
    return this.report("reportReceived", pushId, "received");
  }

  /** reportOpened reports that the user opened the push, dated as reportReceived; it counts as received too. */
  reportOpened(pushId: string): Promise<Reported> {
    return this.report("reportOpened", pushId, "opened");
  }

  /**
   * flush sends the queue now instead of after the current retry's wait
   * (the SDK does so itself when a browser comes back online). It
   * resolves once the queue is empty or a send failed again.
   */
  async flush(): Promise<void> {
    await this.ready;
    this.cancelRetry?.();
    this.cancelRetry = null;
    return this.kick();
  }

  /**
   * close stops sending. Calls still queued stay in the store for the next
   * instance, and their promises on this one never settle.
   */
  close(): void {
    this.closed = true;
    this.cancelRetry?.();
    this.cancelRetry = null;
    globalThis.removeEventListener?.("online", this.online);
  }

  private async report(kind: Kind, pushId: string, type: "received" | "opened"): Promise<Reported> {
    const at = (this.opts.now?.() ?? new Date()).toISOString();
    await this.ready;
    return this.enqueue<Reported>(kind, "POST", "/api/sdk/v2/events", { deviceId: this.state.deviceId, events: [{ pushId, type, at }] });
  }

  private withIdentity(body: Record<string, unknown>): Record<string, unknown> {
    return this.state.identityToken === null ? body : { ...body, identityToken: this.state.identityToken };
  }

  private async load(): Promise<void> {
    try {
      const raw = await this.store.get(this.prefix + "state");
      if (raw) {
        const s = JSON.parse(raw) as Partial<State>;
        this.state = {
          deviceId: typeof s.deviceId === "string" ? s.deviceId : "",
          userId: typeof s.userId === "string" || typeof s.userId === "number" ? s.userId : null,
          identityToken: typeof s.identityToken === "string" ? s.identityToken : null,
          pushToken: typeof s.pushToken === "string" ? s.pushToken : null,
        };
      }
      await this.queue.load();
    } catch {
      // An unreadable store: start afresh in memory.
    }
    if (!this.state.deviceId) {
      this.state.deviceId = randomId();
      this.saveState();
    }
    if (this.queue.length) {
      void this.kick();
    }
  }

  private saveState(): void {
    const raw = JSON.stringify(this.state);
    this.stateWrites = this.stateWrites.then(() => this.store.set(this.prefix + "state", raw)).catch(() => {});
  }

  /** enqueue queues a call and returns the promise its answer settles. */
  private enqueue<T>(kind: Kind, method: Call["method"], path: string, body: Record<string, unknown>): Promise<T> {
    if (this.queue.length >= (this.opts.maxQueue ?? 1000)) {
      const err = new HeraldError(QueueFull, 0, "The SDK's queue is full: the call was not queued.", [], path);
      this.tell(err, { kind, body });
      return quiet(Promise.reject(err));
    }
    const call: Call = { id: `${Date.now().toString(36)}-${(this.seq++).toString(36)}-${randomId().slice(0, 8)}`, kind, method, path, body };
    const answer = new Promise<T>((resolve, reject) => {
      this.waiters.set(call.id, { resolve: resolve as (body: unknown) => void, reject });
    });
    this.queue.push(call);
    if (!this.cancelRetry) {
      void this.kick();
    }
    return quiet(answer);
  }

  /** kick starts sending unless a send is under way; it resolves when that pass ends. */
  private kick(): Promise<void> {
    if (!this.draining) {
      this.draining = this.drain().finally(() => {
        this.draining = null;
        // A call queued as the pass ended is sent by a new pass.
        if (this.queue.length && !this.cancelRetry && !this.closed) {
          void this.kick();
        }
      });
    }
    return this.draining;
  }

  private async drain(): Promise<void> {
    await this.ready;
    for (let call = this.queue.head(); call && !this.closed; call = this.queue.head()) {
      await this.queue.saved();
      const out = await this.send(call);
      if ("retryAfterMs" in out) {
        if (this.closed) {
          return;
        }
        this.failures++;
        const wait = backoff(this.failures, (this.opts.random ?? Math.random)(), this.opts.retry, out.retryAfterMs);
        this.cancelRetry = (this.opts.schedule ?? schedule)(() => {
          this.cancelRetry = null;
          void this.kick();
        }, wait);
        return;
      }
      this.failures = 0;
      this.queue.remove(call.id);
      const waiter = this.waiters.get(call.id);
      this.waiters.delete(call.id);
      if ("body" in out) {
        waiter?.resolve(out.body);
      } else {
        waiter?.reject(out.refused);
        this.tell(out.refused, { kind: call.kind, body: call.body });
      }
    }
  }

  /** send sends one call: its answer, Herald's refusal, or how long to wait at least before retrying. */
  private async send(call: Call): Promise<Outcome> {
    const doFetch = this.opts.fetch ?? globalThis.fetch;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.opts.timeoutMs ?? 15000);
    try {
      const res = await doFetch(this.base + call.path, {
        method: call.method,
        headers: { "Content-Type": "application/json", "x-api-key": this.opts.apiKey },
        body: JSON.stringify(this.bodyOf(call)),
        signal: abort.signal,
      });
      const text = await res.text();
      if (res.status === 429 || res.status === 408 || res.status >= 500) {
        return { retryAfterMs: parseRetryAfter(res.headers.get("Retry-After"), Date.now()) };
      }
      const body = parseJSON(text);
      return res.ok ? { body } : { refused: errorFromAnswer(res.status, call.path, body) };
    } catch {
      // No network, a refused connection, a timeout: sent again later.
      return { retryAfterMs: 0 };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * bodyOf is what is sent of a call: a report sent within a minute of
   * being made goes without its time, dated by Herald. Herald ignores a
   * report dated over 5 minutes ahead of it, so a device whose clock runs
   * fast would lose every report otherwise; one sent later (made offline)
   * keeps the device's time.
   */
  private bodyOf(call: Call): Record<string, unknown> {
    const events = call.body.events;
    if (!Array.isArray(events)) {
      return call.body;
    }
    const now = (this.opts.now?.() ?? new Date()).getTime();
    const dated = events.map((e: Record<string, unknown>) => {
      if (now - Date.parse(String(e.at)) >= freshReportMs) {
        return e;
      }
      const { at: _, ...undated } = e;
      return undated;
    });
    return { ...call.body, events: dated };
  }

  private tell(err: HeraldError, call: QueuedCall): void {
    try {
      this.opts.onError?.(err, call);
    } catch {
      // The app's callback failing must not stop the queue.
    }
  }
}

/** freshReportMs is how soon a report is sent for Herald to date it. */
const freshReportMs = 60 * 1000;

/** quiet marks a promise handled, so that a call not awaited rejects nothing unhandled. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => {});
  return p;
}

function parseJSON(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** schedule is setTimeout that does not keep a Node process alive. */
function schedule(fn: () => void, ms: number): () => void {
  const t = setTimeout(fn, ms) as unknown as { unref?: () => void };
  t.unref?.();
  return () => clearTimeout(t as unknown as ReturnType<typeof setTimeout>);
}

function randomId(): string {
  const c = (globalThis as { crypto?: Crypto }).crypto;
  if (c?.randomUUID) {
    return c.randomUUID();
  }
  const bytes = new Uint8Array(16);
  if (c?.getRandomValues) {
    c.getRandomValues(bytes);
  } else {
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = Math.floor(Math.random() * 256);
    }
  }
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function runtimeLocale(): string | undefined {
  const nav = (globalThis as { navigator?: { language?: string } }).navigator;
  return nav?.language || Intl.DateTimeFormat().resolvedOptions().locale || undefined;
}

function runtimeTimeZone(): string | undefined {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
}
