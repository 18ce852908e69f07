export type Shape = { literal: number | '' } | { tuple: ({ literal: number | '' } | { name: string; rest: boolean; optional: boolean })[] }
export interface Header {
  keys: string[]
  moreKeys: string | undefined
  args: string[]
  moreArgs: string | undefined
  returns: Shape[]
}
/** The description of a script read from its header; throws on a header it cannot read (gaps, unnamed entries, no Returns). */
export function parseHeader(file: string, text: string): Header
/** The TypeScript type arguments of a script's binding: its KEYS, its ARGV and its reply. */
export function bindingTypes(header: Header): { keys: string; args: string; reply: string }
