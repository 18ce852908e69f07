-- multi-confirm: write a quorum's fence back to every resource on one node, while this token holds
-- all of their locks there, before the lease is handed out (see mutex-confirm.lua).
-- KEYS[1..] resources: of each resource in turn its lock, fence, queue and queue expiry keys
-- ARGV[1] token: the lease's token
-- ARGV[2] fence: the quorum's fence
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id whose places in the queues are given up now, or ''
-- Returns 1: written while this token holds every lock here
--         0: it does not (one expired meanwhile): nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
local n = #KEYS / 4
for i = 0, n - 1 do
  if tokenOf(redis.call('GET', KEYS[4 * i + 1])) ~= ARGV[1] then return 0 end
end
for i = 0, n - 1 do
  raiseFence(KEYS[4 * i + 2], ARGV[2], ARGV[3])
  if ARGV[4] ~= '' then
    redis.call('ZREM', KEYS[4 * i + 3], ARGV[4])
    redis.call('ZREM', KEYS[4 * i + 4], ARGV[4])
  end
end
return 1
