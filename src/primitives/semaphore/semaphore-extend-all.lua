-- semaphore-extend-all: semaphore-extend for a lease of several permits: every one of its slots is
-- pushed to ttl from now, only if this token still holds all of them.
-- KEYS[1] limit: the limit key (lives as long as the longest permit)
-- KEYS[2..] slots: the lease's slot keys
-- ARGV[1] token: the lease's token (without its slots)
-- ARGV[2] ttl: the new ttl in ms
-- Returns 1: extended
--         0: a slot is not held by this token (expired, released, taken over): nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
if extendAll(2, #KEYS, ARGV[1], ARGV[2]) == 0 then return 0 end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
