/**
 * Spend control across instances over Redis (docs/spend.md, "Across instances"). Each instance holds, per scope, a
 * lease: nano-dollars reserved in Redis ahead of need (`granted`), from which its requests reserve locally — no Redis
 * round trip while the lease has room. A request the lease cannot cover goes to Redis: one atomic script gives back
 * the unused lease, pushes settled spend, checks every scope of the request and grants the amount plus a slack that
 * shrinks to nothing as the budget nears its end (src/core/spend.ts `leaseSlack`). A timer pushes settled spend and
 * returns idle leases; a heartbeat (renewed by this instance only) keeps its holds alive — when the instance dies,
 * they stop counting after the heartbeat TTL.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Backoffs } from '../../core/backoff.js';
import { SEED_BACKOFF_MS, SeedUnavailableError, type ReserveResult, type ScopeSpec } from './types.js';
import { addSettled, compact, dropConfirmed, markStored, unconfirmed } from './seed-epochs.js';
import { LeaseHold, ownSeed, pushOf, reseedLease, type Lease, type Push, type Refusal } from './redis-lease.js';
import { RedisCharges } from './redis-charges.js';
import { ACK_TTL_MS, acquireArgs, defineScripts, parseAcquire, type AcquireAnswer, type AcquireScope, type RedisWithScripts } from './redis-lua.js';

/** Defaults (docs/spend.md): heartbeat TTL, sync period, idle time before a lease is returned, lease cap in requests. */
export const SPEND_DEFAULTS = { heartbeatTtlMs: 10_000, syncMs: 200, idleMs: 1_000, maxLeaseRequests: 64 } as const;
/** A refusal while other instances hold spare lease room is tried again this many times, a sync period apart. */
const SQUEEZE_RETRIES = 3;

export interface RedisLedgerOptions {
  prefix: string;
  heartbeatTtlMs?: number;
  syncMs?: number;
  idleMs?: number;
  maxLeaseRequests?: number;
  now?: () => number;
  /**
   * The generation recorder's flush count (`flushStarts`): settled spend is tagged with it, so that a push made before
   * a seed can tell which of it the seed read from the store. Without it nothing is assumed written.
   */
  flushMark?: () => number;
}

export class RedisLedger {
  readonly instance = randomUUID();
  private readonly leases = new Map<string, Lease>();
  private readonly redis: RedisWithScripts;
  private readonly o: Required<Omit<RedisLedgerOptions, 'now' | 'flushMark'>>;
  private readonly now: () => number;
  private timers: NodeJS.Timeout[] = [];
  private syncing = false;
  /** Per scope: this instance's trip to Redis under way (resolves once its grant is applied). */
  private readonly pending = new Map<string, Promise<void>>();
  /** Per set of scopes: one sync under way for the refused requests waiting for spare room to come back. */
  private readonly probes = new Map<string, Promise<void>>();
  /** Spend outside the leases (CHARGE), and the charges whose reply never came, retried by the sync timer. */
  private readonly charges: RedisCharges;
  /** The last sequence number given to a push or a charge (increasing: Redis applies each at most once). */
  private seq = 0;
  /** Seeds this instance started (a segment settled before its seed started is counted by that seed). */
  private cuts = 0;
  /** An upper bound of (Redis time − local time), ms, from the last script's answer (null: none yet). */
  private offset: number | null = null;
  private readonly flushMark: () => number;
  /** Scopes whose seed could not read the store: no read (request or sync) before their wait is over; 503 meanwhile. */
  private readonly seedBackoff = new Backoffs(SEED_BACKOFF_MS.min, SEED_BACKOFF_MS.max);

  constructor(redis: Redis, opts: RedisLedgerOptions) {
    this.redis = redis as RedisWithScripts;
    this.o = { ...SPEND_DEFAULTS, ...opts } as Required<Omit<RedisLedgerOptions, 'now' | 'flushMark'>>;
    this.now = opts.now ?? Date.now;
    this.flushMark = opts.flushMark ?? (() => 0);
    this.charges = new RedisCharges(this.redis, this.o.prefix, this.instance, () => ++this.seq);
    defineScripts(redis);
  }

  private key(kind: string, id: string): string {
    return `${this.o.prefix}:${kind}:${id}`;
  }

