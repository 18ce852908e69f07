// Colour on a terminal only, never with NO_COLOR set (https://no-color.org); FORCE_COLOR forces it,
// as in commander and most Node tools. One decision for the help (commander strips the styles
// below when it is off) and for fencelock's own output.

/** True if output to a stream that `isTTY` (or not) may carry ANSI colour under `env`. */
export function useColor(env: NodeJS.ProcessEnv, isTTY: boolean): boolean {
  if (env.NO_COLOR || env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false') return false
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true
  return isTTY && env.TERM !== 'dumb'
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`
export const bold = sgr(1, 22)
export const dim = sgr(2, 22)
export const cyan = sgr(36, 39)
export const yellow = sgr(33, 39)

/** commander's help styles: titles bold, commands and flags in cyan, arguments yellow. */
export const helpStyle = {
  styleTitle: bold,
  styleCommandText: cyan,
  styleSubcommandText: cyan,
  styleOptionText: cyan,
  styleArgumentText: yellow,
} as const

/** Identity when colour is off. */
export const painter = (on: boolean) => (style: (text: string) => string) => (on ? style : (text: string) => text)
