-- lib/lease.lua: what a lock key of fencelock's own primitives holds (a mutex, a semaphore's slot,
-- a writer, an election's leader, each lock of an all-or-nothing lease):
--   "<token> <sinceMs> <extendedMs> <holder>"
-- the lease's token (never a space in it), when it was granted and when last extended (the server's
-- TIME, ms), and the holder's label (last, so it may hold spaces). One key, one value: recording
-- who holds a lock and since when costs no command and no key of its own. A value without a space
-- is a bare token (node-redlock's layout, which the drop-in keeps; a lock taken before labels): its
-- token is the whole value, and it records nothing else. Readers of a read/write lock keep the
-- same facts in a hash beside their zset (see lib/rw.lua). Include before lib/queue.lua.

-- The token of a lock value (false, for a missing key, stays false): what a script compares.
local function tokenOf(value)
  return value and string.match(value, '^[^ ]*')
end

-- A new lease's lock value, granted at `nowMs` to the holder labelled `label`; a bare token where no
-- label is given (the drop-in of node-redlock, or a script called without one). A reader's facts
-- (lib/rw.lua) are the value of token '': " <sinceMs> <extendedMs> <holder>".
local function leaseValue(token, nowMs, label)
  if (label or '') == '' then return token end
  local ms = string.format('%.0f', nowMs)
  return token .. ' ' .. ms .. ' ' .. ms .. ' ' .. label
end

-- A lock value (or a reader's facts) extended at `nowMs`: the extension time moves, the rest
-- stays; a value that records no time (a bare token) is returned as it is.
local function restamped(value, nowMs)
  local head, label = string.match(value, '^([^ ]* %d+) %d+ (.*)$')
  return head and head .. ' ' .. string.format('%.0f', nowMs) .. ' ' .. label or value
end
