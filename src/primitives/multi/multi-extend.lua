-- multi-extend: push every lock's expiry to ttl from now, only if this token still holds all of them.
-- KEYS[1] lock key of the first resource
-- KEYS[2..] lock key of each further resource
-- ARGV[1] token of the lease
-- ARGV[2] new ttl in ms
-- Returns 1: extended
--         0: the token no longer holds one of them: nothing was changed
--#include lib/extend.lua
return extendAll(1, #KEYS, ARGV[1], ARGV[2])
