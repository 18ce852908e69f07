-- lib/mutex.lua: one mutex acquisition, one release and one waiter leaving, shared by the single
-- scripts (mutex-acquire, mutex-release, mutex-leave) and their batch scripts (mutex-acquire-many,
-- mutex-release-many, mutex-leave-many), so that an entry of a batch is decided exactly as its
-- single script decides it. Keys and arguments come in as parameters: the scripts number their
-- KEYS differently. Uses lib/lease.lua and lib/queue.lua.

-- One attempt to take a fair mutex (see mutex-acquire.lua for the arguments and the reply).
-- `lonePlace`: on a quorum node, a free lock with nobody in line is taken without the waiter
-- writing its place in line (the mutex: its undo, mutex-undo, puts the place back where the
-- quorum does not settle on the grant); false: the grant keeps the place until the confirm.
-- `label`: the holder's label, recorded in the lock's value with the time (lib/lease.lua); nil for
-- a bare token (the drop-in of node-redlock keeps its layout).
local function acquireMutex(lock, fenceKey, queue, expiry, token, ttl, retention, waiter, grace, score, maxTtl, lonePlace, label)
  local nowUs, nowMs = serverNow()
  local quorum = maxTtl ~= ''
  local value = leaseValue(token, nowMs, label)

  local head = false
  local queued = redis.call('EXISTS', queue) == 1
  -- Nobody in line and the lock free: the common case in one call, and without the four writes of
  -- a place (queue, its expiry, their PEXPIREATs) that mutex-confirm would remove again at once.
  local free
  if quorum and lonePlace and not queued then
    if redis.call('SET', lock, value, 'NX', 'PX', ttl) then return withNode({1, nextFence(fenceKey, nowUs, retention)}, maxTtl, nowUs) end
    free = false
  end
  if queued then pruneQueue(queue, expiry, nowMs) end
  -- A line that this waiter alone stands in, as it started it here (no queue key before: then no
  -- queue expiry key either, the two hold the same waiters and expire together).
  local alone = false
  -- On a quorum node the waiter takes its place before the head is looked up: its score may be the
  -- lowest even if this node hears from it last (scores come from the client, not from arrival here).
  if quorum and waiter ~= '' then
    if score == '' then score = string.format('%.0f', nowUs) end
    redis.call('ZADD', queue, 'NX', score, waiter)
    alone = not queued
    queued = true
  end
  if alone then
    head = waiter
  elseif queued then
    head = redis.call('ZRANGE', queue, 0, 0)[1] or false
  end

  -- The common case in one call: nobody ahead in line, and the lock is free.
  if (not head or head == waiter) and free ~= false and redis.call('SET', lock, value, 'NX', 'PX', ttl) then
    local fence = nextFence(fenceKey, nowUs, retention)
    if quorum then
      -- Unlike on one node, the waiter keeps its place when granted: if the quorum fails and the
      -- grant is undone, it is still first in line here (mutex-confirm removes it on success).
      -- Otherwise two waiters that each won some nodes would swap places and split the vote forever.
      -- (A grant with nobody in line, above, writes no place: mutex-undo puts it back instead.)
      if waiter ~= '' then keepInLine(queue, expiry, waiter, nowMs + tonumber(ttl) + tonumber(grace), alone) end
      return withNode({1, fence}, maxTtl, nowUs)
    end
    if head then
      redis.call('ZREM', queue, waiter)
      redis.call('ZREM', expiry, waiter)
    end
    return {1, fence}
  end

  local holder = redis.call('GET', lock)
  if tokenOf(holder) == token then
    redis.call('PEXPIRE', lock, ttl)
    if quorum then
      if waiter ~= '' then keepInLine(queue, expiry, waiter, nowMs + tonumber(ttl) + tonumber(grace)) end
      return withNode({1, redis.call('GET', fenceKey) or '0'}, maxTtl, nowUs)
    end
    if head then
      redis.call('ZREM', queue, waiter)
      redis.call('ZREM', expiry, waiter)
    end
    return {1, tonumber(redis.call('GET', fenceKey))}
  end

  local retry
  local pttl = holder and redis.call('PTTL', lock) or -2
  if pttl >= 0 then
    retry = pttl
  elseif pttl == -1 then
    -- A key without expiry was written by someone else: look again after one ttl.
    retry = tonumber(ttl)
  else
    -- Free, but a waiter ahead of this one has its turn: until it counts as gone.
    retry = tonumber(redis.call('ZSCORE', expiry, head)) - nowMs
  end

  if waiter ~= '' then
    if not quorum then redis.call('ZADD', queue, 'NX', nowUs, waiter) end
    keepInLine(queue, expiry, waiter, nowMs + retry + tonumber(grace))
  end
  return withNode({0, retry}, maxTtl, nowUs)
end

-- A grant the quorum did not settle on is given back: the lock is deleted if `token` holds it, and
-- `waiter` ('' for none) is in line again where its acquire left no place (see mutex-undo.lua).
local function undoMutex(lock, queue, expiry, token, waiter, score, keep, channel, grace)
  local nowUs, nowMs = serverNow()
  local released = 0
  if tokenOf(redis.call('GET', lock)) == token then
    redis.call('DEL', lock)
    released = 1
  end
  if waiter ~= '' then
    if score == '' then score = string.format('%.0f', nowUs) end
    if redis.call('ZADD', queue, 'NX', score, waiter) == 1 then keepInLine(queue, expiry, waiter, nowMs + tonumber(keep)) end
  end
  if redis.call('EXISTS', lock) == 0 and redis.call('EXISTS', queue) == 1 then
    pruneQueue(queue, expiry, nowMs)
    wakeNext(queue, expiry, channel, tonumber(grace), nowMs)
  end
  return released
end

-- Deletes the lock if `token` holds it, then wakes the next waiter in line (see mutex-release.lua).
local function releaseMutex(lock, queue, expiry, token, channel, grace)
  if tokenOf(redis.call('GET', lock)) ~= token then return 0 end
  redis.call('DEL', lock)
  if redis.call('EXISTS', queue) == 1 then
    local _, nowMs = serverNow()
    pruneQueue(queue, expiry, nowMs)
    local refused = wakeNext(queue, expiry, channel, tonumber(grace), nowMs)
    if refused then return {1, refused} end
  end
  return 1
end

-- A waiter gives up its place; if the lock is free, the next one is woken (see mutex-leave.lua).
local function leaveMutex(lock, queue, expiry, waiter, channel, grace)
  local removed = redis.call('ZREM', queue, waiter)
  redis.call('ZREM', expiry, waiter)
  if redis.call('EXISTS', lock) == 0 then
    local _, nowMs = serverNow()
    wakeNext(queue, expiry, channel, tonumber(grace), nowMs)
  end
  return removed
end
