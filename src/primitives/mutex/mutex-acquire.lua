-- mutex-acquire: one attempt to take a fair mutex, and the fence that goes with it.
-- KEYS[1] lock key: string, the holder's token, expires with the lease (PX ttl)
-- KEYS[2] fence key: string, the last fence handed out for this resource
-- KEYS[3] queue key: zset, waiter id -> time it joined (server microseconds): FIFO order
-- KEYS[4] queue expiry key: zset, waiter id -> server ms after which the waiter counts as gone
-- ARGV[1] token of the new lease
-- ARGV[2] ttl in ms
-- ARGV[3] fence retention in ms (how long the fence key outlives its last use)
-- ARGV[4] waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace in ms: how long past its next re-check a queued waiter keeps its place
-- Returns {1, fence}: acquired, fence = max(last fence + 1, server time in microseconds); also
--                     when this token already holds the lock (a retry of an attempt whose reply
--                     was lost): the expiry is reset to ttl and the fence is the one it was given
--         {0, retry}: not acquired; retry = ms until it is worth trying again (holder's PTTL, or
--                     until the waiter ahead of this one counts as gone)
--#include lib/queue.lua
local nowUs, nowMs = serverNow()
local waiter = ARGV[4]

local head = false
if redis.call('EXISTS', KEYS[3]) == 1 then
  pruneQueue(KEYS[3], KEYS[4], nowMs)
  head = redis.call('ZRANGE', KEYS[3], 0, 0)[1] or false
end

-- The common case in one call: nobody ahead in line, and the lock is free.
if (not head or head == waiter) and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if head then
    redis.call('ZREM', KEYS[3], waiter)
    redis.call('ZREM', KEYS[4], waiter)
  end
  return {1, nextFence(KEYS[2], nowUs, ARGV[3])}
end

local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
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
  redis.call('ZADD', KEYS[3], 'NX', nowUs, waiter)
  keepInLine(KEYS[3], KEYS[4], waiter, nowMs + retry + tonumber(ARGV[5]))
end
return {0, retry}
