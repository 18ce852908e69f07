-- rs-mutex-refresh: push a redis-semaphore mutex's expiry to lockTimeout from now, only while it
-- holds this identifier (redis-semaphore's own check); the upgraded-holder mark lives as long.
-- KEYS[1] lock: the `mutex:<key>` string
-- KEYS[2] upgraded: the upgraded-holder mark (see rs-mutex-acquire.lua)
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] lockTimeout: in ms
-- Returns 1: refreshed
--         0: not held by this identifier: nothing was changed
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1
