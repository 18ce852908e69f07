-- mutex-acquire-many: mutex-acquire for many attempts in one call (attempts issued in the same turn
-- of the event loop); each entry is decided by acquireMutex, exactly as mutex-acquire decides it.
-- KEYS[1..] attempts: of each attempt in turn its lock, fence, queue and queueExpiry keys
--           (KEYS[4i-3] .. KEYS[4i]; all in one Redis Cluster slot)
-- ARGV[1..] requests: of each attempt in turn its token, ttl, retention, waiter, grace, score and
--           maxTtl, as mutex-acquire takes them (ARGV[7i-6] .. ARGV[7i])
-- Returns {...replies}: one reply per attempt, in order: what mutex-acquire would return for it, or
--         {false, text} (nil, then the error's text) when that attempt alone raised an error
--#include lib/queue.lua
--#include lib/mutex.lua
--#include lib/many.lua
local out = {}
for i = 1, #KEYS / 4 do
  local k, a = 4 * i - 4, 7 * i - 7
  out[i] = isolated(acquireMutex, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7])
end
return out
