/** The source of `file` (relative to `dir`) with its `--#include <file>` lines expanded. */
export function luaSource(dir: string, file: string): string
