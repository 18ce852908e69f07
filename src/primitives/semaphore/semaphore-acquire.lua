-- semaphore-acquire: one attempt to take `permits` permits (of `limit` slots, all or none) of a
-- counting semaphore (fair FIFO, or `fair: false`), and the fence that goes with them; on one node,
-- or on one node of a quorum.
-- KEYS[1] fence: string, the last fence handed out for this semaphore
-- KEYS[2] queue: zset, waiter id -> queue score (server or client microseconds): FIFO order; a
--         waiter id ending in `:p<n>` waits for n permits (else for 1)
-- KEYS[3] queueExpiry: zset, waiter id -> server ms after which the waiter counts as gone
-- KEYS[4] limit: string, the limit the permits now held were taken under
-- KEYS[5] passes: string, how many grants passed the waiter first in line since a waiter first in
--         line was last served (`fair: false` only; expires with the queue)
-- KEYS[6..] slots: one slot key per permit (limit of them): string, the holder's lock value
--         ("<token> <sinceMs> <extendedMs> <holder>", lib/lease.lua), PX ttl
-- ARGV[1] token: the new lease's token (without its slots)
-- ARGV[2] ttl: in ms
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace: in ms, how long past its next re-check a queued waiter keeps its place
-- ARGV[6] limit: the number of slots (must equal the number of slot keys)
-- ARGV[7] permits: how many slots this lease takes at once, 1 to limit
-- ARGV[8] maxPasses: '' for the fair FIFO; for `fair: false`, how many grants may pass the waiter
--         first in line (free permits go to whoever asks first until then)
-- ARGV[9] score: the waiter's queue score on a quorum (identical on every node), or '' for this node's time
-- ARGV[10] maxTtl: in ms on a quorum node (a node up for less does not count), or '' on one node
-- ARGV[11] holder: the holder's label, recorded in each slot's value with the grant's server time
-- Returns {1, fence, slots, young?, runId?, now?}: granted slots (0-based, comma-separated, lowest
--           first); fence = max(last fence + 1, server time in us); on a quorum node the waiter
--           keeps its place until semaphore-confirm
--         {0, retry, '', young?, runId?, now?}: refused; retry = ms until looking again is worth it
--         {-1, stored, '', young?, runId?, now?}: permits are held under another limit, `stored`
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/lease.lua
--#include lib/queue.lua
local quorum = ARGV[10] ~= ''
local nowUs, nowMs = serverNow()
local now = string.format('%.0f', nowUs)
local token, ttl, waiter, limit = ARGV[1], tonumber(ARGV[2]), ARGV[4], tonumber(ARGV[6])
local permits = tonumber(ARGV[7])

