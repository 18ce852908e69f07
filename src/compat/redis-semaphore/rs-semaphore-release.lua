-- rs-semaphore-release: give back this identifier's permits of a redis-semaphore semaphore.
-- KEYS[1] permits: the `semaphore:<key>` zset
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] permits: 0 for a Semaphore, n for a MultiSemaphore (see rs-semaphore-acquire.lua)
-- Returns 1: released (at least one member was there)
--         0: none of its members was there: nothing was changed
local n = tonumber(ARGV[2])
if n == 0 then return redis.call('ZREM', KEYS[1], ARGV[1]) end -- 1 or 0
local removed = 0
for i = 0, n - 1 do removed = removed + redis.call('ZREM', KEYS[1], ARGV[1] .. '_' .. i) end
if removed > 0 then return 1 end
return 0
