-- multi-extend-many: multi-extend for many all-or-nothing leases in one call (renewals that fall
-- due together); each lease gets its own answer, exactly as if it had been extended alone.
-- KEYS[1..] locks: the lock keys of each lease in turn, in order (all in one Redis Cluster slot)
-- ARGV[1..] leases: of each lease in turn how many lock keys it has, its token and its new ttl in ms
--           (ARGV[3i-2], ARGV[3i-1], ARGV[3i])
-- Returns {...extended}: one answer per lease, in order: 1 when it was extended (every one of its
--         locks), 0 when its token no longer holds one of them (the lease is lost; nothing was
--         changed for it)
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
local out = {}
local k = 0
for i = 1, #ARGV / 3 do
  local n = tonumber(ARGV[3 * i - 2])
  out[i] = extendAll(k + 1, k + n, ARGV[3 * i - 1], ARGV[3 * i])
  k = k + n
end
return out
