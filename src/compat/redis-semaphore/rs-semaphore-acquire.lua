-- rs-semaphore-acquire: one attempt to take permits of a redis-semaphore semaphore in its own key
-- layout (a sorted set `semaphore:<key>`, member = identifier, or `<identifier>_0` ..
-- `<identifier>_<n-1>` for a MultiSemaphore, score = time of the last acquire or refresh in ms),
-- and fencelock's fence for it. The time is the Redis server's (TIME), not this client's.
-- KEYS[1] permits: zset, member -> ms of its last acquire or refresh (redis-semaphore's `semaphore:<key>`)
-- KEYS[2] fence: string, the last fence handed out for this semaphore (same cluster slot)
-- KEYS[3] upgraded: zset, the members held by upgraded processes (their release publishes), scored as in `permits`
-- KEYS[4] queue: zset, waiter -> server us when it first waited: the upgraded waiters' FIFO line
-- KEYS[5] queueExpiry: zset, waiter -> server ms after which it counts as gone
-- ARGV[1] limit: permits that may be held at once
-- ARGV[2] identifier: the holder's identifier
-- ARGV[3] lockTimeout: in ms: a member older than this is expired
-- ARGV[4] permits: 0 for a Semaphore (one member, the identifier), n for a MultiSemaphore (n members)
-- ARGV[5] retention: fence retention in ms
-- ARGV[6] waiter: this waiter's place in line (`<permits>|<identifier>`), or '' to ignore the line (Redlock)
-- ARGV[7] remaining: ms this waiter still waits at most (its acquireTimeout left)
-- ARGV[8] retryInterval: in ms
-- ARGV[9] grace: ms a waiter keeps its place past its next attempt
-- Returns {1, fence}: acquired; fence = max(last fence + 1, server time in us)
--         {0, soonest, woken}: refused; soonest: ms until the oldest member expires (or, when enough
--           are free but upgraded waiters ahead in line have their turn, until the first of them
--           counts as gone); woken: 1 when every member is an upgraded holder's (a release
--           publishes), 0 when an old one holds any (poll)
--#include lib/queue.lua
local nowUs, nowMs = serverNow()
local timeout, n = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - timeout)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', nowMs - timeout)
local held = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local waiter, need = ARGV[6], math.max(n, 1)
local free = tonumber(ARGV[1]) - #held / 2
if redis.call('EXISTS', KEYS[4]) == 1 then pruneQueue(KEYS[4], KEYS[5], nowMs) end
-- The permits the upgraded waiters ahead in line wait for (read only while enough are free).
local demand = 0
if waiter ~= '' and free >= need then
  local ahead = redis.call('ZRANK', KEYS[4], waiter) or redis.call('ZCARD', KEYS[4])
  if ahead > 0 then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[4], 0, ahead - 1)) do demand = demand + tonumber(string.match(id, '^(%d+)|') or '1') end
  end
end
if free < need + demand then
  local woken = 1
  for i = 1, #held, 2 do
    if not redis.call('ZSCORE', KEYS[3], held[i]) then woken = 0 end
  end
  local retry = math.max(0, tonumber(held[2] or nowMs) + timeout - nowMs)
  if free >= need then
    local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
    retry = math.max(0, tonumber(redis.call('ZSCORE', KEYS[5], head) or nowMs) - nowMs)
  end
  if waiter ~= '' then
    redis.call('ZADD', KEYS[4], 'NX', string.format('%.0f', nowUs), waiter)
    local next = math.min(tonumber(ARGV[7]), math.max(tonumber(ARGV[8]), retry))
    keepInLine(KEYS[4], KEYS[5], waiter, nowMs + next + tonumber(ARGV[9]))
  end
  return {0, retry, woken}
end
if waiter ~= '' then
  redis.call('ZREM', KEYS[4], waiter)
  redis.call('ZREM', KEYS[5], waiter)
end
local members = {}
if n == 0 then members[1] = ARGV[2] end
for i = 0, n - 1 do members[#members + 1] = ARGV[2] .. '_' .. i end
for _, member in ipairs(members) do
  redis.call('ZADD', KEYS[1], nowMs, member)
  redis.call('ZADD', KEYS[3], nowMs, member)
end
redis.call('PEXPIRE', KEYS[1], timeout)
redis.call('PEXPIRE', KEYS[3], timeout)
return {1, string.format('%.0f', nextFence(KEYS[2], nowUs, ARGV[5]))}
