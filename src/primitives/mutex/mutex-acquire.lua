-- mutex-acquire: one attempt to take a fair mutex, and the fence that goes with it; on one node, or
-- on one node of a quorum (maxTtl given), where a waiter's queue score is chosen by the client and
-- is the same on every node, so every node orders the waiters alike.
-- KEYS[1] lock: string, the holder's token, expires with the lease (PX ttl)
-- KEYS[2] fence: string, the last fence handed out for this resource (on this node)
-- KEYS[3] queue: zset, waiter id -> queue score (server microseconds, or the client's on a quorum): FIFO order
-- KEYS[4] queueExpiry: zset, waiter id -> server ms after which the waiter counts as gone
-- ARGV[1] token: the new lease's token
-- ARGV[2] ttl: in ms
-- ARGV[3] retention: fence retention in ms (how long the fence key outlives its last use)
-- ARGV[4] waiter: waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace: in ms, how long past its next re-check a queued waiter keeps its place
-- ARGV[6] score: the waiter's queue score on a quorum (identical on every node), or '' for this node's time
-- ARGV[7] maxTtl: in ms on a quorum node (a node up for less does not count, see nodeInfo), or '' on one node
-- Returns {1, fence, young?, runId?, now?}: acquired, fence = max(last fence + 1, server time in
--                     microseconds); also when this token already holds the lock (a retry of an
--                     attempt whose reply was lost): the expiry is reset to ttl and the fence is the
--                     one it was given. On a quorum node the waiter keeps its place until mutex-confirm.
--         {0, retry, young?, runId?, now?}: not acquired; retry = ms until it is worth trying again
--                     (holder's PTTL, or until the waiter ahead of this one counts as gone)
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/queue.lua
local nowUs, nowMs = serverNow()
local waiter = ARGV[4]
local quorum = ARGV[7] ~= ''

local head = false
local queued = redis.call('EXISTS', KEYS[3]) == 1
if queued then pruneQueue(KEYS[3], KEYS[4], nowMs) end
-- On a quorum node the waiter takes its place before the head is looked up: its score may be the
-- lowest even if this node hears from it last (scores come from the client, not from arrival here).
if quorum and waiter ~= '' then
  local score = ARGV[6]
  if score == '' then score = string.format('%.0f', nowUs) end
  redis.call('ZADD', KEYS[3], 'NX', score, waiter)
  queued = true
end
if queued then head = redis.call('ZRANGE', KEYS[3], 0, 0)[1] or false end

-- The common case in one call: nobody ahead in line, and the lock is free.
if (not head or head == waiter) and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local fence = nextFence(KEYS[2], nowUs, ARGV[3])
  if quorum then
    -- Unlike on one node, the waiter keeps its place when granted: if the quorum fails and the
    -- grant is undone, it is still first in line here (mutex-confirm removes it on success).
    -- Otherwise two waiters that each won some nodes would swap places and split the vote forever.
    if waiter ~= '' then keepInLine(KEYS[3], KEYS[4], waiter, nowMs + tonumber(ARGV[2]) + tonumber(ARGV[5])) end
    return withNode({1, fence}, ARGV[7], nowUs)
  end
  if head then
    redis.call('ZREM', KEYS[3], waiter)
    redis.call('ZREM', KEYS[4], waiter)
  end
  return {1, fence}
end

local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if quorum then
    if waiter ~= '' then keepInLine(KEYS[3], KEYS[4], waiter, nowMs + tonumber(ARGV[2]) + tonumber(ARGV[5])) end
    return withNode({1, redis.call('GET', KEYS[2]) or '0'}, ARGV[7], nowUs)
  end
  if head then
    redis.call('ZREM', KEYS[3], waiter)
    redis.call('ZREM', KEYS[4], waiter)
  end
  return {1, tonumber(redis.call('GET', KEYS[2]))}
end

local retry
local pttl = holder and redis.call('PTTL', KEYS[1]) or -2
if pttl >= 0 then
  retry = pttl
elseif pttl == -1 then
  -- A key without expiry was written by someone else: look again after one ttl.
  retry = tonumber(ARGV[2])
else
  -- Free, but a waiter ahead of this one has its turn: until it counts as gone.
  retry = tonumber(redis.call('ZSCORE', KEYS[4], head)) - nowMs
end

if waiter ~= '' then
  if not quorum then redis.call('ZADD', KEYS[3], 'NX', nowUs, waiter) end
  keepInLine(KEYS[3], KEYS[4], waiter, nowMs + retry + tonumber(ARGV[5]))
end
return withNode({0, retry}, ARGV[7], nowUs)
