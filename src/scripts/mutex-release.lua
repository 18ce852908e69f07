-- mutex-release: delete the lock if this token holds it, then wake the next waiter in line.
-- KEYS[1] lock key
-- KEYS[2] queue key (zset of waiters, see mutex-acquire.lua)
-- KEYS[3] queue expiry key
-- ARGV[1] token of the lease being released
-- ARGV[2] pub/sub channel prefix of the resource; a waiter id is "<instance>:<n>", and the message
--         goes to "<ARGV[2]>:<instance>" only, so no other process is woken for nothing
-- ARGV[3] grace in ms: the woken waiter keeps its place only this long unless it comes
-- Published on ARGV[2]: "<next waiter id>" or "<next waiter id> <the one after it>"; the second
--   is on standby: if the first is dead it loses its place after the grace, and the standby
--   looks again then, instead of the whole line waiting out the holder's ttl.
-- Returns 1: released
--         0: not held by this token (expired, or already released): nothing was changed
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('EXISTS', KEYS[2]) == 1 then
  local t = redis.call('TIME')
  local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', nowMs)
  for i = 1, #gone do redis.call('ZREM', KEYS[2], gone[i]) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', nowMs) end
  local line = redis.call('ZRANGE', KEYS[2], 0, 1)
  if line[1] then
    redis.call('ZADD', KEYS[3], 'XX', 'LT', nowMs + tonumber(ARGV[3]), line[1])
    local message = line[2] and (line[1] .. ' ' .. line[2]) or line[1]
    local first = string.match(line[1], '^[^:]*')
    redis.call('PUBLISH', ARGV[2] .. ':' .. first, message)
    local second = line[2] and string.match(line[2], '^[^:]*')
    if second and second ~= first then redis.call('PUBLISH', ARGV[2] .. ':' .. second, message) end
  end
end
return 1
