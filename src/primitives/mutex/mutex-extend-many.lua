-- mutex-extend-many: mutex-extend for many leases in one call (renewals that fall due together);
-- each lease gets its own answer, exactly as if it had been extended alone.
-- KEYS[1..] locks: the lock key of each lease, in order (all in one Redis Cluster slot)
-- ARGV[1..] leases: of each lease in turn its token and its new ttl in ms (ARGV[2i-1], ARGV[2i])
-- Returns {...extended}: one answer per lease, in order: 1 when it was extended, 0 when its token
--         no longer holds its lock (the lease is lost; nothing was changed for it)
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
local out = {}
for i = 1, #KEYS do out[i] = extendHeld(KEYS[i], ARGV[2 * i - 1], ARGV[2 * i]) end
return out
