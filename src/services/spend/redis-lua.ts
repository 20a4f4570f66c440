/**
 * The Redis ledger's scripts (docs/spend.md, "Across instances"): their text, their loading as commands, and the
 * layout of a SYNC_ACQUIRE's call and answer (read here, so the ledger deals in named fields, not reply indices).
 */
import type { Redis } from 'ioredis';

/**
 * The shared spend counters' one script (docs/spend.md, "Across instances"). Per scope, Redis keeps
 *   <prefix>:spent:<scope>    settled spend (nano-dollars, an integer), seeded once from the store;
 *   <prefix>:hold:<scope>     a hash: instance id → nano-dollars that instance holds (its lease: reserved, or settled
 *                             and not pushed yet), and `f:<instance>` → what of it that instance last reported in
 *                             flight (the rest is spare: lease room it may not need);
 *   <prefix>:squeeze:<scope>  set (PX) while the scope is nearly spent and another instance holds spare room: every
 *                             instance then gives its spare room back at once and takes no lease slack;
 *   <prefix>:ver:<scope>      the version of the seed the counter started from (below, "Seed versions");
 *   <prefix>:ack:<scope>:<instance>  the sequence number of that instance's last push applied to the scope (PX, renewed
 *                             by each push): a push is applied at most once (see step 3);
 * and per instance <prefix>:hb:<instance>, its heartbeat, renewed by that instance alone (PX ttl). A hold counts only
 * while its instance's heartbeat lives: a dead instance's holds are dropped by the next script that meets them.
 *
 * SYNC_ACQUIRE, for an instance and the scopes of one request (or of a periodic sync), in one atomic step:
 *  1. a scope whose spent counter is missing (first use, expired window, Redis restarted) is seeded from ARGV, or the
 *     script answers {-2, i} (seed needed) before changing anything;
 *  2. the instance's heartbeat is renewed (a missing one means its holds may have been dropped: `lapsed`, and the
 *     holds of this call are set to what the instance still has in flight instead of adjusted);
 *  3. per scope: settled spend is pushed (spent += push, hold −= push) and unused lease given back (hold −= give) —
 *     once: each push carries the instance's sequence number `seq` (increasing; one unacknowledged push per scope and
 *     instance at a time, sent again under the same number until a reply arrives), and a push whose number is not
 *     above the scope's ack key was applied already (its reply was lost) and is skipped;
 *  4. with an amount to reserve: free = limit − spent − Σ live holds for every scope; if any is below the amount the
 *     answer is {0, lapsed, i, free_i, spare_i} (spare: other instances' spare room; when above zero the scope is
 *     squeezed, and the caller may try again once they gave it back) and nothing is reserved; else each scope's hold
 *     grows by the amount plus the lease slack (src/core/spend.ts `leaseSlack`, mirrored here; none while squeezed) —
 *     a grant without slack while others hold spare room squeezes the scope — and the answer is
 *     {1, lapsed, grant_1 … grant_n, squeezed_1 … squeezed_n}; without an amount,
 *     {1, lapsed, squeezed_1 … squeezed_n, free_1 … free_n, spare_1 … spare_n}.
 * Lua numbers are doubles: amounts are exact up to 2^53 nano-dollars (about $9 million) per scope.
 *
 * Seed versions (src/services/spend/seed-epochs.ts): <prefix>:ver:<scope> holds the version of the seed the counter
 * started from, `<redis ms>:<instance>` (the Redis time the seeding instance was told to seed, before it read the
 * store). An instance sends with each push the version it last saw (its epoch); a push under another version is not
 * applied: the answer is {-3, i, version, now} before anything but seeding changed, and the instance pushes again only
 * what that seed does not count. Every other answer ends with, per scope, 0 (the epoch sent is current) or the
 * current version, then the Redis time (ms, `now`); {-2, i, now} gives the seed's version time.
 *
 * KEYS: hb, then spent_i, hold_i, squeeze_i, ack_i, ver_i for each scope. ARGV: instance, hb prefix, ttl ms, amount,
 * max lease requests, squeeze ms, ack ttl ms, then per scope: limit, push, give, outstanding (in flight here; the hold
 * to set instead when lapsed or `absolute` is 1: the instance's heartbeat lapsed earlier), absolute, ttl s (0: none),
 * seed (−1: unknown), seq (0: nothing to push nor give), epoch (the seed version last seen, '' none), seed version,
 * again (spend pushed before under an older seed that the current seed does not count: added to the spent counter
 * with the push, at most once like it, without touching the hold).
 */
