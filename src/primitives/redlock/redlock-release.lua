-- redlock-release: delete each lock of a lease that its value holds (as node-redlock's unlock
-- script does), then wake the next drop-in waiter of each resource released.
-- KEYS[1..] resources: of each resource in turn its lock, queue and queueExpiry keys (KEYS[3i-2] .. KEYS[3i])
-- ARGV[1] token: the lease's value
-- ARGV[2] grace: in ms, a woken waiter keeps its place only this long unless it comes
-- ARGV[3] db: the selected database, or '' (see redlock-acquire.lua)
-- ARGV[4..] channels: the pub/sub channel prefix of each resource, in the order of the keys
-- Returns 1: every lock was held by this value, and is released
--         0: some lock was not held by this value (expired, released, taken over); the others are released
--         {1, refusal}: released, but Redis refused the PUBLISH that wakes the next waiter (its error text)
--#include lib/queue.lua
if ARGV[3] ~= '' then redis.call('SELECT', tonumber(ARGV[3])) end
local released, refused = 0, nil
local _, nowMs = serverNow()
for i = 0, #KEYS / 3 - 1 do
  local lock, queue, expiry = KEYS[3 * i + 1], KEYS[3 * i + 2], KEYS[3 * i + 3]
  if redis.call('GET', lock) == ARGV[1] then
    redis.call('DEL', lock)
    released = released + 1
    if redis.call('EXISTS', queue) == 1 then
      pruneQueue(queue, expiry, nowMs)
      refused = wakeNext(queue, expiry, ARGV[4 + i], tonumber(ARGV[2]), nowMs) or refused
    end
  end
end
if released < #KEYS / 3 then return 0 end
if refused then return {1, refused} end
return 1
