-- rw-release: end a reader's or the writer's lease if this token holds it; when nobody holds the
-- lock any more, wake the head of the line (a writer, or every reader up to the first writer).
-- KEYS[1] writer: the writer key
-- KEYS[2] readers: the readers key
-- KEYS[3] queue: the queue key
-- KEYS[4] queueExpiry: the queue expiry key
-- KEYS[5] readerInfo: the readers' facts (see rw-acquire.lua)
-- ARGV[1] token: the lease's token
-- ARGV[2] mode: 'r' or 'w'
-- ARGV[3] channel: pub/sub channel prefix (see mutex-release.lua)
-- ARGV[4] grace: in ms, a woken waiter keeps its place only this long unless it comes
-- Returns 1: released
--         0: not held by this token: nothing was changed
--         {1, refusal}: released, but Redis refused the PUBLISH that wakes the next waiters (its error text)
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/rw.lua
local released
if ARGV[2] == 'w' then
  released = tokenOf(redis.call('GET', KEYS[1])) == ARGV[1]
  if released then redis.call('DEL', KEYS[1]) end
else
  released = redis.call('ZREM', KEYS[2], ARGV[1]) == 1
  redis.call('HDEL', KEYS[5], ARGV[1])
end
if not released then return 0 end
local _, nowMs = serverNow()
local refused = wakeFree(KEYS[1], KEYS[2], KEYS[5], KEYS[3], KEYS[4], ARGV[3], tonumber(ARGV[4]), nowMs)
if refused then return {1, refused} end
return 1