  /** Starts the heartbeat and the sync timer. */
  start(): void {
    const hb = setInterval(() => this.heartbeat().catch(() => undefined), Math.max(50, Math.floor(this.o.heartbeatTtlMs / 3)));
    const sync = setInterval(() => this.sync().catch(() => undefined), this.o.syncMs);
    this.timers = [hb.unref(), sync.unref()];
  }

  private async heartbeat(): Promise<void> {
    const alive = await this.redis.gwSpendHeartbeat(1, this.key('hb', this.instance), this.o.heartbeatTtlMs);
    if (alive === 1) return;
    // Lapsed (paused past the TTL, or Redis lost it): other instances may have dropped these holds. Keep only what is
    // in flight, and set it again on the next script.
    for (const l of this.leases.values()) (l.granted = l.held + l.used), (l.reset = true);
  }

  private lease(spec: ScopeSpec): Lease {
    let l = this.leases.get(spec.id);
    if (!l) this.leases.set(spec.id, (l = { spec, granted: 0, held: 0, used: 0, segs: [], ver: null, pushed: [], again: [], confirmed: 0, mine: [], unacked: null, lastUse: this.now(), reset: false, squeezed: false, free: 0, spare: 0 }));
    else {
      // A lowered limit (its key, guardrail or budget changed): the room this lease took under the old limit (or a
      // trip under way brings back) is not used; the next request goes to Redis, which checks the new limit.
      if (spec.limitNano < l.spec.limitNano) (l.granted = Math.min(l.granted, l.held + l.used)), (l.reset = true);
      l.spec = spec;
    }
    return l;
  }

  /**
   * Reserves `amountNano` in every scope: from the leases when they all have room, else through Redis (`exact`: the
   * trip takes no lease slack). A refusal while other instances hold spare lease room squeezes the scope — they give
   * it back within a sync period — and is tried again, up to SQUEEZE_RETRIES times, so that a budget with room for N
   * requests admits N whichever instances they reach.
   */
  reserve(scopes: ScopeSpec[], amountNano: number, exact = false, tries = 0): ReserveResult | Promise<ReserveResult> {
    const leases = scopes.map((s) => this.lease(s));
    if (this.fits(leases, amountNano)) return this.take(leases, amountNano);
    const waiting = this.seedBackoff.size > 0 ? leases.find((l) => this.seedBackoff.wait(l.spec.id, this.now()) > 0) : undefined;
    if (waiting) throw new SeedUnavailableError(waiting.spec.id);
    // One trip to Redis at a time per scope: the others wait for its lease, then try again (a burst of a cold key
    // would otherwise take a lease per request and leave most of them idle).
    const busy = leases.map((l) => this.pending.get(l.spec.id)).find((p) => p !== undefined);
    if (busy) return busy.then(() => this.reserve(scopes, amountNano, exact, tries));
    const ids = leases.map((l) => l.spec.id);
    const at = this.now();
    for (const l of leases) l.lastUse = at; // not idle while a trip is under way
    const trip = (this.acquire(leases, amountNano, new Map(), 'all', exact ? 0 : this.o.maxLeaseRequests) as Promise<ReserveResult>).finally(() => {
      for (const id of ids) if (this.pending.get(id) === waitable) this.pending.delete(id);
    });
    const waitable = trip.then(
      () => undefined,
      () => undefined,
    );
    for (const id of ids) this.pending.set(id, waitable);
    return trip.then((r) => this.squeezed(r, scopes, amountNano, exact, tries));
  }

