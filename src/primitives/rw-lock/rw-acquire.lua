-- rw-acquire: one attempt to take a read/write lock for reading (many at once) or writing (alone),
-- and the fence that goes with it (one counter for readers and writers); on one node, or on one
-- node of a quorum. A waiting writer keeps new readers out (no writer starvation).
-- KEYS[1] writer: string, the writer's lock value ("<token> <sinceMs> <extendedMs> <holder>",
--         lib/lease.lua), PX ttl
-- KEYS[2] readers: zset, reader token -> expiry (server ms)
-- KEYS[3] fence: string, the last fence handed out
-- KEYS[4] queue: zset, waiter id (ending ':r' or ':w') -> queue score (microseconds): FIFO order
-- KEYS[5] queueExpiry: zset, waiter id -> server ms after which the waiter counts as gone
-- KEYS[6] readerInfo: hash, reader token -> " <sinceMs> <extendedMs> <holder>" (lib/lease.lua)
-- ARGV[1] token: the new lease's token
-- ARGV[2] ttl: in ms
-- ARGV[3] retention: fence retention in ms
-- ARGV[4] waiter: waiter id, or '' for a single attempt that does not join the queue
-- ARGV[5] grace: in ms, how long past its next re-check a queued waiter keeps its place
-- ARGV[6] mode: 'r' to read, 'w' to write
-- ARGV[7] score: the waiter's queue score on a quorum (identical on every node), or '' for this node's time
-- ARGV[8] maxTtl: in ms on a quorum node (a node up for less does not count), or '' on one node
-- ARGV[9] holder: the holder's label, recorded with the grant's server time
-- Returns {1, fence, young?, runId?, now?}: acquired; on a quorum node the waiter keeps its place until rw-confirm
--         {0, retry, young?, runId?, now?}: refused; retry = ms until looking again is worth it
--         young, runId, now only on a quorum node: see withNode in lib/queue.lua
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/rw.lua
local quorum = ARGV[8] ~= ''
local nowUs, nowMs = serverNow()
local now = string.format('%.0f', nowUs)
local token, ttl, waiter, write = ARGV[1], tonumber(ARGV[2]), ARGV[4], ARGV[6] == 'w'

local readers = liveReaders(KEYS[2], KEYS[6], nowMs)
local writer = redis.call('GET', KEYS[1])

local function leaveLine()
  if waiter == '' then return end
  if quorum then
    keepInLine(KEYS[4], KEYS[5], waiter, nowMs + ttl + tonumber(ARGV[5])) -- rw-confirm removes it
  else
    redis.call('ZREM', KEYS[4], waiter)
    redis.call('ZREM', KEYS[5], waiter)
  end
end
local function holdReaders()
  local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]
  if last then
    redis.call('PEXPIREAT', KEYS[2], last)
    redis.call('PEXPIREAT', KEYS[6], last)
  end
end

-- A retry of an attempt whose reply was lost gets its grant back. A writer holds alone, so the last
-- fence is still its own; a reader gets a new fence: other readers may have been granted since, and
-- the last fence is then theirs (its first fence never reached it).
if (write and tokenOf(writer) == token) or (not write and redis.call('ZSCORE', KEYS[2], token)) then
  leaveLine()
  if write then
    redis.call('PEXPIRE', KEYS[1], ttl)
    return withNode({1, redis.call('GET', KEYS[3]) or '0'}, ARGV[8], nowUs)
  end
  redis.call('ZADD', KEYS[2], nowMs + ttl, token)
  holdReaders()
  return withNode({1, string.format('%.0f', nextFence(KEYS[3], nowUs, ARGV[3]))}, ARGV[8], nowUs)
end

if redis.call('EXISTS', KEYS[4]) == 1 then pruneQueue(KEYS[4], KEYS[5], nowMs) end
local score = ARGV[7]
if score == '' then score = now end
if quorum and waiter ~= '' then redis.call('ZADD', KEYS[4], 'NX', score, waiter) end
local rank = waiter ~= '' and redis.call('ZRANK', KEYS[4], waiter) or nil
local before = rank or redis.call('ZCARD', KEYS[4])
local ahead = before > 0 and redis.call('ZRANGE', KEYS[4], 0, before - 1) or {}

local free
if write then
  free = not writer and readers == 0 and #ahead == 0
else
  free = not writer
  for i = 1, #ahead do
    if isWriter(ahead[i]) then free = false break end
  end
end

if free then
  if write then
    redis.call('SET', KEYS[1], leaseValue(token, nowMs, ARGV[9]), 'PX', ttl)
  else
    redis.call('ZADD', KEYS[2], nowMs + ttl, token)
    if ARGV[9] ~= '' then redis.call('HSET', KEYS[6], token, leaseValue('', nowMs, ARGV[9])) end
    holdReaders()
  end
  leaveLine()
  return withNode({1, string.format('%.0f', nextFence(KEYS[3], nowUs, ARGV[3]))}, ARGV[8], nowUs)
end

local retry
if writer then
  retry = redis.call('PTTL', KEYS[1])
  if retry < 0 then retry = ttl end
elseif write and readers > 0 and #ahead == 0 then
  -- Every reader must be gone: the last one's expiry (a release wakes this writer sooner).
  retry = math.max(0, tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]) - nowMs)
else
  -- Someone ahead has the turn: until the first of them counts as gone.
  local gone = ahead[1] and tonumber(redis.call('ZSCORE', KEYS[5], ahead[1]))
  retry = gone and math.max(0, gone - nowMs) or ttl
end
if waiter ~= '' then
  redis.call('ZADD', KEYS[4], 'NX', score, waiter)
  keepInLine(KEYS[4], KEYS[5], waiter, nowMs + retry + tonumber(ARGV[5]))
end
return withNode({0, retry}, ARGV[8], nowUs)