export const SYNC_ACQUIRE = `
local inst, hbp, ttl, amount, maxReq, squeezeMs, ackMs = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local n = (#KEYS - 1) / 5
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
for i = 1, n do
  if redis.call('EXISTS', KEYS[5 * i - 3]) == 0 and tonumber(ARGV[7 + (i - 1) * 11 + 7]) < 0 then return {-2, i, now} end
end
local vers = {}
for i = 1, n do
  local b = 7 + (i - 1) * 11
  if redis.call('EXISTS', KEYS[5 * i - 3]) == 0 then
    redis.call('SET', KEYS[5 * i - 3], ARGV[b + 7])
    redis.call('SET', KEYS[5 * i + 1], ARGV[b + 10])
  end
  vers[i] = redis.call('GET', KEYS[5 * i + 1]) or ''
  if tonumber(ARGV[b + 8]) > 0 and vers[i] ~= ARGV[b + 9] then return {-3, i, vers[i], now} end
end
local lapsed = 0
if redis.call('EXISTS', KEYS[1]) == 0 then lapsed = 1 end
redis.call('SET', KEYS[1], '1', 'PX', ttl)
local free, holders, spare, squeezed, outs = {}, {}, {}, {}, {}
for i = 1, n do
  local spentKey, holdKey, ackKey, b = KEYS[5 * i - 3], KEYS[5 * i - 2], KEYS[5 * i], 7 + (i - 1) * 11
  local limit, push, give, outstanding, absolute = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5])
  local ttlS, seq, again = tonumber(ARGV[b + 6]), tonumber(ARGV[b + 8]), tonumber(ARGV[b + 11])
  outs[i] = outstanding
  if seq > 0 then
    local last = tonumber(redis.call('GET', ackKey) or '0')
    if seq <= last then
      push, give, again = 0, 0, 0
    else
      redis.call('SET', ackKey, seq, 'PX', ackMs)
    end
  end
  if push + again > 0 then redis.call('INCRBY', spentKey, push + again) end
  if lapsed == 1 or absolute == 1 then
    redis.call('HSET', holdKey, inst, outstanding)
  elseif push + give > 0 then
    redis.call('HINCRBY', holdKey, inst, -(push + give))
  end
  redis.call('HSET', holdKey, 'f:' .. inst, outstanding)
  local all = redis.call('HGETALL', holdKey)
  local inflight = {}
  for j = 1, #all, 2 do
    if string.sub(all[j], 1, 2) == 'f:' then inflight[string.sub(all[j], 3)] = tonumber(all[j + 1]) end
  end
  local held, live, sp = 0, 0, 0
  for j = 1, #all, 2 do
    local who, v = all[j], tonumber(all[j + 1])
    if string.sub(who, 1, 2) ~= 'f:' then
      if (who ~= inst and redis.call('EXISTS', hbp .. who) == 0) or v <= 0 then
        redis.call('HDEL', holdKey, who, 'f:' .. who)
      else
        held = held + v
        if who ~= inst then
          live = live + 1
          local s = v - (inflight[who] or 0)
          if s > 0 then sp = sp + s end
        end
      end
    elseif string.sub(who, 3) ~= inst and redis.call('HEXISTS', holdKey, string.sub(who, 3)) == 0 then
      redis.call('HDEL', holdKey, who)
    end
  end
  if ttlS > 0 then
    redis.call('EXPIRE', spentKey, ttlS)
    redis.call('EXPIRE', holdKey, ttlS)
    redis.call('EXPIRE', KEYS[5 * i + 1], ttlS)
  end
  free[i] = limit - tonumber(redis.call('GET', spentKey)) - held
  holders[i] = live
  spare[i] = sp
  squeezed[i] = redis.call('EXISTS', KEYS[5 * i - 1])
end
local function tail(out)
  for i = 1, n do
    if vers[i] == ARGV[7 + (i - 1) * 11 + 9] then out[#out + 1] = 0 else out[#out + 1] = vers[i] end
  end
  out[#out + 1] = now
  return out
end
if amount <= 0 then
  local out = {1, lapsed}
  for i = 1, n do out[#out + 1] = squeezed[i] end
  for i = 1, n do out[#out + 1] = tostring(free[i]) end
  for i = 1, n do out[#out + 1] = tostring(spare[i]) end
  return tail(out)
end
for i = 1, n do
  if free[i] < amount then
    if spare[i] > 0 then redis.call('SET', KEYS[5 * i - 1], '1', 'PX', squeezeMs) end
    return tail({0, lapsed, i, tostring(free[i]), tostring(spare[i])})
  end
end
local out = {1, lapsed}
for i = 1, n do
  local rest, slack = free[i] - amount, 0
  if rest > 0 and squeezed[i] == 0 then
    local share = math.floor(rest / (2 * (holders[i] + 1)))
    if share >= amount then slack = math.min(share - share % amount, amount * maxReq) end
  end
  if slack == 0 and spare[i] > 0 and squeezed[i] == 0 then
    redis.call('SET', KEYS[5 * i - 1], '1', 'PX', squeezeMs)
    squeezed[i] = 1
  end
  redis.call('HINCRBY', KEYS[5 * i - 2], inst, amount + slack)
  redis.call('HSET', KEYS[5 * i - 2], 'f:' .. inst, outs[i] + amount)
  out[#out + 1] = amount + slack
end
for i = 1, n do out[#out + 1] = squeezed[i] end
return tail(out)
`;

