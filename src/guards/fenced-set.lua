-- fenced-set: write a value only if its fence is not older than any fence already accepted.
-- KEYS[1] key: the data key
-- KEYS[2] guard: string, the highest fence accepted for the data key (same hash slot)
-- ARGV[1] value: the value to write
-- ARGV[2] fence: a decimal integer
-- ARGV[3] px: expiry of the data key and guard in ms, or '0' for none
-- Returns 1: written, the guard now holds this fence
--         0: refused, a larger fence was accepted before; nothing was changed
--         {-1, type}: refused, the data key holds another type (list, hash, ...); nothing was changed
--         {-2, type}: refused, the guard key holds something other than a fence; nothing was changed
--#include lib/guard.lua
local seen, other = readGuard(KEYS[2])
if seen == nil then return {-2, other} end
if seen and seen > tonumber(ARGV[2]) then return 0 end
-- SET with GET refuses a key of another type (WRONGTYPE) and leaves it as it was; plain SET would
-- replace it. The data key goes first, so a refusal writes no guard either.
local old
if ARGV[3] == '0' then
  old = redis.pcall('SET', KEYS[1], ARGV[1], 'GET')
else
  old = redis.pcall('SET', KEYS[1], ARGV[1], 'PX', ARGV[3], 'GET')
end
if wrongType(old) then return {-1, typeOf(KEYS[1])} end
if ARGV[3] == '0' then
  redis.call('SET', KEYS[2], ARGV[2])
else
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
return 1
