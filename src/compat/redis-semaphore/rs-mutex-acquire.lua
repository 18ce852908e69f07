-- rs-mutex-acquire: one attempt to take a redis-semaphore mutex in its own key layout (a string
-- `mutex:<key>` holding the identifier, PX lockTimeout: what redis-semaphore's SET NX writes and
-- its refresh and release check), and fencelock's fence for it, counted beside it.
-- KEYS[1] lock: string, the holder's identifier, PX lockTimeout (redis-semaphore's `mutex:<key>`)
-- KEYS[2] fence: string, the last fence handed out for this lock (same cluster slot as `lock`)
-- KEYS[3] upgraded: string, the identifier of the holder when it is an upgraded process (it wakes the waiters when it releases), PX as `lock`
-- KEYS[4] queue: zset, waiter -> server us when it first waited: the upgraded waiters' FIFO line
-- KEYS[5] queueExpiry: zset, waiter -> server ms after which it counts as gone
-- ARGV[1] identifier: the holder's identifier
-- ARGV[2] lockTimeout: in ms
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: this waiter's place in line (`1|<identifier>`), or '' to ignore the line (Redlock)
-- ARGV[5] remaining: ms this waiter still waits at most (its acquireTimeout left)
-- ARGV[6] retryInterval: in ms
-- ARGV[7] grace: ms a waiter keeps its place past its next attempt
-- Returns {1, fence}: acquired; fence = max(last fence + 1, server time in us)
--         {0, pttl, woken}: held by another; pttl: its remaining ms (-1 without expiry); woken: 1
--           when that holder is an upgraded process (its release publishes), 0 for an old one (poll);
--           a free lock that an upgraded waiter ahead in line has its turn for: pttl = ms until
--           that waiter counts as gone, woken = 1
--#include lib/queue.lua
local nowUs, nowMs = serverNow()
local waiter = ARGV[4]
if redis.call('EXISTS', KEYS[4]) == 1 then pruneQueue(KEYS[4], KEYS[5], nowMs) end
local ahead = 0
if waiter ~= '' then ahead = redis.call('ZRANK', KEYS[4], waiter) or redis.call('ZCARD', KEYS[4]) end
if ahead == 0 and redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])
  if waiter ~= '' then
    redis.call('ZREM', KEYS[4], waiter)
    redis.call('ZREM', KEYS[5], waiter)
  end
  return {1, string.format('%.0f', nextFence(KEYS[2], nowUs, ARGV[3]))}
end
local retry = redis.call('PTTL', KEYS[1])
local woken = 1
if retry == -2 then
  local head = redis.call('ZRANGE', KEYS[4], 0, 0)[1]
  retry = math.max(0, tonumber(redis.call('ZSCORE', KEYS[5], head) or nowMs) - nowMs)
elseif redis.call('GET', KEYS[3]) ~= redis.call('GET', KEYS[1]) then
  woken = 0
end
if waiter ~= '' then
  redis.call('ZADD', KEYS[4], 'NX', string.format('%.0f', nowUs), waiter)
  local next = math.min(tonumber(ARGV[5]), math.max(tonumber(ARGV[6]), retry))
  keepInLine(KEYS[4], KEYS[5], waiter, nowMs + next + tonumber(ARGV[7]))
end
return {0, retry, woken}
