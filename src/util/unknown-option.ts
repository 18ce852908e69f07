// Misspelt option names (`{ tll: 5000 }`) are refused, not ignored: a dropped ttl or wait silently
// becomes the default. Pure and import-free, so the otel entry can share it.

/** Edit distance with adjacent transpositions (`tll` is one step from `ttl`), case-insensitive. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[s.length]![t.length]!
}

/** The known name closest to `name`, if one is close enough to be what was meant. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const d = distance(name, candidate)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  // Up to a third of the name wrong (at least one edit): `waitt`, `prefx`, `reentrnt`, `nodetimeout`.
  return bestDistance <= Math.max(1, Math.floor(name.length / 3)) ? best : undefined
}

/**
 * The first own key of `options` that is not in `known`, with the known name it is closest to;
 * undefined when every key is known.
 */
export function unknownOption(options: object, known: readonly string[]): { key: string; suggestion: string | undefined } | undefined {
  // for-in, not Object.keys: no array per call (this runs on every acquire).
  for (const key in options) {
    if (!known.includes(key) && Object.hasOwn(options, key)) return { key, suggestion: closestName(key, known) }
  }
  return undefined
}

/**
 * The message for the first unknown key of `options` (undefined when all are known):
 * "Unknown option `tll` in the acquire options: did you mean `ttl`? (the options are ...)".
 * `hints` says more than a suggestion for a name that is a known mistake there.
 */
export function unknownOptionMessage(options: object, known: readonly string[], of: string, hints?: Readonly<Record<string, string>>): string | undefined {
  const unknown = unknownOption(options, known)
  if (unknown === undefined) return undefined
  const why = hints?.[unknown.key] ?? (unknown.suggestion !== undefined ? `did you mean \`${unknown.suggestion}\`?` : undefined)
  return `Unknown option \`${unknown.key}\` in the ${of} options${why === undefined ? '' : `: ${why}`} (the options are ${known.join(', ')})`
}
