-- mutex-leave-many: mutex-leave for many waiters in one call (the places given up in the same turn
-- of the event loop); each entry is decided by leaveMutex, exactly as mutex-leave decides it.
-- KEYS[1..] lines: of each waiter in turn its lock, queue and queueExpiry keys (KEYS[3i-2] ..
--           KEYS[3i]; all in one Redis Cluster slot)
-- ARGV[1] grace: as mutex-leave takes it, the same for every waiter
-- ARGV[2..] leaves: of each waiter in turn its waiter id and channel, as mutex-leave takes them
--           (ARGV[2i] .. ARGV[2i+1])
-- Returns {...replies}: one reply per waiter, in order: what mutex-leave would return for it, or
--         {false, text} (nil, then the error's text) when that entry alone raised an error
--#include lib/queue.lua
--#include lib/mutex.lua
--#include lib/many.lua
local out = {}
local grace = ARGV[1]
for i = 1, #KEYS / 3 do
  local k = 3 * i - 3
  out[i] = isolated(leaveMutex, KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], ARGV[2 * i], ARGV[2 * i + 1], grace)
end
return out
