// `await using` in a module of its own: scenario.mjs imports it in one step, so a runtime that
// cannot parse the syntax fails that step alone (a SyntaxError at import), not the whole run.

/** Acquires `resource` with `await using`; the block's end must release it. */
export async function holdWithAwaitUsing(locks, resource) {
  let insideHeld = false
  let fence = 0
  {
    await using lease = await locks.acquire(resource, { ttl: 5_000 })
    insideHeld = lease.held
    fence = lease.fence
  }
  return { insideHeld, fence }
}
