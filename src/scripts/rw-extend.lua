-- rw-extend: push a reader's or the writer's expiry to ttl from now, only if this token holds it.
-- KEYS[1] writer key
-- KEYS[2] readers key
-- ARGV[1] token of the lease
-- ARGV[2] new ttl in ms
-- ARGV[3] 'r' or 'w'
-- Returns 1: extended
--         0: not held by this token (expired, released, taken over): nothing was changed
if ARGV[3] == 'w' then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]))
if not expiry or expiry <= nowMs then return 0 end
redis.call('ZADD', KEYS[2], nowMs + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]
redis.call('PEXPIREAT', KEYS[2], last)
return 1
