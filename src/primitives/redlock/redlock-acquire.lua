-- redlock-acquire: one attempt to take node-redlock's lock of one resource or several (all or
-- nothing), in node-redlock's own layout, so that node-redlock processes and the drop-in exclude
-- each other: each resource's name is the lock key and holds the lease's value (SET NX PX). The
-- drop-in's own state lies beside it in the same cluster slot: the fence, and for one resource
-- the fair queue of the mutex (lib/mutex.lua decides exactly as mutex-acquire does).
-- KEYS[1..] resources: of each resource in turn its lock (the resource's name itself), fence, queue
--           and queueExpiry keys (KEYS[4i-3] .. KEYS[4i], see mutex-acquire.lua; one cluster slot)
-- ARGV[1] token: the new lease's value (the same in every lock key)
-- ARGV[2] ttl: in ms
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace: in ms, how long past its next re-check a queued waiter keeps its place
-- ARGV[6] score: the waiter's queue score on a quorum (identical on every node), or '' for this node's time
-- ARGV[7] maxTtl: in ms on a quorum node (see nodeInfo), or '' on one node
-- ARGV[8] db: the database that @sesamecare-oss/redlock's `db` setting selects, or '' for the client's
-- ARGV[9] recheck: in ms, how soon a waiter looks again while a lock is held by a value that is no
--         drop-in lease's (node-redlock's holders publish nothing when they release), or while
--         several resources are asked for (their waiters stand in no queue)
-- Returns {1, fence, young?, runId?, now?}: acquired; fence = max(last fence + 1, server time in us)
--           over the resources, stored as each one's last fence
--         {0, retry, young?, runId?, now?}: not acquired; retry = ms until looking again is worth it
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/mutex.lua
if ARGV[8] ~= '' then redis.call('SELECT', tonumber(ARGV[8])) end

-- Several resources, all or nothing, as node-redlock's lock script takes them (no queue).
local function acquireAll(token, ttl, retention, maxTtl)
  local nowUs = serverNow()
  for i = 1, #KEYS, 4 do
    local holder = redis.call('GET', KEYS[i])
    if holder and holder ~= token then
      local pttl = redis.call('PTTL', KEYS[i])
      return withNode({0, pttl >= 0 and pttl or tonumber(ttl)}, maxTtl, nowUs)
    end
  end
  local fence = nowUs
  for i = 1, #KEYS, 4 do fence = math.max(fence, tonumber(redis.call('GET', KEYS[i + 1]) or '0') + 1) end
  for i = 1, #KEYS, 4 do
    redis.call('SET', KEYS[i], token, 'PX', ttl)
    redis.call('SET', KEYS[i + 1], string.format('%.0f', fence), 'PX', retention)
  end
  return withNode({1, fence}, maxTtl, nowUs)
end

local reply
if #KEYS == 4 then
  local lock, fence, queue, expiry = unpack(KEYS)
  reply = acquireMutex(lock, fence, queue, expiry, ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
else
  reply = acquireAll(ARGV[1], ARGV[2], ARGV[3], ARGV[7])
end
if reply[1] == 0 then
  local recheck = tonumber(ARGV[9])
  local cap = #KEYS > 4
  for i = 1, #KEYS, 4 do
    -- A drop-in lease's value is a UUID; node-redlock's is 32 hex digits.
    local holder = redis.call('GET', KEYS[i])
    if holder and not string.match(holder, '^%x+%-%x+%-%x+%-%x+%-%x+$') then cap = true end
  end
  if cap and reply[2] > recheck then reply[2] = recheck end
end
return reply
