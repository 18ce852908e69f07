-- rw-inspect: read-only view of a read/write lock.
-- KEYS[1] writer: the writer key
-- KEYS[2] readers: the readers key
-- KEYS[3] fence: the fence key
-- KEYS[4] queue: the queue key
-- KEYS[5] queueExpiry: the queue expiry key
-- KEYS[6] readerInfo: the readers' facts (see rw-acquire.lua)
-- Returns {writer, pttl, fence, waiters, ...readers}: the writer's lock value or false (its token,
--         then when it was granted and last extended and by whom: lib/lease.lua), its PTTL, the
--         last fence or false, how many waiters are live, then each reader's token, ms left and
--         facts ("<sinceMs> <extendedMs> <holder>", or false where none are kept), in turn
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local waiters = redis.call('ZCOUNT', KEYS[4], '-inf', '+inf') - redis.call('ZCOUNT', KEYS[5], '-inf', nowMs)
if waiters < 0 then waiters = 0 end
local reply = {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]), redis.call('GET', KEYS[3]), waiters}
local readers = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. nowMs, '+inf', 'WITHSCORES')
for i = 1, #readers, 2 do
  reply[#reply + 1] = readers[i]
  reply[#reply + 1] = tonumber(readers[i + 1]) - nowMs
  reply[#reply + 1] = redis.call('HGET', KEYS[6], readers[i])
end
return reply
