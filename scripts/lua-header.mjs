// The header of a Lua script is its only description: scripts/embed-lua.mjs generates each typed
// binding (named KEYS and ARGV, whether more follow, the reply shapes) from it, and refuses a
// header it cannot read, so header and binding cannot drift apart. The grammar, line by line of
// the leading comment block (lines indented under an entry, `--` and two or more spaces, continue it):
//   -- KEYS[i] name: text      the i-th key; i counts 1, 2, 3 ... without gaps; `name` is camelCase
//   -- KEYS[n..] name: text    any number of further keys after the n-1 named ones, last of the KEYS
//   -- ARGV[i] name: text      the same for the arguments (and `-- ARGV[n..] name: text`)
//   -- Returns shape: text     one line per reply shape; further shapes indented under it
// A shape is an integer, or `{e1, e2, ...}` of integers, '' (an empty string), names, `name?`
// (trailing elements present only when asked for) and a last `...name` (any number more).

/** The leading comment lines of a script's file, up to its first code or `--#include` line. */
function headerLines(text) {
  const lines = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('--') || line.startsWith('--#include')) break
    lines.push(line)
  }
  return lines
}

const NAME = /^[a-z][A-Za-z0-9]*$/

function parseShape(file, text) {
  if (/^-?\d+$/.test(text)) return { literal: Number(text) }
  const inner = /^\{(.*)\}$/.exec(text)
  if (!inner) throw new Error(`${file}: reply shape "${text}" is neither an integer nor {...}`)
  const elements = inner[1].split(',').map((part) => part.trim())
  return {
    tuple: elements.map((element, i) => {
      if (/^-?\d+$/.test(element)) return { literal: Number(element) }
      if (element === "''") return { literal: '' }
      const m = /^(\.\.\.)?([a-z][A-Za-z0-9]*)(\?)?$/.exec(element)
      if (!m) throw new Error(`${file}: reply element "${element}" of ${text} is not an integer, '', name, name? or ...name`)
      if (m[1] && i !== elements.length - 1) throw new Error(`${file}: ...${m[2]} must be the last element of ${text}`)
      if (m[1] && m[3]) throw new Error(`${file}: ${element} in ${text} cannot be both ... and ?`)
      return { name: m[2], rest: Boolean(m[1]), optional: Boolean(m[3]) }
    }),
  }
}

/** Checks that the optional elements of a tuple shape are its last (before a ...rest, if any). */
function checkOptional(file, text, shape) {
  if (!shape.tuple) return
  let seen = false
  for (const e of shape.tuple) {
    if (e.optional) seen = true
    else if (seen && !e.rest) throw new Error(`${file}: in ${text}, only trailing elements may be optional (name?)`)
  }
}

/** Entries `-- KEYS[i] name: ...` (or ARGV) in order: fixed names and the name of the rest, if any. */
function parseEntries(file, lines, what) {
  const fixed = []
  let more
  for (const line of lines) {
    if (!line.startsWith(`-- ${what}[`)) continue
    const m = /^-- (?:KEYS|ARGV)\[(\d+)(\.\.)?\] (.*)$/.exec(line)
    if (!m) throw new Error(`${file}: "${line}": write ${what}[i] or ${what}[n..] with a plain number`)
    const index = Number(m[1])
    const named = /^([^\s:]+): /.exec(m[3])
    if (!named || !NAME.test(named[1])) throw new Error(`${file}: "${line}": name the entry, e.g. "-- ${what}[${index}] someName: what it is"`)
    if (more !== undefined) throw new Error(`${file}: ${what}[${index}] follows ${what}[${fixed.length + 1}..], which must be the last ${what} entry`)
    if (index !== fixed.length + 1) throw new Error(`${file}: ${what}[${index}] where ${what}[${fixed.length + 1}] comes next (no gaps, in order)`)
    if (fixed.includes(named[1])) throw new Error(`${file}: ${what} name "${named[1]}" is used twice`)
    if (m[2]) more = named[1]
    else fixed.push(named[1])
  }
  return { fixed, more }
}

function parseReturns(file, lines) {
  const start = lines.findIndex((line) => line.startsWith('-- Returns '))
  if (start === -1) throw new Error(`${file}: the header says nothing of the reply: add "-- Returns <shape>: ..."`)
  const shapes = []
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]
    if (i > start && !/^--\s{2,}/.test(line)) break
    const text = i === start ? line.slice('-- Returns '.length) : line.replace(/^--\s+/, '')
    const m = /^(\{[^}]*\}|-?\d+): /.exec(text)
    if (!m) {
      if (i === start) throw new Error(`${file}: "${line}": the first reply shape goes right after "Returns", e.g. "-- Returns {1, fence}: ..."`)
      continue
    }
    const shape = parseShape(file, m[1])
    checkOptional(file, m[1], shape)
    shapes.push(shape)
  }
  return shapes
}

/** The description of the script in `text` (the .lua file, before its includes are inlined). */
export function parseHeader(file, text) {
  const lines = headerLines(text)
  const keys = parseEntries(file, lines, 'KEYS')
  const args = parseEntries(file, lines, 'ARGV')
  return { keys: keys.fixed, moreKeys: keys.more, args: args.fixed, moreArgs: args.more, returns: parseReturns(file, lines) }
}

const tupleType = (fixed, more, type) => `readonly [${[...fixed.map((n) => `${n}: ${type}`), ...(more ? [`...${more}: ${type}[]`] : [])].join(', ')}]`

function shapeType(shape) {
  if (!shape.tuple) return JSON.stringify(shape.literal)
  // A tuple's members are all labelled or none: literals get a label for their place.
  const members = shape.tuple.map((e, i) => {
    if (!e.name) return `${i === 0 ? 'code' : `at${i}`}: ${JSON.stringify(e.literal)}`
    return e.rest ? `...${e.name}: Reply[]` : `${e.name}${e.optional ? '?' : ''}: Reply`
  })
  return `readonly [${members.join(', ')}]`
}

/** The TypeScript type arguments of the binding: KEYS, ARGV, reply. */
export function bindingTypes(header) {
  return {
    keys: tupleType(header.keys, header.moreKeys, 'string'),
    args: tupleType(header.args, header.moreArgs, 'Arg'),
    reply: header.returns.map(shapeType).join(' | '),
  }
}
