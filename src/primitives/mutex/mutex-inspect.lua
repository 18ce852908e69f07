-- mutex-inspect: read-only view of a resource.
-- KEYS[1] lock: the lock key
-- KEYS[2] fence: the fence key
-- KEYS[3] queue: the queue key
-- KEYS[4] queueExpiry: the queue expiry key
-- Returns {holder, pttl, fence, waiters}: the lock's value or false (its token, then when it was
--         granted and last extended and by whom: lib/lease.lua), the lock's PTTL in ms (-2 when
--         free), the last fence or false, and how many waiters are live
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local waiters = redis.call('ZCOUNT', KEYS[3], '-inf', '+inf') - redis.call('ZCOUNT', KEYS[4], '-inf', nowMs)
if waiters < 0 then waiters = 0 end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]), waiters}
