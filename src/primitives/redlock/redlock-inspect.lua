-- redlock-inspect: read-only view of one resource (as mutex-inspect.lua shows it).
-- KEYS[1] lock: the lock key (the resource's name)
-- KEYS[2] fence: the fence key
-- KEYS[3] queue: the queue key
-- KEYS[4] queueExpiry: the queue expiry key
-- ARGV[1] db: the selected database, or '' (see redlock-acquire.lua)
-- Returns {holder, pttl, fence, waiters}: the holder's value or false, the lock's PTTL in ms (-2
--         when free), the last fence or false, and how many waiters are live
if ARGV[1] ~= '' then redis.call('SELECT', tonumber(ARGV[1])) end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local waiters = redis.call('ZCOUNT', KEYS[3], '-inf', '+inf') - redis.call('ZCOUNT', KEYS[4], '-inf', nowMs)
if waiters < 0 then waiters = 0 end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[2]), waiters}
