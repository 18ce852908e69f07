-- election-release: the leader resigns: the lock and the term go, observers hear of the vacancy,
-- and the next candidate in line is woken (as mutex-release.lua).
-- KEYS[1] lock: the lock key
-- KEYS[2] queue: the queue key
-- KEYS[3] queueExpiry: the queue expiry key
-- KEYS[4] term: the term hash (see election-acquire.lua)
-- ARGV[1] token: the term's lease token
-- ARGV[2] channel: pub/sub channel prefix of the candidates' wake-ups (see mutex-release.lua)
-- ARGV[3] grace: in ms, the woken candidate keeps its place only this long unless it comes
-- ARGV[4] observers: the channel observers listen on
-- Returns 1: released
--         0: not held by this token: nothing was changed
--         {1, refusal}: released, but Redis refused a PUBLISH (its error text)
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/term.lua
if tokenOf(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
local refused
if redis.call('HGET', KEYS[4], 'token') == ARGV[1] then refused = publishVacant(KEYS[4], ARGV[4]) end
if redis.call('EXISTS', KEYS[2]) == 1 then
  local _, nowMs = serverNow()
  pruneQueue(KEYS[2], KEYS[3], nowMs)
  refused = wakeNext(KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[3]), nowMs) or refused
end
if refused then return {1, refused} end
return 1
