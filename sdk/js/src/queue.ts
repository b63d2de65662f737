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
 * the queue as it is when it runs.
 */
export class Queue {
  private calls: Call[] = [];
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly key: string,
  ) {}

  /** load reads the queue an earlier instance left in the store. */
  async load(): Promise<void> {
    const raw = await this.store.get(this.key);
    if (!raw) {
      return;
    }
    try {
      const calls: unknown = JSON.parse(raw);
      if (Array.isArray(calls)) {
        this.calls = calls.filter(isCall).concat(this.calls);
      }
    } catch {
      // A queue that is not JSON was not written by this SDK: dropped.
    }
  }

  get length(): number {
    return this.calls.length;
  }

  /** head is the oldest call, the next to send. */
  head(): Call | undefined {
    return this.calls[0];
  }

  push(call: Call): void {
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
      .then(() => (this.calls.length ? this.store.set(this.key, JSON.stringify(this.calls)) : this.store.remove(this.key)))
      .catch(() => {
        // A full or failing store loses the queue's persistence, not the
        // calls: they are still sent from memory.
      });
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
