-- lib/extend.lua: one lease's extension, shared by each kind's extend script and its batch
-- (extend-many) script, so that a lease renewed in a batch gets exactly the answer its own extend
-- would give. Each returns 1 (extended) or 0 (not held by this token: nothing was changed).

-- A lock key (a mutex, a writer) held by `token`: its expiry is pushed to `ttl` ms from now.
local function extendHeld(key, token, ttl)
  if redis.call('GET', key) ~= token then return 0 end
  redis.call('PEXPIRE', key, ttl)
  return 1
end

-- Keys first..last of KEYS (the locks of one all-or-nothing lease), all held by `token`: each
-- expiry is pushed to `ttl` ms from now; if one is not held, none is touched.
local function extendAll(first, last, token, ttl)
  for i = first, last do
    if redis.call('GET', KEYS[i]) ~= token then return 0 end
  end
  for i = first, last do redis.call('PEXPIRE', KEYS[i], ttl) end
  return 1
end

-- A semaphore permit: its slot held by `token` is extended, and the limit key lives at least as long.
local function extendPermit(slot, limit, token, ttl)
  if extendHeld(slot, token, ttl) == 0 then return 0 end
  if redis.call('PTTL', limit) < tonumber(ttl) then redis.call('PEXPIRE', limit, ttl) end
  return 1
end

-- A reader of a read/write lock, still live at `nowMs` (server ms, from serverNow in lib/queue.lua):
-- its expiry becomes nowMs + ttl, and the readers key lives as long as its longest-lived reader.
local function extendReader(readers, token, ttl, nowMs)
  local expiry = tonumber(redis.call('ZSCORE', readers, token))
  if not expiry or expiry <= nowMs then return 0 end
  redis.call('ZADD', readers, nowMs + tonumber(ttl), token)
  local last = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')[2]
  redis.call('PEXPIREAT', readers, last)
  return 1
end
