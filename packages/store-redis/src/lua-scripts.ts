/**
 * The limiter's Lua scripts, one per operation. Each runs atomically on one Redis node, so the keys
 * of one call must share a hash tag (one Cluster slot). Times are the gateway's unix ms, passed in.
 * Keys get a Redis expiry only to collect garbage; it is `slack` ms longer than the state matters
 * by the gateway's clock, so clock skew or a stall shorter than that never forgets live state.
 */
export const LUA = {
  /** KEYS limits; ARGV now, slack, then interval and burst per key. Returns {0} or {index, wait}. */
  rate: `
local now = tonumber(ARGV[1])
local slack = tonumber(ARGV[2])
local next = {}
local capped = {}
local refused = 0
local wait = 0
for i = 1, #KEYS do
  local interval = tonumber(ARGV[2 * i + 1])
  local burst = tonumber(ARGV[2 * i + 2])
  local stored = redis.call('GET', KEYS[i])
  local tat = now
  if stored then
    tat = math.max(tonumber(stored), now)
    -- No admission leaves a TAT further ahead than burst x interval (a clock stepped back, or
    -- behind another instance's): read it as that far ahead, and keep it so even when refused.
    if tat > now + burst * interval then
      tat = now + burst * interval
      capped[#capped + 1] = {i, tat}
    end
  end
  local w = tat - (burst - 1) * interval - now
  if w > 0 then
    if refused == 0 then refused = i end
    if w > wait then wait = w end
  end
  next[i] = tat + interval
end
if refused > 0 then
  for _, cap in ipairs(capped) do
    redis.call('SET', KEYS[cap[1]], string.format('%.17g', cap[2]), 'PX', math.ceil(cap[2] - now) + slack)
  end
  return {refused, string.format('%.17g', wait)}
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], string.format('%.17g', next[i]), 'PX', math.ceil(next[i] - now) + slack)
end
return {0}
`,
  /** KEYS limits of a request refused after all (a later group, its in-flight slot); ARGV now, slack, interval per key. Takes one request back. */
  refund: `
local now = tonumber(ARGV[1])
local slack = tonumber(ARGV[2])
for i = 1, #KEYS do
  local stored = redis.call('GET', KEYS[i])
  if stored then
    local tat = tonumber(stored) - tonumber(ARGV[i + 2])
    if tat <= now then redis.call('DEL', KEYS[i])
    else redis.call('SET', KEYS[i], string.format('%.17g', tat), 'PX', math.ceil(tat - now) + slack) end
  end
end
return 0
`,
  /** KEYS semaphores; ARGV lease, now, ttl, slack, then max per key. Returns 0 or the refusing index. */
  acquire: `
local lease = ARGV[1]
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local keep = ttl + tonumber(ARGV[4])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if not redis.call('ZSCORE', KEYS[i], lease) then
    if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[i + 4]) then return i end
  end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + ttl, lease)
  if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
end
return 0
`,
  /** KEYS semaphores; ARGV lease, now, ttl, slack. Moves a live lease's expiry to now + ttl. */
  extend: `
local lease = ARGV[1]
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local keep = ttl + tonumber(ARGV[4])
for i = 1, #KEYS do
  local score = redis.call('ZSCORE', KEYS[i], lease)
  if score and tonumber(score) > now then
    redis.call('ZADD', KEYS[i], 'XX', now + ttl, lease)
    if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
  end
end
return 0
`,
  /** KEYS semaphores; ARGV lease. */
  release: `
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
`,
  /** KEYS one semaphore; ARGV now. Live leases. */
  inFlight: `
return redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')
`,
} as const;

/** The name of a script. */
export type ScriptName = keyof typeof LUA;
