-- rw-leave: a waiter gives up (timeout, abort, close); if nobody holds the lock, wake the head.
-- KEYS[1] writer: the writer key
-- KEYS[2] readers: the readers key
-- KEYS[3] queue: the queue key
-- KEYS[4] queueExpiry: the queue expiry key
-- KEYS[5] readerInfo: the readers' facts (see rw-acquire.lua)
-- ARGV[1] waiter: the waiter id
-- ARGV[2] channel: pub/sub channel prefix (see mutex-release.lua)
-- ARGV[3] grace: in ms
-- Returns 1: the waiter was in the queue
--         0: it was not
--         (a refused PUBLISH is ignored: the woken waiters' own re-checks cover it)
--#include lib/queue.lua
--#include lib/rw.lua
local removed = redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
local _, nowMs = serverNow()
wakeFree(KEYS[1], KEYS[2], KEYS[5], KEYS[3], KEYS[4], ARGV[2], tonumber(ARGV[3]), nowMs)
return removed
