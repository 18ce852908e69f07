-- semaphore-extend: push a permit's expiry to ttl from now, only if this token still holds its slot.
-- KEYS[1] slot key of the permit
-- KEYS[2] limit key (lives as long as the longest permit)
-- ARGV[1] token of the permit (without its slot)
-- ARGV[2] new ttl in ms
-- Returns 1: extended
--         0: the slot is not held by this token (expired, released, taken over): nothing was changed
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return 1
