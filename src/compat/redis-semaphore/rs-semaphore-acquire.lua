-- rs-semaphore-acquire: one attempt to take permits of a redis-semaphore semaphore in its own key
-- layout (a sorted set `semaphore:<key>`, member = identifier, or `<identifier>_0` ..
-- `<identifier>_<n-1>` for a MultiSemaphore, score = time of the last acquire or refresh in ms),
-- and fencelock's fence for it. The time is the Redis server's (TIME), not this client's.
-- KEYS[1] permits: zset, member -> ms of its last acquire or refresh (redis-semaphore's `semaphore:<key>`)
-- KEYS[2] fence: string, the last fence handed out for this semaphore (same cluster slot)
-- ARGV[1] limit: permits that may be held at once
-- ARGV[2] identifier: the holder's identifier
-- ARGV[3] lockTimeout: in ms: a member older than this is expired
-- ARGV[4] permits: 0 for a Semaphore (one member, the identifier), n for a MultiSemaphore (n members)
-- ARGV[5] retention: fence retention in ms
-- Returns {1, fence}: acquired; fence = max(last fence + 1, server time in us)
--         {0, held}: refused; held = members held now
--#include lib/queue.lua
local nowUs, nowMs = serverNow()
local timeout, n = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - timeout)
local held = redis.call('ZCARD', KEYS[1])
if held + math.max(n, 1) > tonumber(ARGV[1]) then return {0, held} end
if n == 0 then
  redis.call('ZADD', KEYS[1], nowMs, ARGV[2])
else
  for i = 0, n - 1 do redis.call('ZADD', KEYS[1], nowMs, ARGV[2] .. '_' .. i) end
end
redis.call('PEXPIRE', KEYS[1], timeout)
return {1, string.format('%.0f', nextFence(KEYS[2], nowUs, ARGV[5]))}
