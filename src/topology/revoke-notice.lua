-- revoke-notice: tells the holder of a revoked lease that it was revoked. Sent once the revoke's
-- release by token has ended the lock; the holder's locks instance listens on the channel while it
-- holds leases (one subscription per instance, not per lease) and aborts the lease's signal with
-- reason 'revoked'. In a Redis Cluster a PUBLISH reaches the subscribers of every node, so any node
-- may run it; it reads no key.
-- ARGV[1] channel: the revocation channel of the locks' key prefix (`<prefix>revoked`)
-- ARGV[2] token: the revoked lease's token
-- Returns {receivers}: the subscribers the message reached (in a cluster: on this node)
return {redis.call('PUBLISH', ARGV[1], ARGV[2])}
