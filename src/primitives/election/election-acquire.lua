-- election-acquire: one attempt to become the leader of an election (a fair mutex whose holder also
-- keeps a value); on one node, or on one node of a quorum (maxTtl given), as mutex-acquire.lua. The
-- grant is acquireMutex of lib/mutex.lua; what follows it is the election's: the term hash, and
-- the new term told to the observers.
-- KEYS[1] lock: string, the leader's lock value ("<token> <sinceMs> <extendedMs> <holder>",
--         lib/lease.lua), expires with the term (PX ttl)
-- KEYS[2] fence: string, the last fence (term) handed out for this election (on this node)
-- KEYS[3] queue: zset, waiter id -> queue score: FIFO order of the candidates
-- KEYS[4] queueExpiry: zset, waiter id -> server ms after which the candidate counts as gone
-- KEYS[5] term: hash {token, fence, version, value, confirmed} of the leader's term, expires with
--         the lock; `confirmed` once its fence is final (at once on one node, by election-confirm on a quorum)
-- ARGV[1] token: the new term's lease token
-- ARGV[2] ttl: in ms
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace: in ms, how long past its next re-check a queued waiter keeps its place
-- ARGV[6] score: the waiter's queue score on a quorum (identical on every node), or '' for this node's time
-- ARGV[7] maxTtl: in ms on a quorum node, or '' on one node
-- ARGV[8] value: the candidate's value (what observers are told)
-- ARGV[9] observers: the channel observers listen on
-- ARGV[10] holder: the holder's label, recorded in the lock value with the grant's server time
-- Returns {1, fence, young?, runId?, now?}: elected, fence = max(last fence + 1, server time in
--                     microseconds); also when this token already leads (a retried attempt). On one
--                     node the new term is published to observers at once; on a quorum node only
--                     by election-confirm, once the quorum settled on its fence.
--         {0, retry, young?, runId?, now?}: not elected; retry = ms until it is worth trying again
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/mutex.lua
--#include lib/term.lua
-- Whether this token leads already (a retried attempt): decided before the grant, which cannot tell.
local retried = tokenOf(redis.call('GET', KEYS[1])) == ARGV[1]
-- The grant is a mutex's (the same queue, the same fence, the same retry); the term is the election's.
local reply = acquireMutex(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], false, ARGV[10])
if reply[1] ~= 1 then return reply end
local quorum = ARGV[7] ~= ''

if retried then
  -- The term lives as long as the lock, and its fence is the term's (what election-confirm settled
  -- on), not whatever this node's fence key holds now.
  redis.call('PEXPIRE', KEYS[5], ARGV[2])
  local fence = redis.call('HGET', KEYS[5], 'fence') or '0'
  reply[2] = quorum and fence or tonumber(fence)
  return reply
end

redis.call('DEL', KEYS[5])
redis.call('HSET', KEYS[5], 'token', ARGV[1], 'fence', string.format('%.0f', reply[2]), 'version', '0', 'value', ARGV[8])
redis.call('PEXPIRE', KEYS[5], ARGV[2])
-- On a quorum node this node's own fence until the quorum settles: not the term's yet (see
-- election-inspect), and the observers hear of it from election-confirm.
if not quorum then
  redis.call('HSET', KEYS[5], 'confirmed', '1')
  publishTerm(KEYS[1], KEYS[5], ARGV[9])
end
return reply
