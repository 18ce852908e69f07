-- quorum-acquire: mutex-acquire on one node of a quorum, plus what the client needs to count the
-- node: how long ago the node (re)started, and its run_id. A waiter's queue score is chosen by the
-- client and is the same on every node, so every node orders the waiters alike.
-- KEYS[1] lock key: string, the holder's token, expires with the lease (PX ttl)
-- KEYS[2] fence key: string, the last fence handed out for this resource on this node
-- KEYS[3] queue key: zset, waiter id -> queue score (the client's first-attempt time, microseconds)
-- KEYS[4] queue expiry key: zset, waiter id -> server ms after which the waiter counts as gone
-- ARGV[1] token of the new lease
-- ARGV[2] ttl in ms
-- ARGV[3] fence retention in ms
-- ARGV[4] waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace in ms: how long past its next re-check a queued waiter keeps its place
-- ARGV[6] queue score of the waiter (identical on every node), or '' for this node's time in us
-- ARGV[7] maxTtl in ms: a node up for less than this does not count towards a quorum
-- Returns {1, fence, young, run_id, now}: acquired here (the waiter stays queued until
--                     quorum-commit); fence = max(last fence + 1, server time in us); also when
--                     this token already holds it here (a retry): expiry reset, the stored fence
--         {0, retry, young, run_id, now}: not acquired; retry = ms until it is worth trying again
--         young = ms until this node counts (0: it counts now); run_id of the server process;
--         now = server time in us (the client derives queue scores from it, not from its own clock)
--#include lib/queue.lua
local info = redis.call('INFO', 'server')
local uptimeMs = tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) * 1000
local runId = string.match(info, 'run_id:(%x+)')
local young = math.max(0, tonumber(ARGV[7]) - uptimeMs)

local nowUs, nowMs = serverNow()
local waiter = ARGV[4]

if redis.call('EXISTS', KEYS[3]) == 1 then pruneQueue(KEYS[3], KEYS[4], nowMs) end
-- The waiter takes its place before the head is looked up: its score may be the lowest even if
-- this node hears from it last (scores come from the client, not from arrival here).
local score = ARGV[6]
if score == '' then score = string.format('%.0f', nowUs) end
if waiter ~= '' then redis.call('ZADD', KEYS[3], 'NX', score, waiter) end
local head = redis.call('ZRANGE', KEYS[3], 0, 0)[1] or false

local function enqueue(untilMs) keepInLine(KEYS[3], KEYS[4], waiter, untilMs) end

-- A retry of an attempt whose reply was lost (the client reuses the token after an error) gets
-- its grant back, as in mutex-acquire, instead of waiting behind itself.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  if waiter ~= '' then enqueue(nowMs + tonumber(ARGV[2]) + tonumber(ARGV[5])) end
  return {1, redis.call('GET', KEYS[2]) or '0', young, runId, string.format('%.0f', nowUs)}
end

local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 and (not head or head == waiter) then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  local fence = nextFence(KEYS[2], nowUs, ARGV[3])
  -- Unlike the single-node mutex, a waiter keeps its place when granted: if the quorum fails and
  -- the grant is undone, it is still first in line here (quorum-commit removes it on success).
  -- Otherwise two waiters that each won some nodes would swap places and split the vote forever.
  if waiter ~= '' then enqueue(nowMs + tonumber(ARGV[2]) + tonumber(ARGV[5])) end
  return {1, string.format('%.0f', fence), young, runId, string.format('%.0f', nowUs)}
end

local retry
if pttl >= 0 then
  retry = pttl
elseif pttl == -1 then
  retry = tonumber(ARGV[2])
else
  retry = tonumber(redis.call('ZSCORE', KEYS[4], head)) - nowMs
end

if waiter ~= '' then enqueue(nowMs + retry + tonumber(ARGV[5])) end
return {0, retry, young, runId, string.format('%.0f', nowUs)}