/** Renews an instance's heartbeat only while it lives: {1} renewed, {0} it had lapsed (left to SYNC_ACQUIRE to restore). */
export const HEARTBEAT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
  return 1
end
return 0
`;

/**
 * CHARGE: spend that did not come through a lease (a video job's final cost against what its admission charged): per
 * scope, spent += ARGV[i] (may be negative) when the counter exists — a missing one is seeded from the store on next
 * use, which already holds the change. Applied at most once: KEYS[1] is the charge's own key
 * (<prefix>:charge:<instance>:<seq>), set (PX ARGV[1]) by the first run; a charge sent again because its reply was lost
 * finds it and changes nothing ({0}). KEYS: charge key, then spent_i. ARGV: ack ttl ms, then delta_i, ttl s_i (0: none).
 */
export const CHARGE = `
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', tonumber(ARGV[1])) == false then return 0 end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('INCRBY', KEYS[i], tonumber(ARGV[2 * i - 2]))
    local ttl = tonumber(ARGV[2 * i - 1])
    if ttl > 0 then redis.call('EXPIRE', KEYS[i], ttl) end
  end
end
return 1
`;

/** How long Redis remembers that a push or charge was applied (a reply lost is sent again within this time). */
export const ACK_TTL_MS = 24 * 3_600_000;

type Acquire = (keys: number, ...args: Array<string | number>) => Promise<Array<number | string>>;
/** A connection with the ledger's scripts as commands (`defineScripts`). */
export type RedisWithScripts = Redis & { gwSpendAcquire: Acquire; gwSpendHeartbeat: (keys: number, ...args: Array<string | number>) => Promise<number>; gwSpendCharge: (keys: number, ...args: Array<string | number>) => Promise<number> };

/**
 * The ledger's scripts as commands of `redis`, loaded again on every (re)connection: the first script after Redis
 * restarted is then one round trip (not EVALSHA, NOSCRIPT, then EVAL), so its answer's Redis time bounds the clock
 * offset as tightly as any other (seed-epochs.ts).
 */
export function defineScripts(redis: Redis): void {
  const r = redis as RedisWithScripts;
  if (!r.gwSpendAcquire) redis.defineCommand('gwSpendAcquire', { lua: SYNC_ACQUIRE });
  if (!r.gwSpendHeartbeat) redis.defineCommand('gwSpendHeartbeat', { lua: HEARTBEAT });
  if (!r.gwSpendCharge) redis.defineCommand('gwSpendCharge', { lua: CHARGE });
  const load = () => void Promise.all([SYNC_ACQUIRE, HEARTBEAT, CHARGE].map((lua) => redis.script('LOAD', lua))).catch(() => undefined);
  redis.on('ready', load);
  if (redis.status === 'ready') load();
}

/** What one SYNC_ACQUIRE is about: the instance, its settings, and the amount to reserve (0: a sync). */
export interface AcquireCall {
  prefix: string;
  instance: string;
  heartbeatTtlMs: number;
  amount: number;
  maxLeaseRequests: number;
  squeezeMs: number;
  ackTtlMs: number;
}

/** One scope's part of a SYNC_ACQUIRE (ARGV per scope, in the script's order; see its comment). */
export interface AcquireScope {
  id: string;
  limit: number;
  push: number;
  give: number;
  /** In flight on this instance (the hold to set when `absolute` or lapsed). */
  outstanding: number;
  absolute: boolean;
  ttlS: number;
  /** −1: unknown (the script answers "seed needed" when the counter is missing). */
  seed: number;
  /** 0: nothing to push nor give. */
  seq: number;
  /** The seed version the push was made under ('' none). */
  epoch: string;
  /** The version of `seed` ('' none). */
  seedVer: string;
  again: number;
}

/** The KEYS and ARGV of a SYNC_ACQUIRE over `scopes`. */
export function acquireArgs(c: AcquireCall, scopes: readonly AcquireScope[]): { keys: string[]; args: Array<string | number> } {
  const hb = `${c.prefix}:hb:`;
  const keys: string[] = [hb + c.instance];
  const args: Array<string | number> = [c.instance, hb, c.heartbeatTtlMs, c.amount, c.maxLeaseRequests, c.squeezeMs, c.ackTtlMs];
  for (const s of scopes) {
    const k = (kind: string, id = s.id) => `${c.prefix}:${kind}:${id}`;
    keys.push(k('spent'), k('hold'), k('squeeze'), k('ack', `${s.id}:${c.instance}`), k('ver'));
    args.push(s.limit, s.push, s.give, s.outstanding, s.absolute ? 1 : 0, s.ttlS, s.seed, s.seq, s.epoch, s.seedVer, s.again);
  }
  return { keys, args };
}

/** Per scope: the counter's seed version when it is not the epoch sent (then the lease is re-seeded), null when it is. */
type Versions = Array<string | null>;

/**
 * A SYNC_ACQUIRE's answer, read. `now`: the Redis time it ran at (ms); `scope`: an index into the scopes sent;
 * `lapsed`: the instance's heartbeat had lapsed (the holds sent were set, not adjusted).
 */
export type AcquireAnswer =
  /** A counter is missing: nothing changed; seed it (version time `now`) and call again. */
  | { status: 'seed'; scope: number; now: number }
  /** A push was made under an older seed version (`ver` is the current one): nothing but seeding changed. */
  | { status: 'stale'; scope: number; ver: string; now: number }
  /** No room for the amount in `scope` (`free` left; `spare`: other instances' spare room). */
  | { status: 'refused'; lapsed: boolean; scope: number; free: number; spare: number; vers: Versions; now: number }
  /** Reserved: `grants[i]` (amount plus slack) added to each hold. */
  | { status: 'granted'; lapsed: boolean; grants: number[]; squeezed: boolean[]; vers: Versions; now: number }
  /** A sync (no amount): per scope, whether squeezed, the room left and the others' spare room. */
  | { status: 'synced'; lapsed: boolean; squeezed: boolean[]; free: number[]; spare: number[]; vers: Versions; now: number };

/** Reads a SYNC_ACQUIRE's reply over `n` scopes (the layouts in the script's comment). */
export function parseAcquire(res: ReadonlyArray<number | string>, n: number, amount: number): AcquireAnswer {
  const status = Number(res[0]);
  const now = Number(res[res.length - 1]);
  const nums = (from: number) => Array.from({ length: n }, (_, i) => Number(res[from + i]));
  const flags = (from: number) => Array.from({ length: n }, (_, i) => Number(res[from + i]) === 1);
  const vers = (from: number): Versions => Array.from({ length: n }, (_, i) => (res[from + i] === 0 || res[from + i] === '0' ? null : String(res[from + i])));
  if (status === -2) return { status: 'seed', scope: Number(res[1]) - 1, now };
  if (status === -3) return { status: 'stale', scope: Number(res[1]) - 1, ver: String(res[2]), now };
  const lapsed = Number(res[1]) === 1;
  if (status === 0) return { status: 'refused', lapsed, scope: Number(res[2]) - 1, free: Number(res[3]), spare: Number(res[4]), vers: vers(5), now };
  if (amount > 0) return { status: 'granted', lapsed, grants: nums(2), squeezed: flags(2 + n), vers: vers(2 + 2 * n), now };
  return { status: 'synced', lapsed, squeezed: flags(2), free: nums(2 + n), spare: nums(2 + 2 * n), vers: vers(2 + 3 * n), now };
}
