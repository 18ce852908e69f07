-- fenced-set: write a value only if its fence is not older than any fence already accepted.
-- KEYS[1] data key
-- KEYS[2] guard key: string, the highest fence accepted for the data key (same hash slot)
-- ARGV[1] value
-- ARGV[2] fence (decimal integer)
-- ARGV[3] expiry of the data key and guard in ms, or '0' for none
-- Returns 1: written, the guard now holds this fence
--         0: refused, a larger fence was accepted before; nothing was changed
local fence = tonumber(ARGV[2])
local seen = redis.call('GET', KEYS[2])
if seen and tonumber(seen) > fence then return 0 end
if ARGV[3] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[2], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
return 1
