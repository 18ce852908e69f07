-- rs-semaphore-refresh: renew this identifier's permits of a redis-semaphore semaphore (their
-- score becomes the server's time now), only while it still holds them.
-- KEYS[1] permits: the `semaphore:<key>` zset
-- KEYS[2] upgraded: the upgraded holders' members (see rs-semaphore-acquire.lua)
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] lockTimeout: in ms
-- ARGV[3] permits: 0 for a Semaphore, n for a MultiSemaphore (see rs-semaphore-acquire.lua)
-- Returns 1: refreshed
--         0: not held by this identifier (expired, released): nothing was changed
--#include lib/queue.lua
local _, nowMs = serverNow()
local timeout, n = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs - timeout)
local first = n == 0 and ARGV[1] or ARGV[1] .. '_0'
if not redis.call('ZSCORE', KEYS[1], first) then return 0 end
local members = {}
if n == 0 then members[1] = ARGV[1] end
for i = 0, n - 1 do members[#members + 1] = ARGV[1] .. '_' .. i end
for _, member in ipairs(members) do
  redis.call('ZADD', KEYS[1], nowMs, member)
  redis.call('ZADD', KEYS[2], 'XX', nowMs, member)
end
redis.call('PEXPIRE', KEYS[1], timeout)
redis.call('PEXPIRE', KEYS[2], timeout)
return 1
