-- rw-extend-many: rw-extend for many leases of one side (all readers or all writers) in one call
-- (renewals that fall due together); each lease gets its own answer, exactly as if it had been
-- extended alone. One mode for the whole call: a primitive (rw-lock.ts) is one side, and the
-- renewals of one backend, which go out together, are all of that side.
-- KEYS[1..] leases: of each lease in turn its writer, readers and readerInfo keys (KEYS[3i-2] ..
--           KEYS[3i]), in order (all in one Redis Cluster slot)
-- ARGV[1] mode: 'r' or 'w', the side of every lease
-- ARGV[2..] tokens: of each lease in turn its token and its new ttl in ms (ARGV[2i], ARGV[2i+1])
-- Returns {...extended}: one answer per lease, in order: 1 when it was extended, 0 when its token
--         does not hold its side (expired, released, taken over): nothing was changed for it
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
local out = {}
local n = #KEYS / 3
if ARGV[1] == 'w' then
  for i = 1, n do out[i] = extendHeld(KEYS[3 * i - 2], ARGV[2 * i], ARGV[2 * i + 1]) end
  return out
end
-- Readers: one server time for the whole call, as one reader's extend reads it once.
local _, nowMs = serverNow()
for i = 1, n do out[i] = extendReader(KEYS[3 * i - 1], KEYS[3 * i], ARGV[2 * i], ARGV[2 * i + 1], nowMs) end
return out
