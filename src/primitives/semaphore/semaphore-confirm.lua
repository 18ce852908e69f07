-- semaphore-confirm: write the quorum's fence back to one node while this lease still holds its
-- slots there, before the lease is handed out (see mutex-confirm.lua: each set of slots is a quorum
-- mutex of its own); the waiter gives up the place in line it kept meanwhile.
-- KEYS[1] fence: the semaphore's fence key
-- KEYS[2] queue: the queue key
-- KEYS[3] queueExpiry: the queue expiry key
-- KEYS[4] passes: the pass count of `fair: false` (see semaphore-acquire.lua)
-- KEYS[5] slot: the lease's first slot key
-- KEYS[6..] more: its other slot keys (one per further permit)
-- ARGV[1] token: the lease's token (without its slots)
-- ARGV[2] fence: the quorum's fence (the max over the nodes that granted the slots)
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id whose place in the queue is given up now that it holds the permits, or ''
-- ARGV[5] unfair: '1' for `fair: false` (the pass count starts again when the waiter first in line
--         is served: here, where its grant is final, not at an acquire a quorum may undo), else ''
-- Returns 1: written (the fence key now holds at least ARGV[2]) while this token holds every slot
--         0: this token no longer holds all of them here: nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
for i = 6, #KEYS do
  if tokenOf(redis.call('GET', KEYS[i])) ~= ARGV[1] then return 0 end
end
local first = ARGV[5] ~= '' and ARGV[4] ~= '' and redis.call('ZRANK', KEYS[2], ARGV[4]) == 0
local held = confirmHeld(KEYS[5], KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if held == 1 and first then redis.call('DEL', KEYS[4]) end
return held
