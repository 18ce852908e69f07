-- semaphore-extend-many: semaphore-extend for many permits in one call (renewals that fall due
-- together); each permit gets its own answer, exactly as if it had been extended alone.
-- KEYS[1..] permits: of each permit in turn its slot key and its semaphore's limit key (KEYS[2i-1],
--           KEYS[2i]), in order (all in one Redis Cluster slot)
-- ARGV[1..] leases: of each permit in turn its token (without its slot) and its new ttl in ms
-- Returns {...extended}: one answer per permit, in order: 1 when it was extended (and its limit key
--         lives at least as long), 0 when its slot is not held by its token (expired, released,
--         taken over): nothing was changed for it
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
local out = {}
for i = 1, #KEYS / 2 do out[i] = extendPermit(KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1], ARGV[2 * i]) end
return out
