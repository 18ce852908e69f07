// The source of a script as it is embedded and run: its .lua file with every `--#include <file>`
// line replaced by that file (relative to src/scripts). Lua has no includes; this keeps the
// shared queue and fence code in one place.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export function luaSource(dir, file) {
  return readFileSync(join(dir, file), 'utf8').replace(/^--#include (\S+)\n/gm, (_, lib) => luaSource(dir, lib))
}
