/**
 * Every command-line value is checked here, while commander parses, so a bad flag exits 2 (bad input) before
 * any file is read or cluster contacted. Each parser throws commander's InvalidArgumentError, which names the flag.
 *
 * Options that take several values are comma lists or repeated flags (`--clusters a,b` or `--clusters a --clusters b`),
 * never commander's variadic `<x...>`, which swallows the file argument (`validate --clusters backup mm2.properties`).
 * The older space-separated spelling keeps working through joinListValues().
 */
import { InvalidArgumentError, type Command } from 'commander'
import type { OffsetSpecOptions } from '../failover/offset-spec.ts'
import type { TopicScope } from '../failover/offsets-set.ts'
import { compileJavaRegexList } from '../policy/java-regex.ts'

/** `--clusters a,b --clusters c` → ['a', 'b', 'c']; an empty item is an error. */
export function parseList (value: string, previous: readonly string[] | undefined): string[] {
  const items = value.split(',').map(s => s.trim())
  if (items.some(s => s === '')) throw new InvalidArgumentError(`'${value}' has an empty item: give names separated by commas, e.g. a,b`)
  return [...(previous ?? []), ...items]
}

/** A number of seconds above 0 (or 0 too when `zero` says what it means); 'abc', '', '-1' and 'Infinity' are errors. */
export function secondsParser (zero?: string): (value: string) => number {
  return value => {
    const seconds = Number(value)
    const accepted = value.trim() !== '' && Number.isFinite(seconds) && (seconds > 0 || (zero !== undefined && seconds === 0))
    if (!accepted) throw new InvalidArgumentError(`'${value}' is not a number of seconds ${zero === undefined ? 'above 0' : `(0 or more; 0 = ${zero})`}`)
    return seconds
  }
}

/** A TCP port, 0..65535 (0: any free port). */
export function parsePort (value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) > 65535) throw new InvalidArgumentError(`'${value}' is not a TCP port (0 to 65535)`)
  return Number(value)
}

/** A whole number 0 or more (partitions, offsets). */
export function parseNonNegative (value: string): number {
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`'${value}' is not a whole number 0 or more`)
  return Number(value)
}

/** A Java regex as MM2's filters take it; kept as text, compiled again where it is used. */
export function parseJavaRegex (value: string): string {
  try {
    compileJavaRegexList([value])
  } catch (err) {
    throw new InvalidArgumentError(`'${value}' is not a Java regex kmirror can use: ${err instanceof Error ? err.message : String(err)}`)
  }
  return value
}

/**
 * The older spelling `--clusters a b mm2.properties` (a commander variadic list): the words after a list flag
 * up to the next flag are its values, except the last one when the command's file has not been given yet (it
 * is the file). Rewritten to `--clusters a,b mm2.properties`. `valueFlags` are the flags that take one value.
 */
export function joinListValues (tokens: readonly string[], listFlags: ReadonlySet<string>, valueFlags: ReadonlySet<string>): string[] {
  const out: string[] = []
  let fileGiven = false
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (token === '--') return [...out, ...tokens.slice(i)]
    if (listFlags.has(token)) {
      let end = i + 1
      while (end < tokens.length && !tokens[end]!.startsWith('-')) end++
      const words = tokens.slice(i + 1, end)
      const lastIsFile = !fileGiven && words.length > 1 && !hasPositional(tokens.slice(end), listFlags, valueFlags)
      const values = lastIsFile ? words.slice(0, -1) : words
      if (values.length > 0) out.push(token, values.join(','))
      else out.push(token)
      out.push(...words.slice(values.length))
      if (values.length < words.length) fileGiven = true
      i = end - 1
    } else if (valueFlags.has(token)) {
      out.push(token, ...tokens.slice(i + 1, i + 2))
      i++
    } else {
      if (!token.startsWith('-')) fileGiven = true
      out.push(token)
    }
  }
  return out
}

