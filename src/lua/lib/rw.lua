-- lib/rw.lua: what the read/write lock scripts share (inlined after lib/queue.lua). A waiter id
-- ends in ':r' (reader) or ':w' (writer); readers are a zset token -> expiry (server ms), so each
-- reader's lease expires alone; the writer is a string key with PX. Each reader's facts (when it
-- was granted and last extended, its holder's label: leaseValue of lib/lease.lua for token '') are
-- a hash `info`, token -> facts, that loses a reader when the zset does and expires with it.

local function isWriter(id) return string.sub(id, -2) == ':w' end

-- Readers whose expiry passed are gone (and their facts); returns how many are left.
local function liveReaders(readers, info, nowMs)
  for _, gone in ipairs(redis.call('ZRANGEBYSCORE', readers, '-inf', nowMs)) do
    redis.call('ZREM', readers, gone)
    redis.call('HDEL', info, gone)
  end
  return redis.call('ZCARD', readers)
end

-- How many waiters at the head of the line may go at once when the lock is free: the first one if
-- it is a writer, else every reader up to the first writer (at most 100 per wake-up).
local function headGroup(queue)
  local line = redis.call('ZRANGE', queue, 0, 99)
  if not line[1] then return 0 end
  if isWriter(line[1]) then return 1 end
  local n = 0
  for i = 1, #line do
    if isWriter(line[i]) then break end
    n = n + 1
  end
  return n
end

-- Wakes the head group when nobody holds the lock (a writer gone and no reader left). Returns nil,
-- or the text of a refused PUBLISH.
local function wakeFree(writer, readers, info, queue, expiry, channel, grace, nowMs)
  if redis.call('EXISTS', writer) == 1 or liveReaders(readers, info, nowMs) > 0 then return nil end
  if redis.call('EXISTS', queue) == 0 then return nil end
  pruneQueue(queue, expiry, nowMs)
  return wakeNext(queue, expiry, channel, grace, nowMs, headGroup(queue))
end
