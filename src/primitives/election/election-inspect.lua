-- election-inspect: read-only view of an election on this node.
-- KEYS[1] lock: the lock key
-- KEYS[2] fence: the fence key
-- KEYS[3] queue: the queue key
-- KEYS[4] queueExpiry: the queue expiry key
-- KEYS[5] term: the term hash (see election-acquire.lua)
-- Returns {holder, pttl, fence, waiters, termFence, version, value}: the leader's lock value or false
--         (its token, then when it was granted and last extended and by whom: lib/lease.lua),
--         the lock's PTTL in ms (-2 when vacant), the last fence or false, how many candidates are
--         live, and the leader's term (fence, version, value; each false unless it is the holder's
--         and confirmed: a quorum node's own fence before the quorum settled is not the term's)
--#include lib/lease.lua
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local waiters = redis.call('ZCOUNT', KEYS[3], '-inf', '+inf') - redis.call('ZCOUNT', KEYS[4], '-inf', nowMs)
if waiters < 0 then waiters = 0 end
local holder = redis.call('GET', KEYS[1])
local term = redis.call('HMGET', KEYS[5], 'token', 'fence', 'version', 'value', 'confirmed')
if not holder or term[1] ~= tokenOf(holder) or term[5] ~= '1' then term = {false, false, false, false} end
return {holder, redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]), waiters, term[2], term[3], term[4]}
