-- quorum-commit: write the quorum's fence back to one node before the lease is handed out, so
-- that every later majority (which shares a node with this one) starts above it.
-- KEYS[1] lock key
-- KEYS[2] fence key
-- KEYS[3] queue key (see quorum-acquire.lua)
-- KEYS[4] queue expiry key
-- ARGV[1] token of the lease
-- ARGV[2] the quorum's fence (the max over the nodes that granted the lock)
-- ARGV[3] fence retention in ms
-- ARGV[4] waiter id whose place in the queue is given up now that it holds the lock, or ''
-- Returns 1: written (the fence key now holds at least ARGV[2]) while this token holds the lock
--         0: this token no longer holds the lock here: nothing was changed
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local stored = tonumber(redis.call('GET', KEYS[2]) or '0')
local fence = tonumber(ARGV[2])
if fence > stored then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
if ARGV[4] ~= '' then
  redis.call('ZREM', KEYS[3], ARGV[4])
  redis.call('ZREM', KEYS[4], ARGV[4])
end
return 1
