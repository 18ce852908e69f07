-- election-acquire: one attempt to become the leader of an election (a fair mutex whose holder also
-- keeps a value); on one node, or on one node of a quorum (maxTtl given), as mutex-acquire.lua.
-- KEYS[1] lock: string, the leader's token, expires with the term (PX ttl)
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
-- Returns {1, fence, young?, runId?, now?}: elected, fence = max(last fence + 1, server time in
--                     microseconds); also when this token already leads (a retried attempt). On one
--                     node the new term is published to observers at once; on a quorum node only
--                     by election-confirm, once the quorum settled on its fence.
--         {0, retry, young?, runId?, now?}: not elected; retry = ms until it is worth trying again
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/queue.lua
--#include lib/term.lua
local nowUs, nowMs = serverNow()
local waiter = ARGV[4]
local quorum = ARGV[7] ~= ''

local head = false
local queued = redis.call('EXISTS', KEYS[3]) == 1
if queued then pruneQueue(KEYS[3], KEYS[4], nowMs) end
if quorum and waiter ~= '' then
  local score = ARGV[6]
  if score == '' then score = string.format('%.0f', nowUs) end
  redis.call('ZADD', KEYS[3], 'NX', score, waiter)
  queued = true
end
if queued then head = redis.call('ZRANGE', KEYS[3], 0, 0)[1] or false end

if (not head or head == waiter) and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = nextFence(KEYS[2], nowUs, ARGV[3])
  redis.call('DEL', KEYS[5])
  redis.call('HSET', KEYS[5], 'token', ARGV[1], 'fence', string.format('%.0f', fence), 'version', '0', 'value', ARGV[8])
  redis.call('PEXPIRE', KEYS[5], ARGV[2])
  if quorum then
    -- This node's own fence until the quorum settles: not the term's yet (see election-inspect).
    if waiter ~= '' then keepInLine(KEYS[3], KEYS[4], waiter, nowMs + tonumber(ARGV[2]) + tonumber(ARGV[5])) end
    return withNode({1, fence}, ARGV[7], nowUs)
  end
  if head then
    redis.call('ZREM', KEYS[3], waiter)
    redis.call('ZREM', KEYS[4], waiter)
  end
  redis.call('HSET', KEYS[5], 'confirmed', '1')
  publishTerm(KEYS[1], KEYS[5], ARGV[9])
  return {1, fence}
end

local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[5], ARGV[2])
  local fence = redis.call('HGET', KEYS[5], 'fence') or '0'
  if quorum then
    if waiter ~= '' then keepInLine(KEYS[3], KEYS[4], waiter, nowMs + tonumber(ARGV[2]) + tonumber(ARGV[5])) end
    return withNode({1, fence}, ARGV[7], nowUs)
  end
  if head then
    redis.call('ZREM', KEYS[3], waiter)
    redis.call('ZREM', KEYS[4], waiter)
  end
  return {1, tonumber(fence)}
end

local retry
local pttl = holder and redis.call('PTTL', KEYS[1]) or -2
if pttl >= 0 then
  retry = pttl
elseif pttl == -1 then
  retry = tonumber(ARGV[2])
else
  retry = tonumber(redis.call('ZSCORE', KEYS[4], head)) - nowMs
end

if waiter ~= '' then
  if not quorum then redis.call('ZADD', KEYS[3], 'NX', nowUs, waiter) end
  keepInLine(KEYS[3], KEYS[4], waiter, nowMs + retry + tonumber(ARGV[5]))
end
return withNode({0, retry}, ARGV[7], nowUs)
