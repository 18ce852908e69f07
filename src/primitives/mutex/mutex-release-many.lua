-- mutex-release-many: mutex-release for many leases in one call (releases issued in the same turn
-- of the event loop); each entry is decided by releaseMutex, exactly as mutex-release decides it.
-- KEYS[1..] leases: of each lease in turn its lock, queue and queueExpiry keys (KEYS[3i-2] ..
--           KEYS[3i]; all in one Redis Cluster slot)
-- ARGV[1] grace: as mutex-release takes it, the same for every lease
-- ARGV[2..] releases: of each lease in turn its token and channel, as mutex-release takes them
--           (ARGV[2i] .. ARGV[2i+1])
-- Returns {...replies}: one reply per lease, in order: what mutex-release would return for it, or
--         {false, text} (nil, then the error's text) when that release alone raised an error
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/mutex.lua
--#include lib/many.lua
local out = {}
local grace = ARGV[1]
for i = 1, #KEYS / 3 do
  local k = 3 * i - 3
  out[i] = isolated(releaseMutex, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[2 * i], ARGV[2 * i + 1], grace)
end
return out
