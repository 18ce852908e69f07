-- lib/queue.lua: the fair queue and the fence, shared by the primitives' scripts (inlined by
-- scripts/embed-lua.mjs where a script says --#include lib/queue.lua). Keys come in as arguments:
-- the scripts number their KEYS differently. confirmHeld reads a lock value with tokenOf of
-- lib/lease.lua (include it first).

-- What a quorum counts a node by (maxTtl given): how long until this node has been up for maxTtl
-- (it does not count towards a quorum before), and its run_id (a change means it restarted).
-- Redis counts uptime on its wall clock: after the clock stepped back past the server's start it
-- is below zero, and the node counts as one that has just started (safe: it sits out).
-- INFO is asked once per script run, as TIME is (see serverNow): a batch script of 128 entries
-- reads the same uptime and run_id for each, as its entries run in the same instant.
local infoUptime, infoRunId
local function nodeInfo(maxTtl)
  if not infoUptime then
    local info = redis.call('INFO', 'server')
    infoUptime = math.max(0, tonumber(string.match(info, 'uptime_in_seconds:(-?%d+)')) or 0)
    infoRunId = string.match(info, 'run_id:(%x+)')
  end
  local young = math.max(0, tonumber(maxTtl) - infoUptime * 1000)
  return young, infoRunId
end

-- An acquire script's reply; on a quorum node (maxTtl given, not '') with the node's facts
-- appended: young and run_id (see nodeInfo), and the server time in us, from which the client
-- derives queue scores (not from its own clock). On one node the reply goes as it is, so a single
-- topology pays nothing for them. `reply` must have no nil element (no holes).
local function withNode(reply, maxTtl, nowUs)
  if maxTtl == '' then return reply end
  local young, runId = nodeInfo(maxTtl)
  local n = #reply
  reply[n + 1], reply[n + 2], reply[n + 3] = young, runId, string.format('%.0f', nowUs)
  return reply
end

-- A quorum's fence written back: the fence key holds at least `fence` from now on, for `retention` ms.
-- One SET ... GET in the common case (the quorum's fence is the largest, so at least this node's);
-- a second SET puts back a larger fence found there.
local function raiseFence(fenceKey, fence, retention)
  local stored = redis.call('SET', fenceKey, fence, 'PX', retention, 'GET')
  if stored and tonumber(stored) > tonumber(fence) then redis.call('SET', fenceKey, stored, 'PX', retention) end
end

-- The confirm step of a topology of several nodes: it settled on `fence` for the grant that `token`
-- holds in `lock` here, so the fence key holds at least that fence from now on, and the waiter gives
-- up the place in line it kept while the grant could still be undone. Returns 1, or 0 (nothing
-- changed) when `token` no longer holds `lock` here.
local function confirmHeld(lock, fenceKey, queue, expiry, token, fence, retention, waiter)
  if tokenOf(redis.call('GET', lock)) ~= token then return 0 end
  raiseFence(fenceKey, fence, retention)
  -- A grant made with nobody in line kept no place (acquireMutex's lonePlace): one look, not two removals.
  if waiter ~= '' and redis.call('EXISTS', queue) == 1 then
    redis.call('ZREM', queue, waiter)
    redis.call('ZREM', expiry, waiter)
  end
  return 1
end

-- Server time: microseconds for fences and queue scores, milliseconds for expiries. One TIME per
-- script run: a later call gets the same instant plus one microsecond per earlier call, so a batch
-- script of 128 entries asks for the time once, not 128 times, and the queue scores it gives in one
-- run still follow the order of its entries. (From Redis 7.2 a script sees one TIME throughout.)
local timeBase, timeCalls
local function serverNow()
  if timeBase then
    timeCalls = timeCalls + 1
  else
    local t = redis.call('TIME')
    timeBase, timeCalls = tonumber(t[1]) * 1000000 + tonumber(t[2]), 0
  end
  local us = timeBase + timeCalls
  return us, math.floor(us / 1000)
end

-- Waiters that stopped re-checking (killed, paused, partitioned) lose their place in line.
local function pruneQueue(queue, expiry, nowMs)
  local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', nowMs)
  if #gone == 0 then return end
  for i = 1, #gone, 1000 do redis.call('ZREM', queue, unpack(gone, i, math.min(i + 999, #gone))) end
  redis.call('ZREMRANGEBYSCORE', expiry, '-inf', nowMs)
end

-- Keeps `waiter` in line until `untilMs` unless it attempts again; the queue keys live as long
-- as their longest-lived waiter (`alone`: the waiter is the only one in line, so that is its own).
local function keepInLine(queue, expiry, waiter, untilMs, alone)
  redis.call('ZADD', expiry, untilMs, waiter)
  local last = alone and untilMs or redis.call('ZRANGE', expiry, -1, -1, 'WITHSCORES')[2]
  redis.call('PEXPIREAT', queue, last)
  redis.call('PEXPIREAT', expiry, last)
end

-- The next fence: max(last fence + 1, server time in us), stored for `retention` ms. One SET ...
-- GET in the common case (the clock is ahead of the last fence); a second SET only when it is not
-- (several grants within a microsecond, or the server clock stepped back).
local function nextFence(fenceKey, nowUs, retention)
  local fence = nowUs
  local last = tonumber(redis.call('SET', fenceKey, string.format('%.0f', nowUs), 'PX', retention, 'GET') or '0')
  if last >= nowUs then
    fence = last + 1
    redis.call('SET', fenceKey, string.format('%.0f', fence), 'PX', retention)
  end
  return fence
end

-- PUBLISH that does not fail the script: the lock state is already changed when it runs, so a
-- refusal (an ACL without PUBLISH on the channel) must reach the caller as a reply, not as a script
-- error that reads as if nothing had been done. Returns the refusal's text, or nil.
local function publish(channel, message)
  local reply = redis.pcall('PUBLISH', channel, message)
  if type(reply) == 'table' and reply.err then return reply.err end
  return nil
end

-- Wakes the first `count` waiters in line (the mutex: 1; a semaphore: as many as slots are free):
-- each keeps its place only `grace` ms unless it comes. Each message names one woken waiter and the
-- one after the last woken, who is on standby: if a woken one is dead it loses its place after the
-- grace, and the standby looks again then, instead of the whole line waiting out a ttl. A waiter
-- id is "<instance>:<n>"; a message goes to "<channel>:<instance>" only, so no other process is
-- woken for nothing. Returns nil, or the text of a refused PUBLISH.
local function wakeNext(queue, expiry, channel, grace, nowMs, count)
  count = count or 1
  if count < 1 then return nil end
  local line = redis.call('ZRANGE', queue, 0, count)
  if not line[1] then return nil end
  local standby = line[count + 1]
  local standbyInstance = standby and string.match(standby, '^[^:]*')
  local refused
  local standbyTold = false
  for i = 1, math.min(count, #line) do
    redis.call('ZADD', expiry, 'XX', 'LT', nowMs + grace, line[i])
    local message = standby and (line[i] .. ' ' .. standby) or line[i]
    local instance = string.match(line[i], '^[^:]*')
    refused = publish(channel .. ':' .. instance, message) or refused
    if instance == standbyInstance then standbyTold = true end
  end
  if standby and not standbyTold then
    refused = publish(channel .. ':' .. standbyInstance, line[1] .. ' ' .. standby) or refused
  end
  return refused
end
