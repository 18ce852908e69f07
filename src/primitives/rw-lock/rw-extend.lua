-- rw-extend: push a reader's or the writer's expiry to ttl from now, only if this token holds it.
-- KEYS[1] writer key
-- KEYS[2] readers key
-- ARGV[1] token of the lease
-- ARGV[2] new ttl in ms
-- ARGV[3] 'r' or 'w'
-- Returns 1: extended
--         0: not held by this token (expired, released, taken over): nothing was changed
--#include lib/queue.lua
--#include lib/extend.lua
if ARGV[3] == 'w' then return extendHeld(KEYS[1], ARGV[1], ARGV[2]) end
local _, nowMs = serverNow()
return extendReader(KEYS[2], ARGV[1], ARGV[2], nowMs)
