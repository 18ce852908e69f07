-- mutex-extend: push the lock's expiry to ttl from now, only if this token still holds it.
-- KEYS[1] lock: the lock key
-- ARGV[1] token: the lease's token
-- ARGV[2] ttl: the new ttl in ms
-- Returns 1: extended
--         0: not held by this token: the lease is lost, nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
return extendHeld(KEYS[1], ARGV[1], ARGV[2])
