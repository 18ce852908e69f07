-- lib/guard.lua: what a fenced write's guard key holds, read before anything is written (inlined
-- by scripts/embed-lua.mjs where fenced-set and fence-claim say --#include lib/guard.lua).

-- The highest fence accepted so far: a number, false when there is no guard yet, or nil and what
-- the key holds instead (its TYPE; 'string' for a string that is not a fence). A GET on another
-- type would fail the script halfway; a non-number would fail the comparison.
local function readGuard(key)
  local kind = redis.call('TYPE', key).ok
  if kind == 'none' then return false end
  if kind ~= 'string' then return nil, kind end
  local fence = tonumber(redis.call('GET', key))
  if fence == nil then return nil, 'string' end
  return fence
end
