-- semaphore-inspect: read-only view of a semaphore.
-- KEYS[1] fence: the fence key
-- KEYS[2] queue: the queue key
-- KEYS[3] queueExpiry: the queue expiry key
-- KEYS[4] limit: the limit key
-- KEYS[5..] slots: the slot keys
-- Returns {limit, fence, waiters, ...permits}: the stored limit or false, the last fence or false,
--         how many waiters are live, then {slot, value, pttl} for each held slot (its lock value:
--         token, then when it was granted and last extended and by whom, lib/lease.lua)
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local waiters = redis.call('ZCOUNT', KEYS[2], '-inf', '+inf') - redis.call('ZCOUNT', KEYS[3], '-inf', nowMs)
if waiters < 0 then waiters = 0 end
local reply = {redis.call('GET', KEYS[4]), redis.call('GET', KEYS[1]), waiters}
for i = 5, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if holder then reply[#reply + 1] = {i - 5, holder, redis.call('PTTL', KEYS[i])} end
end
return reply
