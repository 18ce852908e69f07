-- semaphore-leave: a waiter gives up (timeout, abort, close); wake as many as slots are free.
-- KEYS[1] queue: the queue key (see semaphore-acquire.lua)
-- KEYS[2] queueExpiry: the queue expiry key
-- KEYS[3..] slots: the slot keys (limit of them)
-- ARGV[1] waiter: the waiter id
-- ARGV[2] channel: pub/sub channel prefix of the semaphore (see mutex-release.lua)
-- ARGV[3] grace: in ms, a woken waiter keeps its place only this long unless it comes
-- Returns 1: the waiter was in the queue
--         0: it was not
--         (a refused PUBLISH is ignored: the woken waiters' own re-checks cover it)
--#include lib/queue.lua
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local free = 0
for i = 3, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 0 then free = free + 1 end
end
if free > 0 then
  local _, nowMs = serverNow()
  wakeNext(KEYS[1], KEYS[2], ARGV[2], tonumber(ARGV[3]), nowMs, free)
end
return removed
