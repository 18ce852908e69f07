-- lib/many.lua: what every batch script (acquire-many, release-many) does with each of its entries.

-- `decide(...)` for one entry of a batch, as its single script would run it; an error raised for
-- this entry alone (WRONGTYPE on one of its keys, a Lua error) becomes its reply entry
-- {false, text} (nil, then the error's text) instead of failing every other entry of the batch.
local function isolated(decide, ...)
  local ok, reply = pcall(decide, ...)
  if ok then return reply end
  if type(reply) == 'table' and reply.err then return {false, reply.err} end
  return {false, tostring(reply)}
end
