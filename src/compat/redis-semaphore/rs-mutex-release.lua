-- rs-mutex-release: delete a redis-semaphore mutex only while it holds this identifier.
-- KEYS[1] lock: the `mutex:<key>` string
-- ARGV[1] identifier: the holder's identifier
-- Returns 1: released
--         0: not held by this identifier: nothing was changed
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
