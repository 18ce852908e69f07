-- lib/term.lua: what an election's scripts tell its observers (inlined after lib/queue.lua, whose
-- `publish` it uses). A message names the state it reports first, so that copies from the nodes of
-- a quorum count as one (see topology/quorum/wake.ts) and distinct states never merge:
--   "<fence>.<version> <ttl> <value>"   the term `fence` leads, proclaimed `version` times, `value`
--   "<fence>.v"                         vacant since the term `fence` ended (resigned)
-- Observers order states by (fence, version, vacancy last), so a late message never moves them back.

-- The term held in `termKey` (a hash {token, fence, version, value}) as it stands now.
local function publishTerm(lockKey, termKey, channel)
  local t = redis.call('HMGET', termKey, 'fence', 'version', 'value')
  if not t[1] then return nil end
  return publish(channel, t[1] .. '.' .. t[2] .. ' ' .. redis.call('PTTL', lockKey) .. ' ' .. t[3])
end

local function publishVacant(termKey, channel)
  local fence = redis.call('HGET', termKey, 'fence')
  redis.call('DEL', termKey)
  if not fence then return nil end
  return publish(channel, fence .. '.v')
end
