-- rw-extend: push a reader's or the writer's expiry to ttl from now, only if this token holds it.
-- KEYS[1] writer: the writer key
-- KEYS[2] readers: the readers key
-- KEYS[3] readerInfo: the readers' facts (see rw-acquire.lua)
-- ARGV[1] token: the lease's token
-- ARGV[2] ttl: the new ttl in ms
-- ARGV[3] mode: 'r' or 'w'
-- Returns 1: extended
--         0: not held by this token (expired, released, taken over): nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
if ARGV[3] == 'w' then return extendHeld(KEYS[1], ARGV[1], ARGV[2]) end
local _, nowMs = serverNow()
return extendReader(KEYS[2], KEYS[3], ARGV[1], ARGV[2], nowMs)
