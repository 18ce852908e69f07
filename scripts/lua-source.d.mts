/** Every script's file (not the fragments under src/lua/lib/), by file name, sorted by name. */
export function luaFiles(): { file: string; path: string }[]
/** The source of the script at `path` with its `--#include <file>` lines expanded. */
export function luaSource(path: string): string
