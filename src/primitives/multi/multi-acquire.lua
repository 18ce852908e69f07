-- multi-acquire: one attempt to take several mutexes at once, all or nothing, with one fence for
-- all of them; on one node, or on one node of a quorum. A waiter that cannot have all of them
-- joins every resource's fair queue, holding none of the locks, so nobody waits for it forever and
-- two callers asking for [a, b] and [b, a] cannot deadlock; in each queue it is served in turn.
-- KEYS[1..] resources: of each resource in turn its lock, fence, queue and queue expiry keys
--           (KEYS[4i-3] .. KEYS[4i], see mutex-acquire.lua)
-- ARGV[1] token: the new lease's token (the same in every lock key)
-- ARGV[2] ttl: in ms
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id, or '' for a single attempt that does not join the queues
-- ARGV[5] grace: in ms, how long past its next re-check a queued waiter keeps its place
-- ARGV[6] score: the waiter's queue score on a quorum (identical on every node), or '' for this node's time
-- ARGV[7] maxTtl: in ms on a quorum node (a node up for less does not count), or '' on one node
-- ARGV[8] holder: the holder's label, recorded in each lock's value with the grant's server time
-- Returns {1, fence, young?, runId?, now?}: all acquired; fence = max over the resources of
--           max(last fence + 1, server time in us), stored as every resource's last fence
--         {0, retry, young?, runId?, now?}: none acquired; retry = ms until looking again is worth it
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/lease.lua
--#include lib/queue.lua
local quorum = ARGV[7] ~= ''
local nowUs, nowMs = serverNow()
local now = string.format('%.0f', nowUs)
local token, ttl, waiter = ARGV[1], tonumber(ARGV[2]), ARGV[4]
local n = #KEYS / 4
for i = 0, n - 1 do
  if redis.call('EXISTS', KEYS[4 * i + 3]) == 1 then pruneQueue(KEYS[4 * i + 3], KEYS[4 * i + 4], nowMs) end
end
-- One score per waiter in every queue it stands in, or two waiters for overlapping sets could each
-- be first in one queue and wait for each other (a place pruned from one queue, say after a wake-up
-- capped it at the grace, and taken again later, would go to the back there only). So a waiter
-- that still stands in any of its queues keeps its earliest score in all of them (ZADD LT).
local score
if waiter ~= '' then
  for i = 0, n - 1 do
    local s = tonumber(redis.call('ZSCORE', KEYS[4 * i + 3], waiter))
    if s and (not score or s < score) then score = s end
  end
end
score = score and string.format('%.0f', score) or (ARGV[6] ~= '' and ARGV[6]) or now

local retry
local all = true
for i = 0, n - 1 do
  local lock, queue, expiry = KEYS[4 * i + 1], KEYS[4 * i + 3], KEYS[4 * i + 4]
  if quorum and waiter ~= '' then redis.call('ZADD', queue, 'LT', score, waiter) end
  local head = redis.call('ZRANGE', queue, 0, 0)[1]
  local holder = redis.call('GET', lock)
  local wait
  if holder and tokenOf(holder) ~= token then
    wait = redis.call('PTTL', lock)
    if wait < 0 then wait = ttl end
  elseif head and head ~= waiter then
    wait = math.max(0, (tonumber(redis.call('ZSCORE', expiry, head)) or nowMs) - nowMs)
  end
  if wait then
    all = false
    retry = math.min(retry or wait, wait)
  end
end

if all then
  local fence = nowUs
  for i = 0, n - 1 do
    local last = tonumber(redis.call('GET', KEYS[4 * i + 2]) or '0')
    if last >= fence then fence = last + 1 end
  end
  local stored = string.format('%.0f', fence)
  local value = leaseValue(token, nowMs, ARGV[8])
  for i = 0, n - 1 do
    redis.call('SET', KEYS[4 * i + 1], value, 'PX', ttl)
    redis.call('SET', KEYS[4 * i + 2], stored, 'PX', ARGV[3])
    if waiter ~= '' then
      if quorum then
        keepInLine(KEYS[4 * i + 3], KEYS[4 * i + 4], waiter, nowMs + ttl + tonumber(ARGV[5])) -- multi-confirm removes it
      else
        redis.call('ZREM', KEYS[4 * i + 3], waiter)
        redis.call('ZREM', KEYS[4 * i + 4], waiter)
      end
    end
  end
  return withNode({1, stored}, ARGV[7], nowUs)
end

if waiter ~= '' then
  for i = 0, n - 1 do
    redis.call('ZADD', KEYS[4 * i + 3], 'LT', score, waiter)
    keepInLine(KEYS[4 * i + 3], KEYS[4 * i + 4], waiter, nowMs + retry + tonumber(ARGV[5]))
  end
end
return withNode({0, retry}, ARGV[7], nowUs)
