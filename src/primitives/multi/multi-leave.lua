-- multi-leave: a waiter for several locks gives up; in each queue where the lock is free, wake the next one.
-- KEYS[1..] resources: of each resource in turn its lock, queue and queue expiry keys
-- ARGV[1] waiter: the waiter id
-- ARGV[2] grace: in ms
-- ARGV[3..] channels: the pub/sub channel prefix of each resource, in the order of the keys
-- Returns 1: the waiter was in a queue
--         0: it was not
--         (a refused PUBLISH is ignored: the woken waiters' own re-checks cover it)
--#include lib/queue.lua
local removed = 0
local _, nowMs = serverNow()
for i = 0, #KEYS / 3 - 1 do
  removed = math.max(removed, redis.call('ZREM', KEYS[3 * i + 2], ARGV[1]))
  redis.call('ZREM', KEYS[3 * i + 3], ARGV[1])
  if redis.call('EXISTS', KEYS[3 * i + 1]) == 0 then wakeNext(KEYS[3 * i + 2], KEYS[3 * i + 3], ARGV[3 + i], tonumber(ARGV[2]), nowMs) end
end
return removed
