/**
 * `kmirror offsets translate <file> --from A --to B --group G`: per partition, the group's committed offset on
 * A, the exactly translated offset on B, and whether it is exact. Reads only.
 */
import { reportCommandFailure } from './unexpected-errors.ts'
import { loadCheckedConfig, loadInput } from './config-input.ts'
import { ExitCodes } from '../errors.ts'
import { findFlow, translateGroup } from '../runtime/offsets.ts'
import { writeJson } from '../redactor.ts'

export interface TranslateOptions {
  readonly from: string
  readonly to: string
  readonly group: string
  readonly json: boolean
}

export async function translateCommand (file: string, options: TranslateOptions): Promise<number> {
  const input = loadInput(() => loadCheckedConfig(file, config => findFlow(config, options.from, options.to), flow => [flow.source, flow.target]).picked)
  if (!input.ok) return input.exitCode
  const flow = input.value
  let rows
  try {
    rows = await translateGroup(flow, options.group)
  } catch (err) {
    return reportCommandFailure(err, `cannot translate the offsets of group ${options.group}`)
  }
  const out = rows.map(r => ({
    topic: r.topic, partition: r.partition, remoteTopic: r.remoteTopic, sourceOffset: r.upstreamOffset,
    targetOffset: r.translation.offset, exact: r.translation.exact, ...(r.translation.reason === undefined ? {} : { reason: r.translation.reason })
  })).sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition)
  if (options.json) {
    writeJson(process.stdout, { flow: flow.name, group: options.group, partitions: out })
    return ExitCodes.OK
  }
  if (out.length === 0) {
    process.stdout.write(`group ${options.group} has no committed offsets on replicated partitions of ${flow.name}\n`)
    return ExitCodes.OK
  }
  const header = ['TOPIC', 'PARTITION', 'SOURCE OFFSET', `TARGET TOPIC`, 'TARGET OFFSET', 'EXACT']
  const lines = out.map(r => [r.topic, String(r.partition), String(r.sourceOffset), r.remoteTopic, String(r.targetOffset), r.exact ? 'yes' : `no: ${r.reason ?? ''}`])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map(l => l[i]!.length)))
  const render = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()
  process.stdout.write(`${[render(header), ...lines.map(render)].join('\n')}\n`)
  return ExitCodes.OK
}