  /**
   * A refusal while other instances hold spare room: waits (with every other such refusal of the same scopes) for one
   * sync a period later — by then they gave their spare room back — and tries again if the room came back; refused
   * at once when no spare room is left anywhere.
   */
  private squeezed(r: ReserveResult, scopes: ScopeSpec[], amount: number, exact: boolean, tries: number): ReserveResult | Promise<ReserveResult> {
    if (r.ok || !((r as Refusal).spareNano! > 0) || tries >= SQUEEZE_RETRIES) return r;
    const leases = scopes.map((s) => this.lease(s));
    const k = leases.map((l) => l.spec.id).join('|');
    let probe = this.probes.get(k);
    if (!probe) {
      probe = new Promise<void>((done) => setTimeout(done, this.o.syncMs + 25).unref?.())
        .then(() => this.acquire(leases, 0, new Map(), leases.map((l) => l.squeezed)))
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => this.probes.delete(k));
      this.probes.set(k, probe);
    }
    return probe.then(() => {
      const l = this.lease(r.scope);
      if (this.fits(leases, amount) || l.free >= amount) return this.reserve(scopes, amount, exact, tries + 1);
      return this.squeezed({ ...r, availableNano: Math.max(0, l.free), spareNano: l.spare } as Refusal, scopes, amount, exact, tries + 1);
    });
  }

  private fits(leases: Lease[], amount: number): boolean {
    return leases.every((l) => !l.reset && l.granted - l.held - l.used >= amount);
  }

  private take(leases: Lease[], amount: number): ReserveResult {
    const at = this.now();
    for (const l of leases) (l.held += amount), (l.lastUse = at);
    return { ok: true, reservation: new LeaseHold(this, leases, amount) };
  }

  /** A request held `amount` in `leases` and cost `actual` (LeaseHold.settle, once). */
  settled(leases: Lease[], amount: number, actual: number): void {
    const mark = this.flushMark();
    const at = this.now();
    let beyond = false;
    for (const l of leases) {
      (l.held -= amount), (l.used += actual), (l.lastUse = at);
      addSettled(l.segs, mark, this.cuts, actual, l.spec.ledgerOnly ? 0 : null);
      if (l.used + l.held > l.granted) beyond = true;
    }
    // Cost beyond the lease (the reply outgrew its estimate): pushed at once, before the reply leaves, so that other
    // instances see it now rather than at the next sync.
    if (beyond) void this.sync().catch(() => undefined);
  }

  /**
   * One SYNC_ACQUIRE over `leases`: pushes their settled spend, gives back their unused lease (`give`: all, or only
   * those marked true; a lease not given back keeps its room, untouched while the script runs), and (amount > 0)
   * grants the amount plus slack in every scope (true), or answers the refusal. Throws when Redis cannot be reached:
   * the push stays unacknowledged (`unacked`: out of the lease, never used twice) and is sent again under the same
   * sequence number by the next call, which Redis applies only if it did not already — never counted twice.
   */
  private async acquire(leases: Lease[], amount: number, seeds: Map<string, { nano: number; ver: string }>, give: 'all' | boolean[] = 'all', maxReq = this.o.maxLeaseRequests): Promise<true | ReserveResult> {
    const sent: Array<Push | null> = [];
    const sentHeld: number[] = [];
    const kept: number[] = []; // per lease: the room it keeps while the script runs (its requests may take from it)
    const resets: number[] = []; // per lease: the limit its reset was sent under (-1: none)
    const scopes = leases.map((l, i): AcquireScope => {
      sentHeld.push(l.held), resets.push(l.reset ? l.spec.limitNano : -1);
      if (l.reset) l.granted = Math.min(l.granted, l.held + l.used); // Redis sets the hold to `held`: no room kept here
      const p = pushOf(l, give === 'all' || give[i], () => ++this.seq);
      kept.push(l.reset ? 0 : Math.max(0, l.granted - l.held - l.used));
      sent.push(p);
      const seed = seeds.get(l.spec.id);
      return { id: l.spec.id, limit: l.spec.limitNano, push: p?.push ?? 0, give: p?.give ?? 0, outstanding: l.held, absolute: l.reset, ttlS: l.spec.ttlS, seed: seed?.nano ?? -1, seq: p?.seq ?? 0, epoch: p ? p.ver : (l.ver ?? ''), seedVer: seed?.ver ?? '', again: p?.again ?? 0 };
    });
    const call = { prefix: this.o.prefix, instance: this.instance, heartbeatTtlMs: this.o.heartbeatTtlMs, amount, maxLeaseRequests: maxReq, squeezeMs: Math.max(1_000, 3 * this.o.syncMs), ackTtlMs: ACK_TTL_MS };
    const { keys, args } = acquireArgs(call, scopes);
    // Unknown whether the script ran when this throws: the pushes stay unacknowledged, to be sent again.
    const at = Date.now();
    const a = parseAcquire(await this.redis.gwSpendAcquire(keys.length, ...keys, ...args), leases.length, amount);
    this.offset = a.now - at;
    if (a.status === 'seed') {
      await this.seed(leases[a.scope], a.now, seeds);
      return this.acquire(leases, amount, seeds, give, maxReq);
    }
    if (a.status === 'stale') {
      // Pushed under an older seed version (the counter was seeded again since): nothing applied. Keep only what the
      // current seed does not count, and push that under its version.
      reseedLease(leases[a.scope], a.ver, { me: this.instance, offset: this.offset });
      return this.acquire(leases, amount, seeds, give, maxReq);
    }
    // Lapsed: the script set the holds to what was in flight when sent; a lease that kept its room may have served
    // requests since, uncounted there: set again to everything in flight before this resolves (or others take it).
    const stale = a.lapsed ? leases.filter((_, i) => kept[i] > 0) : [];
    const out = this.applied(leases, a, sent, sentHeld, resets, amount);
    if (stale.length > 0) {
      for (const l of stale) (l.granted = l.held + l.used), (l.reset = true);
      await this.acquire(stale, 0, new Map(), stale.map(() => false)).catch(() => undefined);
    }
    return out;
  }

  /**
   * Seed needed (first use, expired window, Redis restarted): nothing changed; reads the store into `seeds` for the
   * next try (the pushes go again under the same numbers). The seed's version is the Redis time before the store is
   * read (`at`); the seed counts every amount this instance settled before it started (each is recorded before it
   * is settled). A store that cannot be read: SeedUnavailableError, and the scope waits before the next read.
   */
  private async seed(l: Lease, at: number, seeds: Map<string, { nano: number; ver: string }>): Promise<void> {
    const id = l.spec.id;
    if (this.seedBackoff.wait(id, this.now()) > 0) throw new SeedUnavailableError(id);
    const ver = `${at}:${this.instance}`;
    ownSeed(l, ver, ++this.cuts);
    let nano: number;
    try {
      nano = await l.spec.seed();
    } catch (err) {
      this.seedBackoff.failed(id, this.now());
      throw new SeedUnavailableError(id, err);
    }
    this.seedBackoff.succeeded(id);
    seeds.set(id, { nano, ver });
  }

  /** The effects of a SYNC_ACQUIRE that ran (`a`) on the leases sent (synchronous: grants and takes in one step). */
  private applied(leases: Lease[], a: Exclude<AcquireAnswer, { status: 'seed' | 'stale' }>, sent: Array<Push | null>, sentHeld: number[], resets: number[], amount: number): true | ReserveResult {
    // The script ran: every push it carried is applied (now, or by an earlier call whose reply was lost).
    for (const l of leases) l.confirmed = a.now;
    leases.forEach((l, i) => {
      if (l.unacked === sent[i] && sent[i]) {
        // Applied under its version: kept (bounded) until a later seed tells whether it counts them.
        l.pushed.push(...sent[i]!.segs, ...sent[i]!.againSegs);
        compact(l.pushed);
        l.unacked = null;
      }
      const v = a.vers[i];
      if (v !== null) reseedLease(l, v, { me: this.instance, offset: this.offset });
      else dropConfirmed(l.pushed, this.offset, l.confirmed);
    });
    if (a.lapsed) {
      // This call set the holds of its scopes to what is in flight; the other scopes must be set again too.
      leases.forEach((l, i) => (l.granted = sentHeld[i] + l.used));
      for (const other of this.leases.values()) if (!leases.includes(other)) (other.granted = other.held + other.used), (other.reset = true);
    }
    // Done: a reset this call carried. One set while it ran (a limit lowered meanwhile) waits for the next trip.
    leases.forEach((l, i) => resets[i] === l.spec.limitNano && (l.reset = false));
    // Grants and takes happen in one synchronous step: no other request of this instance may see (and give back) a
    // grant before its request has taken its part.
    if (a.status === 'refused') {
      // A refusal may come after grants to this instance's concurrent requests whose slack covers this one: use it.
      if (amount > 0 && this.fits(leases, amount)) return this.take(leases, amount);
      const l = leases[a.scope];
      (l.free = a.free), (l.spare = a.spare);
      if (a.spare > 0) l.squeezed = true;
      return { ok: false, scope: l.spec, availableNano: Math.max(0, a.free), spareNano: a.spare } as Refusal;
    }
    leases.forEach((l, i) => (l.squeezed = a.squeezed[i]));
    if (a.status === 'synced') leases.forEach((l, i) => ((l.free = a.free[i]), (l.spare = a.spare[i])));
    // Squeezed with spare room here: given back now rather than at the next sync.
    if (leases.some((l) => l.squeezed && l.granted - l.held - l.used > 0)) setImmediate(() => void this.sync().catch(() => undefined));
    if (a.status === 'synced') return true;
    leases.forEach((l, i) => (l.granted += a.grants[i]));
    return this.take(leases, amount);
  }

  /** Records of every amount settled before the recorder's flush number `through` are in the store (since `at`). */
  stored(through: number, at = Date.now()): void {
    for (const l of this.leases.values()) {
      markStored(l.segs, through, at);
      compact(l.segs);
      markStored(l.pushed, through, at);
      compact(l.pushed);
      markStored(l.again, through, at);
      if (l.unacked) markStored(l.unacked.segs, through, at), markStored(l.unacked.againSegs, through, at);
    }
  }

  /**
   * Pushes settled spend and returns idle leases (one script for every scope that has something to do), and retries
   * charges that could not reach Redis. An active lease keeps its room: it is not touched while the script runs, so
   * the instance's own requests keep using it meanwhile.
   */
  async sync(all = false): Promise<void> {
    if (this.syncing) return;
    const at = this.now();
    const due: Lease[] = [];
    for (const [id, l] of this.leases) {
      const idle = l.held === 0 && at - l.lastUse >= this.o.idleMs;
      // A lease with spare room syncs too: its answer says whether the scope is squeezed (then the room goes back).
      if (l.used > 0 || l.unacked || l.reset || l.again.length > 0 || unconfirmed(l.pushed, this.offset, l.confirmed) || (l.granted > 0 && (idle || all || l.granted - l.held - l.used > 0))) due.push(l);
      // Forgotten only when nothing refers to it any more: no hold, no trip to Redis under way (nor pushed spend a new
      // seed might miss: such a lease is due, seed-epochs.ts `unconfirmed`).
      else if (idle && l.granted === 0 && l.used === 0 && !l.unacked && !this.pending.has(id)) this.leases.delete(id);
    }
    // A lease whose seed is waiting (the store could not be read) is left for its wait: the others sync as usual.
    const ready = due.filter((l) => this.seedBackoff.wait(l.spec.id, at) === 0);
    if (ready.length === 0 && this.charges.owed === 0) return;
    this.syncing = true;
    try {
      for (let i = 0; i < ready.length; i += 50) {
        let batch = ready.slice(i, i + 50);
        // A lease whose seed fails now is dropped from its batch, and the batch sent again without it.
        while (batch.length > 0) {
          try {
            await this.acquire(batch, 0, new Map(), all ? 'all' : batch.map((l) => l.squeezed || (l.held === 0 && at - l.lastUse >= this.o.idleMs)));
            break;
          } catch (err) {
            const rest = err instanceof SeedUnavailableError ? batch.filter((l) => l.spec.id !== err.scopeId) : batch;
            if (rest.length === batch.length) throw err;
            batch = rest;
          }
        }
      }
      await this.charges.retry();
    } finally {
      this.syncing = false;
    }
  }

  /**
   * Pushes the settled spend of these scopes now (awaited; no room given back): what settled here is in the shared
   * counters before this resolves — durable even if this instance dies next. Throws when Redis cannot be reached.
   */
  async flush(scopes: ScopeSpec[]): Promise<void> {
    const leases = scopes.map((s) => this.lease(s)).filter((l) => l.used > 0 || l.unacked || l.reset || l.again.length > 0);
    if (leases.length > 0) await this.acquire(leases, 0, new Map(), leases.map(() => false));
  }

  /** Spend that went through no reservation, straight into the shared counters (redis-charges.ts). */
  charge(scopes: ScopeSpec[], nano: number | number[]): Promise<void> {
    return this.charges.charge(scopes, nano);
  }

  /** Stops the timers and gives everything back (clean shutdown). */
  async close(): Promise<void> {
    this.kill();
    await this.sync(true).catch(() => undefined);
    await this.redis.del(this.key('hb', this.instance)).catch(() => undefined);
  }

  /** Stops the heartbeat and the sync without giving anything back (what a crash does; tests). */
  kill(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  /**
   * The lease of a scope here (tests, diagnostics); `unacked`: a push whose reply never came, and the key and sequence
   * number that tell whether Redis applied it (applied when the key holds a number not below `seq`).
   */
  peek(id: string): { granted: number; held: number; used: number; segments: number; unacked: { push: number; give: number; seq: number; ackKey: string; segments: number } | null } | null {
    const l = this.leases.get(id);
    if (!l) return null;
    const u = l.unacked;
    return { granted: l.granted, held: l.held, used: l.used, segments: l.segs.length, unacked: u ? { push: u.push, give: u.give, seq: u.seq, ackKey: this.key('ack', `${id}:${this.instance}`), segments: u.segs.length } : null };
  }
}

