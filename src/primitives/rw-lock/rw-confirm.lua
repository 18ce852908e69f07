-- rw-confirm: write a quorum's fence back to one node while this token still holds its read or
-- write lease there, before the lease is handed out (see mutex-confirm.lua).
-- KEYS[1] writer: the writer key
-- KEYS[2] readers: the readers key
-- KEYS[3] fence: the fence key
-- KEYS[4] queue: the queue key
-- KEYS[5] queueExpiry: the queue expiry key
-- ARGV[1] token: the lease's token
-- ARGV[2] fence: the quorum's fence
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id whose place in the queue is given up now, or ''
-- ARGV[5] mode: 'r' or 'w'
-- Returns 1: written while this token holds the lease here
--         0: it does not hold it here (expired meanwhile): nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
if ARGV[5] == 'w' then
  if tokenOf(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
elseif not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 0
end
raiseFence(KEYS[3], ARGV[2], ARGV[3])
if ARGV[4] ~= '' then
  redis.call('ZREM', KEYS[4], ARGV[4])
  redis.call('ZREM', KEYS[5], ARGV[4])
end
return 1
