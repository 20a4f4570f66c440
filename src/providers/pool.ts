/**
 * An undici Pool whose choice of a connection costs the same whatever the number of requests in flight.
 *
 * undici's Pool picks a connection by scanning its whole client list for one that is not busy, twice per request
 * (once to send, once to know whether the pool is now full), and the busy ones come first: with HTTP/1.1 that is one
 * pass over every in-flight request per request — 10,000 concurrent streams to one provider cost ~10^8 checks to
 * start. Here every client's "busy" flag is mirrored into a stack of free clients as undici writes it, so a free
 * connection is found in O(1), and a new one is opened without a scan while the pool is under its bound.
 * Everything else (queueing past the bound, draining, closing, HTTP/2) is undici's own.
 */
import { createRequire } from 'node:module';
import { Client, Pool } from 'undici';

interface PoolInternals {
  kNeedDrain: symbol;
  kAddClient: symbol;
  kGetDispatcher: symbol;
  kClients: symbol;
  kUrl: symbol;
  kConnected: symbol;
  kSize: symbol;
}

/** undici's symbols for a pool's internals; null if they moved (then FlatPool behaves as a plain Pool). */
const internals = ((): PoolInternals | null => {
  try {
    const req = createRequire(import.meta.url);
    const base = req('undici/lib/dispatcher/pool-base.js') as Partial<PoolInternals>;
    const { kUrl, kConnected, kSize } = req('undici/lib/core/symbols.js') as { kUrl?: symbol; kConnected?: symbol; kSize?: symbol };
    const all = { ...base, kUrl, kConnected, kSize } as Partial<PoolInternals>;
    return all.kNeedDrain && all.kAddClient && all.kGetDispatcher && all.kClients && all.kUrl && all.kConnected && all.kSize ? (all as PoolInternals) : null;
  } catch {
    return null;
  }
})();

/** An undici object's symbol-keyed internals. */
type Slots = Record<symbol, unknown>;

/** A FlatClient's pool-side state: its busy flag, its place in the free stack (-1: not in it), its pool's hook. */
const kBusy = Symbol('flat pool busy');
const kFreeAt = Symbol('flat pool free index');
const kOwner = Symbol('flat pool owner');

/** What a FlatPool does when one of its clients' busy flag is written. */
type BusyHook = (client: FlatClient, busy: boolean) => void;

/**
 * undici's Client, with the pool's "busy" flag (undici's pool-base `kNeedDrain`, written by the pool when a dispatch
 * fills the client and on its drain) as an accessor on the class's prototype: every write tells the client's pool.
 * On the prototype, not on each client: an accessor defined per object gives each client a map of its own, and every
 * property read of undici's client code (dozens per request) then meets as many maps as there are connections.
 */
class FlatClient extends Client {
  [kBusy] = false;
  [kFreeAt] = -1;
  [kOwner]: BusyHook;

  constructor(origin: unknown, options: unknown, owner: BusyHook) {
    super(origin as string, options as Client.Options);
    this[kOwner] = owner;
  }
}
if (internals) {
  Object.defineProperty(FlatClient.prototype, internals.kNeedDrain, {
    configurable: true,
    get(this: FlatClient) {
      return this[kBusy];
    },
    set(this: FlatClient, v: boolean) {
      this[kBusy] = v;
      this[kOwner](this, v);
    },
  });
}

export class FlatPool extends Pool {
  constructor(origin: string, options: Pool.Options) {
    super(origin, options);
    const self = this as unknown as Slots;
    const own = Object.getOwnPropertySymbols(this);
    // Pool's own private slot, found by name: the options every client is made with.
    const opts = own.find((s) => s.description === 'options');
    if (!internals || !opts) return;
    const { kAddClient, kGetDispatcher, kClients, kUrl, kConnected, kSize } = internals;
    const max = options.connections ?? Infinity;
    // HTTP/2: a client counts as busy until its session is up, so a burst would open a connection per request. A
    // connecting client takes requests up to its stream count instead (they wait for the session together).
    const streams = options.allowH2 ? (options.pipelining ?? 1) : 0;
    const connecting = new Set<FlatClient>();
    const addClient = (self[kAddClient] as (c: FlatClient) => unknown).bind(this);
    /**
     * Connections that can take a request now, as a stack (the most recently freed on top: a warm connection is
     * reused first, as undici's Pool does); each client knows its index (O(1) removal, no hashing). Not a Set: a Set
     * that clients keep entering and leaving is iterated over its deleted slots until it is rehashed.
     */
    const free: FlatClient[] = [];
    const freed = (client: FlatClient) => {
      if (client[kFreeAt] !== -1) return;
      client[kFreeAt] = free.length;
      free.push(client);
    };
    const taken = (client: FlatClient) => {
      const i = client[kFreeAt];
      if (i === -1) return;
      client[kFreeAt] = -1;
      const last = free.pop()!;
      if (last !== client) {
        free[i] = last;
        last[kFreeAt] = i;
      }
    };
    // Every write of a client's busy flag (by the pool when a dispatch fills it, on drain when it frees) moves it in or
    // out of `free`.
    const busy: BusyHook = (client, v) => (v ? taken(client) : freed(client));
    const add = (client: FlatClient) => {
      freed(client);
      // undici's Pool drops a client whose connection failed from its list, but the client still takes requests (from
      // the free stack here, and the pool's queued ones on its 'drain') and reconnects for them — then outside the
      // bound and not closed with the pool. It is put back: counted, reused (it reconnects), closed with the pool.
      client.on('connectionError', () =>
        queueMicrotask(() => {
          const list = self[kClients] as FlatClient[];
          if (!client.closed && !client.destroyed && !list.includes(client)) list.push(client);
        }),
      );
      if (streams > 1) {
        connecting.add(client);
        const up = () => connecting.delete(client);
        client.once('connect', up);
        client.once('connectionError', up);
      }
      return addClient(client);
    };
    self[kGetDispatcher] = (): FlatClient | undefined => {
      while (free.length > 0) {
        const c = free[free.length - 1]!;
        if (!c.closed && !c.destroyed) return c;
        taken(c);
      }
      for (const c of connecting) {
        const slots = c as unknown as Slots;
        if (c.closed || c.destroyed || slots[kConnected]) connecting.delete(c);
        else if ((slots[kSize] as number) < streams) return c;
      }
      if ((self[kClients] as FlatClient[]).length >= max) return undefined;
      const client = new FlatClient(self[kUrl], self[opts], busy);
      add(client);
      return client;
    };
  }
}

/** Whether the O(1) connection choice is active (false only if undici's internals changed shape). */
export const flatPoolActive = internals !== null;
