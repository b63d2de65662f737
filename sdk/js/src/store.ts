/**
 * Store is where the SDK keeps its device id, its state and its queue of
 * calls not yet sent, as strings by key. Its methods may answer at once
 * (localStorage) or through a promise (React Native's AsyncStorage, a
 * file). What it holds must outlive the app's process for calls made
 * offline to survive a restart.
 */
export interface Store {
  get(key: string): string | null | undefined | Promise<string | null | undefined>;
  set(key: string, value: string): void | Promise<void>;
  remove(key: string): void | Promise<void>;
}

/**
 * MemoryStore keeps everything in memory: calls queued offline survive a
 * new Herald instance on the same MemoryStore, not the process. The
 * default where there is no localStorage.
 */
export class MemoryStore implements Store {
  private readonly items = new Map<string, string>();

  get(key: string): string | null {
    return this.items.get(key) ?? null;
  }

  set(key: string, value: string): void {
    this.items.set(key, value);
  }

  remove(key: string): void {
    this.items.delete(key);
  }
}

/**
 * defaultStore is the page's localStorage where there is one (browsers),
 * else a new MemoryStore.
 */
export function defaultStore(): Store {
  try {
    const ls = (globalThis as { localStorage?: Storage }).localStorage;
    if (ls) {
      return {
        get: (key) => ls.getItem(key),
        set: (key, value) => ls.setItem(key, value),
        remove: (key) => ls.removeItem(key),
      };
    }
  } catch {
    // Reading localStorage throws where storage is blocked (some privacy
    // settings, sandboxed frames): fall back to memory.
  }
  return new MemoryStore();
}
