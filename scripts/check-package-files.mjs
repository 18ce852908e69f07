#!/usr/bin/env node
// prepack: refuses to pack a package that lacks a file its package.json names (the exports map,
// main, module, types, bin), such as the declarations of a build that was cut short: npm packs
// whatever dist/ holds, without a word. Run in the package's directory (npm runs prepack there).
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'

/** Every path `pkg` names for consumers, with where it names it ("exports["./redlock"].require.types"). */
export function namedFiles(pkg) {
  const named = []
  const walk = (value, where) => {
    if (typeof value === 'string') named.push({ file: value, where })
    else if (value && typeof value === 'object') for (const [key, inner] of Object.entries(value)) walk(inner, `${where}[${JSON.stringify(key)}]`)
  }
  walk(pkg.exports, 'exports')
  for (const field of ['main', 'module', 'types', 'typings']) if (typeof pkg[field] === 'string') named.push({ file: pkg[field], where: field })
  if (typeof pkg.bin === 'string') named.push({ file: pkg.bin, where: 'bin' })
  else walk(pkg.bin, 'bin')
  return named
}

const dir = process.argv[2] ?? process.cwd()
const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
const missing = namedFiles(pkg).filter(({ file }) => !file.includes('*') && !existsSync(path.join(dir, file)))
if (missing.length > 0) {
  for (const { file, where } of missing) console.error(`${path.normalize(file)} is missing (package.json ${where} names it)`)
  console.error(`Not packing: ${missing.length} file(s) that package.json names are missing; run npm run build (a build cut short leaves dist/ without them)`)
  process.exit(1)
}
