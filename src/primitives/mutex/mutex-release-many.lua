-- mutex-release-many: mutex-release for many leases in one call (releases issued in the same turn
-- of the event loop); each entry is decided by releaseMutex, exactly as mutex-release decides it.
-- KEYS[1..] leases: of each lease in turn its lock, queue and queueExpiry keys (KEYS[3i-2] ..
--           KEYS[3i]; all in one Redis Cluster slot)
-- ARGV[1..] releases: of each lease in turn its token, channel and grace, as mutex-release takes
--           them (ARGV[3i-2] .. ARGV[3i])
-- Returns {...replies}: one reply per lease, in order: what mutex-release would return for it, or
--         {false, text} (nil, then the error's text) when that release alone raised an error
--#include lib/queue.lua
--#include lib/mutex.lua
--#include lib/many.lua
local out = {}
for i = 1, #KEYS / 3 do
  local k = 3 * i - 3
  out[i] = isolated(releaseMutex, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[k + 1], ARGV[k + 2], ARGV[k + 3])
end
return out
