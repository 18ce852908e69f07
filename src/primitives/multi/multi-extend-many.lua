-- multi-extend-many: multi-extend for many all-or-nothing leases in one call (renewals that fall
-- due together); each lease gets its own answer, exactly as if it had been extended alone.
-- KEYS[1] first lock key of the first lease
-- KEYS[2..] the further lock keys: the first lease's, then each further lease's, in order (all in
--           one Redis Cluster slot)
-- ARGV[3i-2] how many lock keys lease i has
-- ARGV[3i-1] its token
-- ARGV[3i] its new ttl in ms
-- Returns {r1, r2, ...}: ri = 1 when lease i was extended (every one of its locks), 0 when its token
--         no longer holds one of them (the lease is lost; nothing was changed for it)
--#include lib/extend.lua
local out = {}
local k = 0
for i = 1, #ARGV / 3 do
  local n = tonumber(ARGV[3 * i - 2])
  out[i] = extendAll(k + 1, k + n, ARGV[3 * i - 1], ARGV[3 * i])
  k = k + n
end
return out
