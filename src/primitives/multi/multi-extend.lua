-- multi-extend: push every lock's expiry to ttl from now, only if this token still holds all of them.
-- KEYS[1..] locks: the lock key of each resource
-- ARGV[1] token: the lease's token
-- ARGV[2] ttl: the new ttl in ms
-- Returns 1: extended
--         0: the token no longer holds one of them: nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
return extendAll(1, #KEYS, ARGV[1], ARGV[2])
