-- mutex-leave: a waiter gives up (timeout, abort, close); if the lock is free, wake the next one.
-- KEYS[1] lock key
-- KEYS[2] queue key (zset of waiters, see mutex-acquire.lua)
-- KEYS[3] queue expiry key
-- ARGV[1] waiter id
-- ARGV[2] pub/sub channel prefix of the resource; a waiter id is "<instance>:<n>", and the message
--         goes to "<ARGV[2]>:<instance>" only, so no other process is woken for nothing
-- ARGV[3] grace in ms: the woken waiter keeps its place only this long unless it comes
-- Published on ARGV[2] when the lock is free: as in mutex-release.lua
-- Returns 1: the waiter was in the queue
--         0: it was not
local removed = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 0 then
  local line = redis.call('ZRANGE', KEYS[2], 0, 1)
  if line[1] then
    local t = redis.call('TIME')
    local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    redis.call('ZADD', KEYS[3], 'XX', 'LT', nowMs + tonumber(ARGV[3]), line[1])
    local message = line[2] and (line[1] .. ' ' .. line[2]) or line[1]
    local first = string.match(line[1], '^[^:]*')
    redis.call('PUBLISH', ARGV[2] .. ':' .. first, message)
    local second = line[2] and string.match(line[2], '^[^:]*')
    if second and second ~= first then redis.call('PUBLISH', ARGV[2] .. ':' .. second, message) end
  end
end
return removed
