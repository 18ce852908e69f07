-- fence-claim: raise the highest accepted fence of a data key to this fence, without writing the
-- value: the holder claims the key before it reads it, so that a stale holder that read it earlier
-- can no longer write it (see fencedSet in the README: claim, read, then fenced-set).
-- KEYS[1] guard: string, the highest fence accepted for the data key (same slot as fenced-set)
-- ARGV[1] fence: a decimal integer
-- ARGV[2] px: expiry of the guard in ms, or '0' for none
-- Returns 1: claimed, the guard now holds this fence (or held it already)
--         0: refused, a larger fence was accepted before; nothing was changed
--         {-2, type}: refused, the guard key holds something other than a fence; nothing was changed
--#include lib/guard.lua
local seen, other = readGuard(KEYS[1])
if seen == nil then return {-2, other} end
if seen and seen > tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '0' then
  redis.call('SET', KEYS[1], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1
