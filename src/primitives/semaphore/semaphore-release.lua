-- semaphore-release: free this token's slots, then wake as many waiters as slots are free.
-- KEYS[1] queue: the queue key (see semaphore-acquire.lua)
-- KEYS[2] queueExpiry: the queue expiry key
-- KEYS[3] limit: the limit key
-- KEYS[4..] slots: the slot keys (limit of them)
-- ARGV[1] token: the lease's token (without its slots)
-- ARGV[2] slots: its slots (0-based, comma-separated), or '' for every slot it holds (undoing an attempt whose slots are unknown)
-- ARGV[3] channel: pub/sub channel prefix of the semaphore (see mutex-release.lua)
-- ARGV[4] grace: in ms, a woken waiter keeps its place only this long unless it comes
-- Returns 1: released
--         0: not held by this token (expired, or already released): nothing was changed
--         {1, refusal}: released, but Redis refused the PUBLISH that wakes the next waiters (its error text)
--#include lib/lease.lua
--#include lib/queue.lua
local released = false
local free = 0
local mine = {}
for slot in string.gmatch(ARGV[2], '%d+') do mine[tonumber(slot)] = true end
for i = 4, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if tokenOf(holder) == ARGV[1] and (ARGV[2] == '' or mine[i - 4]) then
    redis.call('DEL', KEYS[i])
    released = true
    holder = false
  end
  if not holder then free = free + 1 end
end
if not released then return 0 end
if free == #KEYS - 3 then redis.call('DEL', KEYS[3]) end -- nobody holds a permit: the limit may change
if redis.call('EXISTS', KEYS[1]) == 1 then
  local _, nowMs = serverNow()
  pruneQueue(KEYS[1], KEYS[2], nowMs)
  local refused = wakeNext(KEYS[1], KEYS[2], ARGV[3], tonumber(ARGV[4]), nowMs, free)
  if refused then return {1, refused} end
end
return 1