/** Whether TOKENS hold a word that is neither a flag nor a flag's value. */
function hasPositional (tokens: readonly string[], listFlags: ReadonlySet<string>, valueFlags: ReadonlySet<string>): boolean {
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!
    if (token === '--') return i + 1 < tokens.length
    if (valueFlags.has(token)) i++
    else if (listFlags.has(token)) while (i + 1 < tokens.length && !tokens[i + 1]!.startsWith('-')) i++
    else if (!token.startsWith('-')) return true
  }
  return false
}

/** The subcommand ARGS name (`offsets set` included): its list flags and one-value flags, for joinListValues(). */
export function rewriteListSpelling (program: Command, args: readonly string[]): string[] {
  let command = program
  let at = 0
  for (; at < args.length; at++) {
    const sub = command.commands.find(c => c.name() === args[at])
    if (sub === undefined) break
    command = sub
  }
  const lists = new Set<string>()
  const values = new Set<string>()
  for (const option of command.options) {
    if (option.long === undefined || !(option.required || option.optional)) continue
    if (option.parseArg === parseList) lists.add(option.long)
    else values.add(option.long)
  }
  return lists.size === 0 ? [...args] : [...args.slice(0, at), ...joinListValues(args.slice(at), lists, values)]
}

/** preAction hook of the commands with --from and --to: the same alias twice is a flag error (exit 2), said as such. */
export function checkDistinctClusters (command: Command): void {
  const { from, to } = command.opts<{ from?: string, to?: string }>()
  if (from !== undefined && from === to) {
    command.error(`error: --from and --to are both '${from}': give the two different clusters of a flow (--from the source, --to the target)`, { exitCode: 2, code: 'kmirror.sameCluster' })
  }
}

/** `--topic T` or `--topic T:0,2`, repeatable (kafka-consumer-groups.sh's form); topic names cannot hold ':'. */
export function parseTopicScope (value: string, previous: readonly TopicScope[] | undefined): TopicScope[] {
  const at = value.indexOf(':')
  const topic = at < 0 ? value : value.slice(0, at)
  if (topic.trim() === '') throw new InvalidArgumentError(`'${value}' names no topic: write T or T:0,2`)
  if (at < 0) return [...(previous ?? []), { topic }]
  const partitions = value.slice(at + 1).split(',').map(p => p.trim())
  if (partitions.some(p => !/^\d+$/.test(p))) throw new InvalidArgumentError(`'${value}': partitions must be whole numbers 0 or more separated by commas, e.g. ${topic}:0,2`)
  return [...(previous ?? []), { topic, partitions: partitions.map(Number) }]
}

/** The flags of `offsets set` as commander gives them. */
export interface OffsetsSetFlags extends Omit<OffsetSpecOptions, 'fromFile'> {
  readonly cluster: string
  readonly group?: string[]
  readonly allGroups?: boolean
  readonly topic?: TopicScope[]
  readonly allTopics?: boolean
  readonly partition?: string
  /** The file's path; `OffsetSpecOptions.fromFile` holds it read and parsed. */
  readonly fromFile?: string
  readonly export?: boolean
  readonly dryRun?: boolean
  readonly execute?: boolean
  readonly apply?: boolean
  readonly force?: boolean
  readonly json?: boolean
  readonly timeout: string
}

/** preAction hook of `offsets set`: --dry-run with --execute/--apply asks for two things at once. */
export function checkDryRunOrExecute (command: Command): void {
  const { dryRun, execute, apply, export: csv, json } = command.opts<OffsetsSetFlags>()
  if (dryRun === true && (execute === true || apply === true)) {
    command.error(`error: --dry-run and ${execute === true ? '--execute' : '--apply'} contradict each other: give --dry-run (or nothing) to print the plan, --execute to write it`, { exitCode: 2, code: 'kmirror.dryRunAndExecute' })
  }
  if (csv === true && json === true) command.error('error: --export prints CSV and --json prints JSON: give one of them', { exitCode: 2, code: 'kmirror.exportAndJson' })
}
