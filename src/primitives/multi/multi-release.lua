-- multi-release: delete each of the locks this token holds, and wake each one's next waiter.
-- KEYS[1..] resources: of each resource in turn its lock, queue and queue expiry keys
-- ARGV[1] token: the lease's token
-- ARGV[2] grace: in ms, a woken waiter keeps its place only this long unless it comes
-- ARGV[3..] channels: the pub/sub channel prefix of each resource, in the order of the keys
-- Returns 1: released (every lock this token still held)
--         0: it held none of them: nothing was changed
--         {1, refusal}: released, but Redis refused a PUBLISH that wakes a next waiter (its error text)
--#include lib/lease.lua
--#include lib/queue.lua
local released, refused = false, nil
local nowMs
for i = 0, #KEYS / 3 - 1 do
  if tokenOf(redis.call('GET', KEYS[3 * i + 1])) == ARGV[1] then
    redis.call('DEL', KEYS[3 * i + 1])
    released = true
    if redis.call('EXISTS', KEYS[3 * i + 2]) == 1 then
      if not nowMs then
        local _, ms = serverNow()
        nowMs = ms
      end
      pruneQueue(KEYS[3 * i + 2], KEYS[3 * i + 3], nowMs)
      refused = wakeNext(KEYS[3 * i + 2], KEYS[3 * i + 3], ARGV[3 + i], tonumber(ARGV[2]), nowMs) or refused
    end
  end
end
if not released then return 0 end
if refused then return {1, refused} end
return 1
