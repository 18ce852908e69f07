-- semaphore-extend: push a permit's expiry to ttl from now, only if this token still holds its slot.
-- KEYS[1] slot: the permit's slot key
-- KEYS[2] limit: the limit key (lives as long as the longest permit)
-- ARGV[1] token: the permit's token (without its slot)
-- ARGV[2] ttl: the new ttl in ms
-- Returns 1: extended
--         0: the slot is not held by this token (expired, released, taken over): nothing was changed
--#include lib/extend.lua
return extendPermit(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
