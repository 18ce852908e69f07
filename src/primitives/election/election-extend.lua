-- election-extend: the leader renews its term (version ''), or proclaims a new value in the same
-- term (version given: the term's count of proclamations, so a retried proclaim changes nothing).
-- KEYS[1] lock: the lock key
-- KEYS[2] term: the term hash (see election-acquire.lua)
-- ARGV[1] token: the term's lease token
-- ARGV[2] ttl: the new ttl in ms (a renewal), unused by a proclaim
-- ARGV[3] version: '' for a renewal; else the proclamation's number in this term (1, 2, ...)
-- ARGV[4] value: the proclaimed value ('' for a renewal)
-- ARGV[5] observers: the channel observers listen on
-- Returns 1: renewed (the lock value records the renewal's time), or proclaimed (observers told)
--         0: this token no longer leads: nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/term.lua
--#include lib/extend.lua
local value = redis.call('GET', KEYS[1])
if tokenOf(value) ~= ARGV[1] then return 0 end
if ARGV[3] == '' then
  pushExpiry(KEYS[1], value, ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return 1
end
if redis.call('HGET', KEYS[2], 'token') ~= ARGV[1] then return 0 end
if tonumber(ARGV[3]) > tonumber(redis.call('HGET', KEYS[2], 'version')) then
  redis.call('HSET', KEYS[2], 'version', ARGV[3], 'value', ARGV[4])
  publishTerm(KEYS[1], KEYS[2], ARGV[5])
end
return 1
