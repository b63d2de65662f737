import type { Store } from "./store.js";

/** Kind names the SDK method a queued call came from. */
export type Kind = "registerPushToken" | "setUserId" | "setConsent" | "setTags" | "reportReceived" | "reportOpened";

/** Call is one request of the SDK API waiting in the queue. */
export interface Call {
  /** Unique within the store: ties the call to the promise it answers. */
  id: string;
  kind: Kind;
  method: "POST" | "PATCH";
  path: string;
  body: Record<string, unknown>;
}

/**
 * Queue is the calls not yet sent, oldest first, written through to the
 * store under key on every change, so that a new instance on the same store
 * sends what an earlier one could not. Writes are made one after another
 * (an asynchronous store may answer out of order otherwise); each writes
 * the queue as it is when it runs, followed by the calls another instance
 * on the store (another tab) put there, which this one never held: they
 * stay for that instance, or the next, to send.
 */
export class Queue {
  private calls: Call[] = [];
  /** The ids of every call this queue held, sent ones included. */
  private readonly held = new Set<string>();
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly key: string,
  ) {}

  /** load reads the queue an earlier instance left in the store. */
  async load(): Promise<void> {
    const calls = parseCalls(await this.store.get(this.key));
    calls.forEach((c) => this.held.add(c.id));
    this.calls = calls.concat(this.calls);
  }

  get length(): number {
    return this.calls.length;
  }

  /** head is the oldest call, the next to send. */
  head(): Call | undefined {
    return this.calls[0];
  }

  push(call: Call): void {
    this.held.add(call.id);
    this.calls.push(call);
    this.save();
  }

  /** remove drops the call with that id (the head, once answered). */
  remove(id: string): void {
    this.calls = this.calls.filter((c) => c.id !== id);
    this.save();
  }

  /** saved resolves once every change so far is in the store. */
  saved(): Promise<void> {
    return this.writes;
  }

  private save(): void {
    this.writes = this.writes
      .then(() => this.write())
      .catch(() => {
        // A full or failing store loses the queue's persistence, not the
        // calls: they are still sent from memory.
      });
  }

  /**
   * write writes the queue and the calls of other instances. On a store
   * that answers at once (localStorage) the read and the write are one
   * step, which no other tab's write comes between.
   */
  private write(): void | Promise<void> {
    const raw = this.store.get(this.key);
    return raw instanceof Promise ? raw.then((r) => this.writeOver(r)) : this.writeOver(raw);
  }

  private writeOver(raw: string | null | undefined): void | Promise<void> {
    const calls = this.calls.concat(parseCalls(raw).filter((c) => !this.held.has(c.id)));
    return calls.length ? this.store.set(this.key, JSON.stringify(calls)) : this.store.remove(this.key);
  }
}

/** parseCalls reads a stored queue; none when it is not this SDK's JSON. */
function parseCalls(raw: string | null | undefined): Call[] {
  try {
    const calls: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(calls) ? calls.filter(isCall) : [];
  } catch {
    return [];
  }
}

function isCall(v: unknown): v is Call {
  if (typeof v !== "object" || v === null) {
    return false;
  }
  const c = v as Record<string, unknown>;
  return typeof c.id === "string" && typeof c.kind === "string" && (c.method === "POST" || c.method === "PATCH") &&
    typeof c.path === "string" && typeof c.body === "object" && c.body !== null;
}
