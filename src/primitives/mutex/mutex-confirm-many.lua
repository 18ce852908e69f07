-- mutex-confirm-many: mutex-confirm for many leases in one call (the confirmations a quorum sends a
-- node in the same turn of the event loop); each entry is decided by confirmHeld, exactly as
-- mutex-confirm decides it.
-- KEYS[1..] leases: of each lease in turn its lock, fence, queue and queueExpiry keys
--           (KEYS[4i-3] .. KEYS[4i]; all in one Redis Cluster slot)
-- ARGV[1] retention: as mutex-confirm takes it, the same for every lease
-- ARGV[2..] confirms: of each lease in turn its token, fence and waiter, as mutex-confirm takes
--           them (ARGV[3i-1] .. ARGV[3i+1])
-- Returns {...replies}: one reply per lease, in order: what mutex-confirm would return for it, or
--         {false, text} (nil, then the error's text) when that entry alone raised an error
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/many.lua
local out = {}
local retention = ARGV[1]
for i = 1, #KEYS / 4 do
  local k, a = 4 * i - 4, 3 * i - 1
  out[i] = isolated(confirmHeld, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], ARGV[a], ARGV[a + 1], retention, ARGV[a + 2])
end
return out