-- The slots: how many are free, the lowest `permits` free ones, this token's own (a retry after a
-- lost reply gets its slots back, with a new fence).
local free, lowest, own = 0, {}, {}
for i = 1, limit do
  local holder = redis.call('GET', KEYS[5 + i])
  if not holder then
    free = free + 1
    if #lowest < permits then lowest[#lowest + 1] = i - 1 end
  elseif tokenOf(holder) == token then
    own[#own + 1] = i - 1
  end
end
-- When the soonest held slot expires: only a refused attempt needs it.
local function soonestExpiry()
  local soonest
  for i = 1, limit do
    local pttl = redis.call('PTTL', KEYS[5 + i])
    if pttl == -1 then pttl = ttl end
    if pttl >= 0 then soonest = math.min(soonest or pttl, pttl) end
  end
  return soonest
end

local stored = redis.call('GET', KEYS[4])
if stored and tonumber(stored) ~= limit then return withNode({-1, stored, ''}, ARGV[10], nowUs) end

local line = redis.call('EXISTS', KEYS[2]) == 1
if line then pruneQueue(KEYS[2], KEYS[3], nowMs) end
local score = ARGV[9]
if score == '' then score = now end
-- On a quorum node the waiter takes its place first: its score may be the lowest even if this
-- node hears from it last (scores come from the client, not from arrival here).
if quorum and waiter ~= '' then
  redis.call('ZADD', KEYS[2], 'NX', score, waiter)
  line = true
end
-- Nobody in line (the uncontended case): no place to look up, none to give up.
local rank = line and waiter ~= '' and redis.call('ZRANK', KEYS[2], waiter) or nil
local ahead = rank or (line and redis.call('ZCARD', KEYS[2]) or 0)

local function holdLimit()
  -- The limit lives as long as the longest permit that could still be held under it.
  if redis.call('PTTL', KEYS[4]) < ttl then redis.call('SET', KEYS[4], limit, 'PX', ttl) end
end

local function leaveLine()
  if waiter == '' then return end
  if quorum then
    keepInLine(KEYS[2], KEYS[3], waiter, nowMs + ttl + tonumber(ARGV[5])) -- semaphore-confirm removes it
  elseif rank then
    redis.call('ZREM', KEYS[2], waiter)
    redis.call('ZREM', KEYS[3], waiter)
  end
end

if #own > 0 then
  for _, slot in ipairs(own) do redis.call('PEXPIRE', KEYS[6 + slot], ttl) end
  holdLimit()
  leaveLine()
  -- A fence of its own, not the semaphore's last one: other permits may have been granted since
  -- the lost attempt, and the last fence is then another holder's. Its first fence never reached it.
  return withNode({1, string.format('%.0f', nextFence(KEYS[1], nowUs, ARGV[3])), table.concat(own, ',')}, ARGV[10], nowUs)
end

-- The permits the `ahead` waiters first in line wait for: each at least 1, so only a line shorter
-- than the free slots is read (at most `limit` ids), and a line of 1-permit waiters adds up to `ahead`.
local function demandAhead()
  if ahead == 0 or ahead > free - permits then return ahead end
  local sum = 0
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, ahead - 1)) do
    sum = sum + (tonumber(string.match(id, ':p(%d+)$')) or 1)
  end
  return sum
end

-- `fair: false`: free permits go to whoever asks first, past the waiters in line, but the waiter
-- first in line is passed at most maxPasses times; then the line goes first again until the waiter
-- first in line is served (so neither a 1-permit nor an n-permit waiter starves).
local maxPasses = ARGV[8]
local function mayPass()
  if maxPasses == '' or ahead == 0 or free < permits then return false end
  return tonumber(redis.call('GET', KEYS[5]) or '0') < tonumber(maxPasses)
end

local inTurn = free >= permits + demandAhead()
if inTurn or mayPass() then
  local value = leaseValue(token, nowMs, ARGV[11])
  for _, slot in ipairs(lowest) do redis.call('SET', KEYS[6 + slot], value, 'PX', ttl) end
  holdLimit()
  if not inTurn then
    redis.call('INCR', KEYS[5])
    redis.call('PEXPIRE', KEYS[5], math.max(1, redis.call('PTTL', KEYS[2])))
  elseif maxPasses ~= '' and ahead == 0 and not quorum then
    -- The waiter first in line is served (or nobody is in line); on a quorum, semaphore-confirm
    -- does it once a majority made the grant final (an undone grant served nobody).
    redis.call('DEL', KEYS[5])
  end
  leaveLine()
  return withNode({1, string.format('%.0f', nextFence(KEYS[1], nowUs, ARGV[3])), table.concat(lowest, ',')}, ARGV[10], nowUs)
end

local retry = soonestExpiry() or ttl
if free >= permits then
  -- Free slots, but waiters ahead of this one have their turn: until the first of them counts as gone.
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  local gone = head and tonumber(redis.call('ZSCORE', KEYS[3], head))
  if gone then retry = math.max(0, gone - nowMs) end
end
if waiter ~= '' then
  redis.call('ZADD', KEYS[2], 'NX', score, waiter)
  keepInLine(KEYS[2], KEYS[3], waiter, nowMs + retry + tonumber(ARGV[5]))
end
return withNode({0, retry, ''}, ARGV[10], nowUs)
