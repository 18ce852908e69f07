-- mutex-acquire-many: mutex-acquire for many attempts in one call (attempts issued in the same turn
-- of the event loop); each entry is decided by acquireMutex, exactly as mutex-acquire decides it.
-- KEYS[1..] attempts: of each attempt in turn its lock, fence, queue and queueExpiry keys
--           (KEYS[4i-3] .. KEYS[4i]; all in one Redis Cluster slot)
-- ARGV[1] retention: as mutex-acquire takes it, the same for every attempt
-- ARGV[2] grace: as mutex-acquire takes it, the same for every attempt
-- ARGV[3] holder: as mutex-acquire takes it, the same for every attempt
-- ARGV[4..] requests: of each attempt in turn its token, ttl, waiter, score and maxTtl, as
--           mutex-acquire takes them (ARGV[5i-1] .. ARGV[5i+3])
-- Returns {...replies}: one reply per attempt, in order: what mutex-acquire would return for it, or
--         {false, text} (nil, then the error's text) when that attempt alone raised an error
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/mutex.lua
--#include lib/many.lua
local out = {}
local retention, grace, holder = ARGV[1], ARGV[2], ARGV[3]
for i = 1, #KEYS / 4 do
  local k, a = 4 * i - 4, 5 * i - 2
  out[i] = isolated(acquireMutex, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], ARGV[a + 1], ARGV[a + 2], retention, ARGV[a + 3], grace, ARGV[a + 4], ARGV[a + 5], true, holder)
end
return out
