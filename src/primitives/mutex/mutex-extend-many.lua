-- mutex-extend-many: mutex-extend for many leases in one call (renewals that fall due together);
-- each lease gets its own answer, exactly as if it had been extended alone.
-- KEYS[1] lock key of the first lease
-- KEYS[2..] lock key of each further lease, in order (all in one Redis Cluster slot)
-- ARGV[2i-1] token of lease i
-- ARGV[2i] its new ttl in ms
-- Returns {r1, r2, ...}: ri = 1 when lease i was extended, 0 when its token no longer holds its
--         lock (the lease is lost; nothing was changed for it)
--#include lib/extend.lua
local out = {}
for i = 1, #KEYS do out[i] = extendHeld(KEYS[i], ARGV[2 * i - 1], ARGV[2 * i]) end
return out
