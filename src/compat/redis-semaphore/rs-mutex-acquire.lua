-- rs-mutex-acquire: one attempt to take a redis-semaphore mutex in its own key layout (a string
-- `mutex:<key>` holding the identifier, PX lockTimeout: what redis-semaphore's SET NX writes and
-- its refresh and release check), and fencelock's fence for it, counted beside it.
-- KEYS[1] lock: string, the holder's identifier, PX lockTimeout (redis-semaphore's `mutex:<key>`)
-- KEYS[2] fence: string, the last fence handed out for this lock (same cluster slot as `lock`)
-- KEYS[3] upgraded: string, the identifier of the holder when it is an upgraded process (it wakes the waiters when it releases), PX as `lock`
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] lockTimeout: in ms
-- ARGV[3] retention: fence retention in ms
-- Returns {1, fence}: acquired; fence = max(last fence + 1, server time in us)
--         {0, pttl, woken}: held by another; pttl: its remaining ms (-1 without expiry); woken: 1
--           when that holder is an upgraded process (its release publishes), 0 for an old one (poll)
--#include lib/queue.lua
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  local woken = redis.call('GET', KEYS[3]) == redis.call('GET', KEYS[1]) and 1 or 0
  return {0, redis.call('PTTL', KEYS[1]), woken}
end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
local nowUs = serverNow()
return {1, string.format('%.0f', nextFence(KEYS[2], nowUs, ARGV[3]))}
