-- redlock-extend: push the expiry of every lock of a lease to ttl from now, only if its value
-- still holds all of them (node-redlock's extend script decides alike).
-- KEYS[1..] locks: each resource's lock key (its name)
-- ARGV[1] token: the lease's value
-- ARGV[2] ttl: the new ttl in ms
-- ARGV[3] db: the selected database, or '' (see redlock-acquire.lua)
-- Returns 1: extended
--         0: some lock is not held by this value: the lease is lost, nothing was changed
--#include lib/lease.lua
--#include lib/queue.lua
--#include lib/extend.lua
if ARGV[3] ~= '' then redis.call('SELECT', tonumber(ARGV[3])) end
return extendAll(1, #KEYS, ARGV[1], ARGV[2])
