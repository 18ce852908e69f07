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
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local nowMs = math.floor(nowUs / 1000)
local waiter = ARGV[4]

-- Waiters that stopped re-checking (killed, paused, partitioned) lose their place in line.
local head = false
if redis.call('EXISTS', KEYS[3]) == 1 then
  local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowMs)
  for i = 1, #gone do redis.call('ZREM', KEYS[3], gone[i]) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', nowMs) end
  head = redis.call('ZRANGE', KEYS[3], 0, 0)[1] or false
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

local pttl = holder and redis.call('PTTL', KEYS[1]) or -2
if pttl == -2 and (not head or head == waiter) then
  local fence = math.max(tonumber(redis.call('GET', KEYS[2]) or '0') + 1, nowUs)
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('SET', KEYS[2], string.format('%.0f', fence), 'PX', ARGV[3])
  if head then
    redis.call('ZREM', KEYS[3], waiter)
    redis.call('ZREM', KEYS[4], waiter)
  end
  return {1, fence}
end

local retry
if pttl >= 0 then
  retry = pttl
elseif pttl == -1 then
  -- A key without expiry was written by someone else: look again after one ttl.
  retry = tonumber(ARGV[2])
else
  retry = tonumber(redis.call('ZSCORE', KEYS[4], head)) - nowMs
end

if waiter ~= '' then
  redis.call('ZADD', KEYS[3], 'NX', nowUs, waiter)
  redis.call('ZADD', KEYS[4], nowMs + retry + tonumber(ARGV[5]), waiter)
  local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')[2]
  redis.call('PEXPIREAT', KEYS[3], last)
  redis.call('PEXPIREAT', KEYS[4], last)
end
return {0, retry}
