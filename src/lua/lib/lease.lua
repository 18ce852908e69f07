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
  if not value then return value end
  return string.match(value, '^[^ ]*')
end

-- A new lease's lock value, granted at `nowMs` to the holder labelled `label`; a bare token where no
-- label is given (the drop-in of node-redlock, or a script called without one).
local function leaseValue(token, nowMs, label)
  if not label or label == '' then return token end
  local ms = string.format('%.0f', nowMs)
  return token .. ' ' .. ms .. ' ' .. ms .. ' ' .. label
end

-- The lock value of a lease extended at `nowMs`: its extension time moves, the rest stays. Nil for
-- a bare token (it records no time to move).
local function restamped(value, nowMs)
  local head, label = string.match(value, '^([^ ]+ %d+) %d+ (.*)$')
  if not head then return nil end
  return head .. ' ' .. string.format('%.0f', nowMs) .. ' ' .. label
end

-- A reader's facts (lib/rw.lua keeps them in a hash beside the readers zset, by token): its lock
-- value without the token, "<sinceMs> <extendedMs> <holder>", granted at `nowMs`; nil without a label.
local function readerFacts(nowMs, label)
  if not label or label == '' then return nil end
  local ms = string.format('%.0f', nowMs)
  return ms .. ' ' .. ms .. ' ' .. label
end

-- A reader's facts extended at `nowMs` (as restamped does for a lock value).
local function readerRestamped(facts, nowMs)
  local since, label = string.match(facts, '^(%d+) %d+ (.*)$')
  if not since then return nil end
  return since .. ' ' .. string.format('%.0f', nowMs) .. ' ' .. label
end
