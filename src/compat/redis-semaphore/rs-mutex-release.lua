-- rs-mutex-release: delete a redis-semaphore mutex only while it holds this identifier, and wake
-- the upgraded processes that wait for it.
-- KEYS[1] lock: the `mutex:<key>` string
-- KEYS[2] upgraded: the upgraded-holder mark (see rs-mutex-acquire.lua)
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] channel: where upgraded waiters listen (a refused PUBLISH is ignored: they re-check by their ttl)
-- Returns 1: released
--         0: not held by this identifier: nothing was changed
--#include lib/queue.lua
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
publish(ARGV[2], '1')
return 1
