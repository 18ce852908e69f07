-- semaphore-extend-many: semaphore-extend for many permits in one call (renewals that fall due
-- together); each permit gets its own answer, exactly as if it had been extended alone.
-- KEYS[1] slot key of the first permit
-- KEYS[2] limit key of the first permit's semaphore
-- KEYS[3..] (slot key, limit key) of each further permit, in order (all in one Redis Cluster slot)
-- ARGV[2i-1] token of permit i (without its slot)
-- ARGV[2i] its new ttl in ms
-- Returns {r1, r2, ...}: ri = 1 when permit i was extended (and its limit key lives at least as
--         long), 0 when its slot is not held by its token (expired, released, taken over): nothing
--         was changed for it
--#include lib/extend.lua
local out = {}
for i = 1, #KEYS / 2 do out[i] = extendPermit(KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1], ARGV[2 * i]) end
return out
