// The README's least-privilege ACL rule for fencelock's own keys and channels, as ACL SETUSER
// arguments, plus what the client libraries send when they connect (INFO, CLIENT, HELLO, PING,
// SELECT): the Redis user a careful operator gives fencelock.

/** The commands of the README's rule (mutex, semaphore, read/write, all-or-nothing, guards). */
export const LEAST =
  '+eval +evalsha +subscribe +unsubscribe +get +set +del +exists +pexpire +pexpireat +pttl +time +zadd +zcard +zcount +zrange +zrangebyscore +zrank +zrem +zremrangebyscore +zscore +publish +hget +hset +hdel'

/** ACL SETUSER arguments of a user `name` (password `pw`) limited to `prefix` (keys and channels) and `extraKeys` patterns. */
export function leastPrivilegeUser(name: string, prefix: string, extraKeys: readonly string[] = []): string[] {
  return [
    'ACL',
    'SETUSER',
    name,
    'on',
    '>pw',
    'resetkeys',
    `~${prefix}*`,
    ...extraKeys,
    'resetchannels',
    `&${prefix}*`,
    '-@all',
    ...LEAST.split(' '),
    '+info',
    '+client',
    '+hello',
    '+ping',
    '+select',
  ]
}
