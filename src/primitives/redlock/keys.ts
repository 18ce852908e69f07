import { clusterSlot, hashTag } from '../../util/keys.js'

/**
 * Keys of one resource as the drop-in for node-redlock lays them out: the lock is the resource's
 * own name (node-redlock's layout, so that its processes and the drop-in see each other's locks),
 * and the drop-in's state (fence, fair queue, its expiry) lies beside it under a name that Redis
 * Cluster hashes to the same slot, so that every script runs on one node.
 */
export interface RedlockKeys {
  readonly lock: string
  readonly fence: string
  readonly queue: string
  readonly queueExpiry: string
  readonly channel: string
}

/** Per slot, a short name without braces that hashes to it (built once, when first needed). */
let slotTags: string[] | undefined

function tagOfSlot(slot: number): string {
  if (!slotTags) {
    const tags: string[] = []
    let found = 0
    for (let i = 0; found < 16_384; i++) {
      const tag = i.toString(36)
      const s = clusterSlot(tag)
      if (tags[s] === undefined) {
        tags[s] = tag
        found++
      }
    }
    slotTags = tags
  }
  return slotTags[slot]!
}

/**
 * The start of every key beside `resource`, in the slot of `resource`: the resource itself when
 * it has a hash tag (the suffix keeps it); `{resource}` when it has no brace that closes (the slot
 * of `{x}` is the slot of `x`); otherwise (a `}` that makes no tag, as in `a}b` or `{}x`), a tag
 * of that slot followed by the resource, which keeps the name distinct.
 */
export function besideBase(resource: string): string {
  if (hashTag(resource) !== resource) return resource
  if (!resource.includes('}')) return `{${resource}}`
  return `{${tagOfSlot(clusterSlot(resource))}}${resource}`
}

export function redlockKeys(resource: string): RedlockKeys {
  const base = `${besideBase(resource)}:fencelock:`
  return { lock: resource, fence: `${base}F`, queue: `${base}Q`, queueExpiry: `${base}X`, channel: `${base}W` }
}
