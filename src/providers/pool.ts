/**
 * An undici Pool whose choice of a connection costs the same whatever the number of requests in flight.
 *
 * undici's Pool picks a connection by scanning its whole client list for one that is not busy, twice per request
 * (once to send, once to know whether the pool is now full), and the busy ones come first: with HTTP/1.1 that is one
 * pass over every in-flight request per request — 10,000 concurrent streams to one provider cost ~10^8 checks to
 * start. Here every client's "busy" flag is mirrored into a set of free clients as undici writes it, so a free
 * connection is found in O(1), and a new one is opened without a scan while the pool is under its bound.
 * Everything else (queueing past the bound, draining, closing, HTTP/2) is undici's own.
 */
import { createRequire } from 'node:module';
import { Pool } from 'undici';

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
type Client = { closed?: boolean; destroyed?: boolean };
type Factory = (origin: unknown, options: unknown) => Client;

export class FlatPool extends Pool {
  constructor(origin: string, options: Pool.Options) {
    super(origin, options);
    const self = this as unknown as Slots;
    const own = Object.getOwnPropertySymbols(this);
    // Pool's own private slots, found by name: the client factory and the options every client is made with.
    const factory = own.find((s) => s.description === 'factory');
    const opts = own.find((s) => s.description === 'options');
    if (!internals || !factory || !opts) return;
    const { kAddClient, kGetDispatcher, kNeedDrain, kClients, kUrl, kConnected, kSize } = internals;
    const max = options.connections ?? Infinity;
    // HTTP/2: a client counts as busy until its session is up, so a burst would open a connection per request. A
    // connecting client takes requests up to its stream count instead (they wait for the session together).
    const streams = options.allowH2 ? (options.pipelining ?? 1) : 0;
    const connecting = new Set<Client>();
    const addClient = (self[kAddClient] as (c: Client) => unknown).bind(this);
    /**
     * Connections that can take a request now, as a stack (the most recently freed on top: a warm connection is
     * reused first, as undici's Pool does), with each one's index for an O(1) removal. Not a Set: a Set that clients
     * keep entering and leaving is iterated over its deleted slots until it is rehashed, a cost per request.
     */
    const free: Client[] = [];
    const at = new Map<Client, number>();
    const freed = (client: Client) => {
      if (at.has(client)) return;
      at.set(client, free.length);
      free.push(client);
    };
    const taken = (client: Client) => {
      const i = at.get(client);
      if (i === undefined) return;
      at.delete(client);
      const last = free.pop()!;
      if (last !== client) {
        free[i] = last;
        at.set(last, i);
      }
    };
    // Every write of a client's busy flag (by the pool when a dispatch fills it, on drain when it frees) moves it in or
    // out of `free`.
    const add = (client: Client) => {
      let needDrain = false;
      Object.defineProperty(client, kNeedDrain, {
        configurable: true,
        get: () => needDrain,
        set: (v: boolean) => {
          needDrain = v;
          if (v) taken(client);
          else freed(client);
        },
      });
      freed(client);
      if (streams > 1) {
        connecting.add(client);
        const up = () => connecting.delete(client);
        (client as unknown as { once(e: string, f: () => void): void }).once('connect', up);
        (client as unknown as { once(e: string, f: () => void): void }).once('connectionError', up);
      }
      return addClient(client);
    };
    self[kAddClient] = add;
    self[kGetDispatcher] = (): Client | undefined => {
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
      if ((self[kClients] as Client[]).length >= max) return undefined;
      const client = (self[factory] as Factory)(self[kUrl], self[opts]);
      add(client);
      return client;
    };
  }
}

/** Whether the O(1) connection choice is active (false only if undici's internals changed shape). */
export const flatPoolActive = internals !== null;
