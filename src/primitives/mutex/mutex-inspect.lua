-- mutex-inspect: read-only view of a resource.
-- KEYS[1] lock key
-- KEYS[2] fence key
-- KEYS[3] queue key
-- KEYS[4] queue expiry key
-- Returns {holder token or false, lock PTTL in ms (-2 when free), last fence or false, live waiters}
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local waiters = redis.call('ZCOUNT', KEYS[3], '-inf', '+inf') - redis.call('ZCOUNT', KEYS[4], '-inf', nowMs)
if waiters < 0 then waiters = 0 end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]), waiters}
