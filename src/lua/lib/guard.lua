-- lib/guard.lua: refusing to write over what a fenced write must not overwrite (inlined by
-- scripts/embed-lua.mjs where fenced-set and fence-claim say --#include lib/guard.lua). No TYPE
-- call on the way to a write: the documented least-privilege ACL rule does not grant it.

-- True for a WRONGTYPE reply of redis.pcall; any other error is raised as redis.call would.
local function wrongType(reply)
  if type(reply) ~= 'table' or not reply.err then return false end
  if string.sub(reply.err, 1, 9) == 'WRONGTYPE' then return true end
  return error(reply)
end

-- What a key holds, for the refusal: its TYPE, or 'unknown' where the Redis user may not run TYPE.
local function typeOf(key)
  return redis.pcall('TYPE', key).ok or 'unknown'
end

-- The highest fence accepted so far: a number, false when there is no guard yet, or nil and what
-- the key holds instead ('string' for a string that is not a fence, which the comparison would
-- fail on halfway).
local function readGuard(key)
  local seen = redis.pcall('GET', key)
  if wrongType(seen) then return nil, typeOf(key) end
  if not seen then return false end
  local fence = tonumber(seen)
  if fence == nil then return nil, 'string' end
  return fence
end
