import { delegatingLease, lossOf, type Lease } from '../../runtime/lease.js'
import { acquireOptionsOf, type AcquireOptions } from '../../runtime/options.js'
import { multiName, multiResources } from './multi.js'
import { checkResource, describeValue } from '../../util/validate.js'
import { InvalidArgumentError } from '../../errors/errors.js'

/** A lease on several resources at once (`acquireAll`): one `Lease`, plus each resource's fence. */
export interface MultiLease extends Lease {
  /**
   * The locked resources as one name for messages and telemetry: each name JSON-escaped, joined by
   * `", "` (`a", "b`), so that a message reads `lock "a", "b"`. Use `resources` for the names.
   */
  readonly resource: string
  /** The locked resources, distinct and sorted (the order they are always taken in), as the caller spelled them. */
  readonly resources: readonly string[]
  /** Each resource's fence: larger than every earlier acquisition's fence of that resource. */
  readonly fences: Readonly<Record<string, number>>
}

// The lease of each resource of a lease made of several (taken one by one, or partly re-entered).
const parts = new WeakMap<MultiLease, ReadonlyMap<string, Lease>>()

/**
 * The lease of each resource of `lease`, under that resource's name and with its fence: what a
 * nested acquisition of one of them re-enters.
 */
export function leasesOf(lease: MultiLease): ReadonlyMap<string, Lease> {
  return parts.get(lease) ?? new Map(lease.resources.map((r) => [r, delegatingLease(lease, { resource: r, fence: lease.fences[r]! })]))
}

/** The distinct resource names, validated and sorted: one global order, so [a, b] and [b, a] are one lock. */
export function checkResources(resources: unknown): string[] {
  if (!Array.isArray(resources) || resources.length === 0) {
    throw new InvalidArgumentError(`Expected \`resources\` to be a non-empty array of resource names, got ${describeValue(resources)}`)
  }
  if (resources.length > 100) throw new InvalidArgumentError(`Expected at most 100 resources, got ${resources.length}`)
  return [...new Set(resources.map((r) => checkResource(r)))].sort()
}

/** The lease of an atomic acquisition (one script took every lock): one fence for all. */
export function atomicLease(lease: Lease): MultiLease {
  const resources = multiResources(lease.resource)
  const fences = Object.fromEntries(resources.map((r) => [r, lease.fence]))
  return delegatingLease(lease, { resources, fences })
}

/**
 * A signal that aborts with the first of `signals` to abort, and the way to stop listening to them.
 * Not `AbortSignal.any`: Node keeps a signal made by it alive while it has a listener and has not
 * aborted, and a released lease's signal never aborts, so every released lease whose signal an
 * application listened to (and the parts and state it holds) stayed in memory for good.
 */
function anyOf(signals: readonly AbortSignal[]): { signal: AbortSignal; unlisten(): void } {
  const controller = new AbortController()
  const unlisten = () => {
    for (const s of signals) s.removeEventListener('abort', onAbort)
  }
  function onAbort(this: AbortSignal): void {
    unlisten()
    controller.abort(this.reason)
  }
  const aborted = signals.find((s) => s.aborted)
  if (aborted) controller.abort(aborted.reason)
  else for (const s of signals) s.addEventListener('abort', onAbort)
  return { signal: controller.signal, unlisten }
}

/**
 * Several leases (of one resource each, or multi leases) as one lease of `resources`, the sorted
 * names they cover: its signal aborts when any of them is lost, extend and release act on all of them.
 */
export function combinedLease(resources: readonly string[], leases: readonly (Lease | MultiLease)[]): MultiLease {
  const byResource = new Map<string, Lease>()
  for (const l of leases) {
    if ('fences' in l) for (const [r, part] of leasesOf(l)) byResource.set(r, part)
    else byResource.set(l.resource, l)
  }
  const fences = Object.fromEntries(resources.map((r) => [r, byResource.get(r)!.fence]))
  const { signal, unlisten } = anyOf(leases.map((l) => l.signal))
  const lost = () => leases.find((l) => !l.held)
  const releaseAll = async () => {
    unlisten()
    return (await Promise.all(leases.map((l) => l.release()))).every(Boolean)
  }
  const lease: MultiLease = {
    resource: multiName(resources),
    token: leases.map((l) => l.token).join(' '),
    fence: Math.max(...leases.map((l) => l.fence)),
    resources,
    fences,
    signal,
    get deadline() {
      return Math.min(...leases.map((l) => l.deadline))
    },
    get remaining() {
      return Math.min(...leases.map((l) => l.remaining))
    },
    get held() {
      return leases.every((l) => l.held)
    },
    get ttl() {
      return Math.min(...leases.map((l) => l.ttl))
    },
    async extend(ttl?: number) {
      await Promise.all(leases.map((l) => l.extend(ttl)))
    },
    release: releaseAll,
    onAtRisk(listener) {
      const offs = leases.map((l) => l.onAtRisk(listener))
      return () => offs.forEach((off) => off())
    },
    async [Symbol.asyncDispose]() {
      const gone = lost()
      await releaseAll().catch(() => {})
      if (gone) throw lossOf(gone)
    },
  }
  parts.set(lease, byResource)
  return lease
}

/**
 * Takes `resources` one after another in their sorted order, each with what is left of the wait,
 * and gives back everything taken if one cannot be had: all or nothing, and no deadlock, since
 * every caller takes them in the same order.
 */
export async function acquireOrdered(
  resources: readonly string[],
  options: AcquireOptions,
  acquireOne: (resource: string, options: AcquireOptions) => Promise<Lease>,
  defaultWait: number,
): Promise<MultiLease> {
  const started = performance.now()
  const wait = options.wait ?? defaultWait
  const taken: Lease[] = []
  try {
    for (const resource of resources) {
      const left = wait === Infinity ? Infinity : Math.max(0, Math.floor(wait - (performance.now() - started)))
      taken.push(await acquireOne(resource, acquireOptionsOf(options.ttl, left, options.signal, options.autoExtend, options.maxHold)))
    }
  } catch (err) {
    await Promise.allSettled(taken.map((l) => l.release()))
    throw err
  }
  return combinedLease(resources, taken)
}

/**
 * The multi lock's joined name (multiName of names that checkResources accepted): each part obeys
 * the resource rules, the whole may be longer than one resource name may be.
 */
export function checkMultiName(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new InvalidArgumentError(`Expected the resources of an all-or-nothing lock, got ${describeValue(value)}`)
  return value
}
