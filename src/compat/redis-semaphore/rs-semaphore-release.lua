-- rs-semaphore-release: give back this identifier's permits of a redis-semaphore semaphore, and
-- wake the upgraded processes that wait for one.
-- KEYS[1] permits: the `semaphore:<key>` zset
-- KEYS[2] upgraded: the upgraded holders' members (see rs-semaphore-acquire.lua)
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] permits: 0 for a Semaphore, n for a MultiSemaphore (see rs-semaphore-acquire.lua)
-- ARGV[3] channel: where upgraded waiters listen (a refused PUBLISH is ignored: they re-check by their ttl)
-- Returns 1: released (at least one member was there)
--         0: none of its members was there: nothing was changed
--#include lib/queue.lua
local n = tonumber(ARGV[2])
local members = {}
if n == 0 then members[1] = ARGV[1] end
for i = 0, n - 1 do members[#members + 1] = ARGV[1] .. '_' .. i end
local removed = 0
for _, member in ipairs(members) do
  removed = removed + redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
end
if removed == 0 then return 0 end
publish(ARGV[3], '1')
return 1
