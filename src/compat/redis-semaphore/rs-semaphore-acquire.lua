-- rs-semaphore-acquire: one attempt to take permits of a redis-semaphore semaphore in its own key
-- layout (a sorted set `semaphore:<key>`, member = identifier, or `<identifier>_0` ..
-- `<identifier>_<n-1>` for a MultiSemaphore, score = time of the last acquire or refresh in ms),
-- and fencelock's fence for it. The time is the Redis server's (TIME), not this client's.
-- KEYS[1] permits: zset, member -> ms of its last acquire or refresh (redis-semaphore's `semaphore:<key>`)
-- KEYS[2] fence: string, the last fence handed out for this semaphore (same cluster slot)
-- KEYS[3] upgraded: zset, the members held by upgraded processes (their release publishes), scored as in `permits`
-- ARGV[1] limit: permits that may be held at once
-- ARGV[2] identifier: the holder's identifier
-- ARGV[3] lockTimeout: in ms: a member older than this is expired
-- ARGV[4] permits: 0 for a Semaphore (one member, the identifier), n for a MultiSemaphore (n members)
-- ARGV[5] retention: fence retention in ms
-- Returns {1, fence}: acquired; fence = max(last fence + 1, server time in us)
--         {0, soonest, woken}: refused; soonest: ms until the oldest member expires; woken: 1 when
--           every member is an upgraded holder's (a release publishes), 0 when an old one holds any (poll)
--#include lib/queue.lua
local nowUs, nowMs = serverNow()
local timeout, n = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - timeout)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', nowMs - timeout)
local held = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
if #held / 2 + math.max(n, 1) > tonumber(ARGV[1]) then
  local woken = 1
  for i = 1, #held, 2 do
    if not redis.call('ZSCORE', KEYS[3], held[i]) then woken = 0 end
  end
  return {0, math.max(0, tonumber(held[2] or nowMs) + timeout - nowMs), woken}
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
