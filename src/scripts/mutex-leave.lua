-- mutex-leave: a waiter gives up (timeout, abort, close); if the lock is free, wake the next one.
-- KEYS[1] lock key
-- KEYS[2] queue key (zset of waiters, see mutex-acquire.lua)
-- KEYS[3] queue expiry key
-- ARGV[1] waiter id
-- ARGV[2] pub/sub channel of the resource
-- Returns 1: the waiter was in the queue
--         0: it was not
local removed = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local head = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if head then redis.call('PUBLISH', ARGV[2], head) end
end
return removed
