-- election-leave: a candidate gives up (timeout, abort, close); if the lock is free, wake the next one.
-- KEYS[1] lock: the lock key
-- KEYS[2] queue: the queue key (zset of waiters, see mutex-acquire.lua)
-- KEYS[3] queueExpiry: the queue expiry key
-- ARGV[1] waiter: the waiter id
-- ARGV[2] channel: pub/sub channel prefix of the resource; a waiter id is "<instance>:<n>", and the
--         message goes to "<ARGV[2]>:<instance>" only, so no other process is woken for nothing
-- ARGV[3] grace: in ms, the woken waiter keeps its place only this long unless it comes
-- Published on ARGV[2] when the lock is free: as in election-release.lua
-- Returns 1: the waiter was in the queue
--         0: it was not
--         (a refused PUBLISH is ignored: the woken waiter's own re-check covers it)
--#include lib/queue.lua
local removed = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local _, nowMs = serverNow()
  wakeNext(KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[3]), nowMs)
end
return removed
