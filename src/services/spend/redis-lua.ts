/**
 * The shared spend counters' one script (docs/spend.md, "Across instances"). Per scope, Redis keeps
 *   <prefix>:spent:<scope>  settled spend (nano-dollars, an integer), seeded once from the store;
 *   <prefix>:hold:<scope>   a hash: instance id → nano-dollars that instance holds (its lease: reserved, or settled
 *                           and not pushed yet);
 * and per instance <prefix>:hb:<instance>, its heartbeat, renewed by that instance alone (PX ttl). A hold counts only
 * while its instance's heartbeat lives: a dead instance's holds are dropped by the next script that meets them.
 *
 * SYNC_ACQUIRE, for an instance and the scopes of one request (or of a periodic sync), in one atomic step:
 *  1. a scope whose spent counter is missing (first use, expired window, Redis restarted) is seeded from ARGV, or the
 *     script answers {-2, i} (seed needed) before changing anything;
 *  2. the instance's heartbeat is renewed (a missing one means its holds may have been dropped: `lapsed`, and the
 *     holds of this call are set to what the instance still has in flight instead of adjusted);
 *  3. per scope: settled spend is pushed (spent += push, hold −= push) and unused lease given back (hold −= give);
 *  4. with an amount to reserve: free = limit − spent − Σ live holds for every scope; if any is below the amount the
 *     answer is {0, lapsed, i, free_i} and nothing is reserved; else each scope's hold grows by the amount plus the
 *     lease slack (src/core/spend.ts `leaseSlack`, mirrored here) and the answer is {1, lapsed, grant_1 … grant_n}.
 * Lua numbers are doubles: amounts are exact up to 2^53 nano-dollars (about $9 million) per scope.
 *
 * KEYS: hb, then spent_i, hold_i for each scope. ARGV: instance, hb prefix, ttl ms, amount, max lease requests, then
 * per scope: limit, push, give, outstanding (the hold to set instead, when lapsed or `absolute` is 1: the instance's
 * heartbeat lapsed earlier), absolute, ttl s (0: none), seed (−1: unknown).
 */
export const SYNC_ACQUIRE = `
local inst, hbp, ttl, amount, maxReq = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local n = (#KEYS - 1) / 2
for i = 1, n do
  if redis.call('EXISTS', KEYS[2 * i]) == 0 and tonumber(ARGV[5 + (i - 1) * 7 + 7]) < 0 then return {-2, i} end
end
local lapsed = 0
if redis.call('EXISTS', KEYS[1]) == 0 then lapsed = 1 end
redis.call('SET', KEYS[1], '1', 'PX', ttl)
local free, holders = {}, {}
for i = 1, n do
  local spentKey, holdKey, b = KEYS[2 * i], KEYS[2 * i + 1], 5 + (i - 1) * 7
  local limit, push, give, outstanding, absolute = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), tonumber(ARGV[b + 5])
  local ttlS, seed = tonumber(ARGV[b + 6]), tonumber(ARGV[b + 7])
  if redis.call('EXISTS', spentKey) == 0 then redis.call('SET', spentKey, seed) end
  if push > 0 then redis.call('INCRBY', spentKey, push) end
  if lapsed == 1 or absolute == 1 then
    redis.call('HSET', holdKey, inst, outstanding)
  elseif push + give > 0 then
    redis.call('HINCRBY', holdKey, inst, -(push + give))
  end
  local all = redis.call('HGETALL', holdKey)
  local held, live = 0, 0
  for j = 1, #all, 2 do
    local who, v = all[j], tonumber(all[j + 1])
    if who ~= inst and redis.call('EXISTS', hbp .. who) == 0 then
      redis.call('HDEL', holdKey, who)
    elseif v <= 0 then
      redis.call('HDEL', holdKey, who)
    else
      held = held + v
      if who ~= inst then live = live + 1 end
    end
  end
  if ttlS > 0 then
    redis.call('EXPIRE', spentKey, ttlS)
    redis.call('EXPIRE', holdKey, ttlS)
  end
  free[i] = limit - tonumber(redis.call('GET', spentKey)) - held
  holders[i] = live
end
if amount <= 0 then return {1, lapsed} end
for i = 1, n do
  if free[i] < amount then return {0, lapsed, i, tostring(free[i])} end
end
local out = {1, lapsed}
for i = 1, n do
  local rest, slack = free[i] - amount, 0
  if rest > 0 then
    local share = math.floor(rest / (2 * (holders[i] + 1)))
    if share >= amount then slack = math.min(share - share % amount, amount * maxReq) end
  end
  redis.call('HINCRBY', KEYS[2 * i + 1], inst, amount + slack)
  out[#out + 1] = amount + slack
end
return out
`;

/** Renews an instance's heartbeat only while it lives: {1} renewed, {0} it had lapsed (left to SYNC_ACQUIRE to restore). */
export const HEARTBEAT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
  return 1
end
return 0
`;
