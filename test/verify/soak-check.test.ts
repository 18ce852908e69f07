// The soak's per-minute check (verify/soak-check.ts): a lease lost after its holder asked to
// release it is told apart from one lost while held.
import { describe, expect, it } from 'vitest'
import type { HistoryEvent } from '../../verify/history.js'
import { checkWindow } from '../../verify/soak-check.js'

const op = (type: 'invoke' | 'ok', f: 'acquire' | 'release', pid: number, fence: number, time: number): HistoryEvent =>
  ({
    kind: 'op',
    type,
    f,
    worker: 'w0',
    pid,
    resource: 'single:m0',
    time,
    fence,
    ...(f === 'acquire' && type === 'ok' ? { value: { deadline: time + 2_000, waited: 1 } } : {}),
  }) as HistoryEvent
const lost = (pid: number, fence: number, time: number): HistoryEvent => ({
  kind: 'lost',
  worker: 'w0',
  pid,
  resource: 'single:m0',
  fence,
  reason: 'refused',
  time,
})

describe('the soak check of lost leases', () => {
  it('marks a lease lost after its release was asked for (a resent release finding the lock gone), not one lost while held', () => {
    const events = [
      op('invoke', 'acquire', 1, 0, 0),
      op('ok', 'acquire', 1, 1, 10),
      op('invoke', 'release', 1, 1, 50),
      lost(1, 1, 120),
      op('invoke', 'acquire', 2, 0, 200),
      op('ok', 'acquire', 2, 2, 210),
      lost(2, 2, 300),
    ]
    const fault = { topology: 'single' as const, label: 'single reconnect', start: 100, end: 110 }
    const check = checkWindow(events, { from: 0, end: 1_000, ttl: 2_000, wait: 4_000, faults: [fault] })
    expect(check.lost).toEqual([
      { resource: 'single:m0', reason: 'refused', fault: 'single reconnect', atRelease: true },
      { resource: 'single:m0', reason: 'refused', fault: 'single reconnect' },
    ])
  })
})
