/**
 * `sasl.jaas.config` as Kafka's JaasConfig parses it: `<LoginModule class> <flag> name=value name="value" ... ;`.
 */

export interface JaasEntry {
  readonly loginModule: string
  readonly flag: string
  readonly options: Readonly<Record<string, string>>
}

// A token: a quoted string (backslash escapes) or a run of characters other than blanks, '=', ';' and quotes.
const TOKEN = /\s*(?:"((?:[^"\\]|\\.)*)"|([^\s=;"]+)|(=)|(;))/y

/** The first login module of a JAAS line, or undefined when the text is not one. */
export function parseJaas (text: string): JaasEntry | undefined {
  const tokens = tokenize(text)
  if (tokens === undefined || tokens.length < 2) return undefined
  const [loginModule, flag] = tokens as [string, string]
  const options: Record<string, string> = {}
  for (let i = 2; i < tokens.length; i++) {
    if (tokens[i] === ';') break
    if (tokens[i + 1] !== '=' || tokens[i + 2] === undefined) return undefined
    options[tokens[i] as string] = tokens[i + 2] as string
    i += 2
  }
  return { loginModule, flag, options }
}

function tokenize (text: string): string[] | undefined {
  const tokens: string[] = []
  TOKEN.lastIndex = 0
  while (TOKEN.lastIndex < text.length) {
    if (text.slice(TOKEN.lastIndex).trim() === '') break
    const match = TOKEN.exec(text)
    if (match === null) return undefined
    tokens.push(match[1] === undefined ? (match[2] ?? match[3] ?? match[4] ?? '') : match[1].replace(/\\(.)/g, '$1'))
  }
  return tokens
}

/** Reads `name="value"` (or unquoted `name=value`) out of a JAAS login-module line. */
export function jaasOption (jaas: string, name: string): string | undefined {
  const parsed = parseJaas(jaas)
  if (parsed !== undefined) return parsed.options[name]
  const quoted = new RegExp(`(?:^|\\s)${name}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(jaas)
  if (quoted?.[1] !== undefined) return quoted[1].replace(/\\(.)/g, '$1')
  const bare = new RegExp(`(?:^|\\s)${name}\\s*=\\s*([^\\s;"]+)`).exec(jaas)
  return bare?.[1]
}
