-- lib/extend.lua: one lease's extension, shared by each kind's extend script and its batch
-- (extend-many) script, so that a lease renewed in a batch gets exactly the answer its own extend
-- would give. Each returns 1 (extended) or 0 (not held by this token: nothing was changed).
-- Uses lib/lease.lua and serverNow of lib/queue.lua (include both before this file).

-- `key`, whose value `value` a lease holds, now expires `ttl` ms from now: its value records the
-- extension (one SET where PEXPIRE did it alone); a bare token's (node-redlock's layout) only expires later.
local function pushExpiry(key, value, ttl)
  if string.find(value, ' ', 1, true) then
    local _, nowMs = serverNow()
    return redis.call('SET', key, restamped(value, nowMs), 'PX', ttl)
  end
  redis.call('PEXPIRE', key, ttl)
end

-- A lock key (a mutex, a writer) held by `token`: its expiry is pushed to `ttl` ms from now.
local function extendHeld(key, token, ttl)
  local value = redis.call('GET', key)
  if tokenOf(value) ~= token then return 0 end
  pushExpiry(key, value, ttl)
  return 1
end

-- Keys first..last of KEYS (the locks of one all-or-nothing lease), all held by `token`: each
-- expiry is pushed to `ttl` ms from now; if one is not held, none is touched.
local function extendAll(first, last, token, ttl)
  local values = {}
  for i = first, last do
    values[i] = redis.call('GET', KEYS[i])
    if tokenOf(values[i]) ~= token then return 0 end
  end
  for i = first, last do pushExpiry(KEYS[i], values[i], ttl) end
  return 1
end

-- A semaphore permit: its slot held by `token` is extended, and the limit key lives at least as long.
local function extendPermit(slot, limit, token, ttl)
  if extendHeld(slot, token, ttl) == 0 then return 0 end
  if redis.call('PTTL', limit) < tonumber(ttl) then redis.call('PEXPIRE', limit, ttl) end
  return 1
end

-- A reader of a read/write lock, still live at `nowMs` (server ms, from serverNow in lib/queue.lua):
-- its expiry becomes nowMs + ttl, its facts (`info`, see lib/rw.lua) record the extension, and
-- the readers keys live as long as their longest-lived reader.
local function extendReader(readers, info, token, ttl, nowMs)
  local expiry = tonumber(redis.call('ZSCORE', readers, token))
  if not expiry or expiry <= nowMs then return 0 end
  redis.call('ZADD', readers, nowMs + tonumber(ttl), token)
  local facts = redis.call('HGET', info, token)
  if facts then redis.call('HSET', info, token, restamped(facts, nowMs)) end
  local last = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')[2]
  redis.call('PEXPIREAT', readers, last)
  redis.call('PEXPIREAT', info, last)
  return 1
end
