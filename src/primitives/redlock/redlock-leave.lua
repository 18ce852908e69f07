-- redlock-leave: a waiter for one resource gives up (timeout, abort, close); if the lock is free,
-- the next one is woken (as mutex-leave.lua does).
-- KEYS[1] lock: the lock key (the resource's name)
-- KEYS[2] queue: the queue key
-- KEYS[3] queueExpiry: the queue expiry key
-- ARGV[1] waiter: the waiter id
-- ARGV[2] channel: pub/sub channel prefix of the resource (see mutex-leave.lua)
-- ARGV[3] grace: in ms, the woken waiter keeps its place only this long unless it comes
-- ARGV[4] db: the selected database, or '' (see redlock-acquire.lua)
-- Returns 1: the waiter was in the queue
--         0: it was not
--#include lib/queue.lua
if ARGV[4] ~= '' then redis.call('SELECT', tonumber(ARGV[4])) end
local removed = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local _, nowMs = serverNow()
  wakeNext(KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[3]), nowMs)
end
return removed
