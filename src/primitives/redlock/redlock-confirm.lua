-- redlock-confirm: the quorum's fence written back to one node before the lease is handed out (as
-- mutex-confirm.lua does), for every resource of the lease; the waiter gives up its place in line.
-- KEYS[1..] resources: of each resource in turn its lock, fence, queue and queueExpiry keys
-- ARGV[1] token: the lease's value
-- ARGV[2] fence: the quorum's fence (the max over the nodes that granted the lock)
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id whose place in the queue is given up now that it holds the lock, or ''
-- ARGV[5] db: the selected database, or '' (see redlock-acquire.lua)
-- Returns 1: written (every fence key now holds at least ARGV[2]) while this value holds every lock
--         0: this value no longer holds some lock here: nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
if ARGV[5] ~= '' then redis.call('SELECT', tonumber(ARGV[5])) end
for i = 1, #KEYS, 4 do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then return 0 end
end
for i = 1, #KEYS, 4 do confirmHeld(KEYS[i], KEYS[i + 1], KEYS[i + 2], KEYS[i + 3], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) end
return 1
