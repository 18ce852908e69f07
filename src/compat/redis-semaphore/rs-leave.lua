-- rs-leave: an upgraded waiter gives up (acquireTimeout, acquireAttemptsLimit, its signal): it
-- leaves the line, and the waiters behind it are woken to look again.
-- KEYS[1] queue: the line (see rs-mutex-acquire.lua, rs-semaphore-acquire.lua)
-- KEYS[2] queueExpiry: its expiry
-- ARGV[1] waiter: the waiter's place in line
-- ARGV[2] channel: where upgraded waiters listen
-- Returns 1: it was in line
--         0: it was not
--#include lib/queue.lua
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if removed == 1 then publish(ARGV[2], '1') end
return removed
