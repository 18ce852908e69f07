// What makes a control run count as showing the damage it exists to show, so that a control whose
// faults missed is run again (verify/main.ts, controlRuns). With server clock faults on, the quick
// tests require the control to show the clock's damage as well (fences not above earlier ones), so
// the retry must ask for it too: a control that showed a pause's damage but whose clock step found
// no fence key to expire once ended the run as if it had shown everything, and the test failed.
import { describe, expect, it } from 'vitest'
import { caughtDamage } from '../../verify/main.js'

const pause = '(a) 2 writes with an older fence were accepted'
const regression = '(a) 3 leases got a fence not above one granted before they asked'
const twice = '(a) 1 fences handed out twice'
const liveness = '(c) a was first acquired 4100 ms after the faults healed (bound 3000 ms)'

describe('caughtDamage: what a control run must show', () => {
  it('without clock faults: any safety violation, (a), and nothing else counts', () => {
    expect(caughtDamage({ violations: [pause] }, false)).toBe(true)
    expect(caughtDamage({ violations: [regression] }, false)).toBe(true)
    expect(caughtDamage({ violations: [liveness] }, false)).toBe(false)
    expect(caughtDamage({ violations: [] }, false)).toBe(false)
  })

  it("with clock faults: a safety violation and the clock step's own, fences out of order", () => {
    expect(caughtDamage({ violations: [pause] }, true)).toBe(false)
    expect(caughtDamage({ violations: [pause, liveness] }, true)).toBe(false)
    expect(caughtDamage({ violations: [pause, regression] }, true)).toBe(true)
    expect(caughtDamage({ violations: [twice] }, true)).toBe(true)
    expect(caughtDamage({ violations: [regression.replace('leases', 'permits')] }, true)).toBe(true)
    expect(caughtDamage({ violations: [] }, true)).toBe(false)
  })
})
