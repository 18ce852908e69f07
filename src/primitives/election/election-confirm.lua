-- election-confirm: a quorum settled on `fence` for the term `token` won on this node: the fence
-- key and the term's fence hold it from now on, the waiter gives up its place, and the observers
-- hear of the new term (on one node, election-acquire told them already).
-- KEYS[1] lock: the lock key
-- KEYS[2] fence: the fence key
-- KEYS[3] queue: the queue key
-- KEYS[4] queueExpiry: the queue expiry key
-- KEYS[5] term: the term hash (see election-acquire.lua)
-- ARGV[1] token: the term's lease token
-- ARGV[2] fence: the quorum's fence (the max over the nodes that granted the term)
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id whose place in the queue is given up, or ''
-- ARGV[5] observers: the channel observers listen on
-- Returns 1: written while this token holds the lock here
--         0: this token no longer holds the lock here: nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/term.lua
if confirmHeld(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) == 0 then return 0 end
if redis.call('HGET', KEYS[5], 'token') == ARGV[1] then
  redis.call('HSET', KEYS[5], 'fence', ARGV[2], 'confirmed', '1')
  publishTerm(KEYS[1], KEYS[5], ARGV[5])
end
return 1
