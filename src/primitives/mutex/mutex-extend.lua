-- mutex-extend: push the lock's expiry to ttl from now, only if this token still holds it.
-- KEYS[1] lock key
-- ARGV[1] token of the lease
-- ARGV[2] new ttl in ms
-- Returns 1: extended
--         0: not held by this token: the lease is lost, nothing was changed
--#include lib/extend.lua
return extendHeld(KEYS[1], ARGV[1], ARGV[2])
