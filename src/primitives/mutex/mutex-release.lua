-- mutex-release: delete the lock if this token holds it, then wake the next waiter in line.
-- KEYS[1] lock: the lock key
-- KEYS[2] queue: the queue key (zset of waiters, see mutex-acquire.lua)
-- KEYS[3] queueExpiry: the queue expiry key
-- ARGV[1] token: the token of the lease being released
-- ARGV[2] channel: pub/sub channel prefix of the resource; a waiter id is "<instance>:<n>", and the
--         message goes to "<ARGV[2]>:<instance>" only, so no other process is woken for nothing
-- ARGV[3] grace: in ms, the woken waiter keeps its place only this long unless it comes
-- Published on ARGV[2]: "<next waiter id>" or "<next waiter id> <the one after it>"; the second
--   is on standby: if the first is dead it loses its place after the grace, and the standby
--   looks again then, instead of the whole line waiting out the holder's ttl.
-- Returns 1: released
--         0: not held by this token (expired, or already released): nothing was changed
--         {1, refusal}: released, but Redis refused the PUBLISH that wakes the next waiter (its error text)
--#include lib/queue.lua
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then
  local _, nowMs = serverNow()
  pruneQueue(KEYS[2], KEYS[3], nowMs)
  local refused = wakeNext(KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[3]), nowMs)
  if refused then return {1, refused} end
end
return 1
