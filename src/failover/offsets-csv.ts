/**
 * The CSV of `kafka-consumer-groups.sh --reset-offsets --export` / `--from-file`, read and written by
 * `kmirror offsets set --export` / `--from-file`: no header, one partition a line, `topic,partition,offset`
 * when the command names exactly one group, `group,topic,partition,offset` otherwise. A field holding a comma,
 * a double quote or a line break is quoted ("a ""b"""), as Kafka's CSV writer does.
 *
 *   orders,0,42              (one group)
 *   billing,orders,0,42      (several groups)
 */

export interface CsvPosition {
  /** Undefined in the three-column form: the group named on the command line. */
  readonly group?: string
  readonly topic: string
  readonly partition: number
  readonly offset: number
}

export function writeOffsetsCsv (rows: readonly CsvPosition[], withGroup: boolean): string {
  return rows.map(r => `${[...(withGroup ? [r.group ?? ''] : []), r.topic, String(r.partition), String(r.offset)].map(quote).join(',')}\n`).join('')
}

function quote (field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field
}

/** The rows of a CSV file; throws an Error naming the line and what is wrong (every row must have the same form). */
export function parseOffsetsCsv (text: string, file: string): CsvPosition[] {
  const rows: CsvPosition[] = []
  /** The line of each group's partition, to refuse a second line for it with another offset. */
  const seen = new Map<string, { line: number, offset: number }>()
  let columns: number | undefined
  splitRecords(text, file).forEach(({ fields, line }) => {
    if (fields.length === 1 && fields[0]!.trim() === '') return
    const where = `${file} line ${line}`
    if (fields.length !== 3 && fields.length !== 4) throw new Error(`${where}: expected topic,partition,offset or group,topic,partition,offset, got ${fields.length} field(s)`)
    if (columns !== undefined && fields.length !== columns) throw new Error(`${where}: ${fields.length} fields where the lines before have ${columns}; use one form in the whole file`)
    columns = fields.length
    const [partition, offset] = fields.slice(-2).map(f => f.trim())
    if (!/^\d+$/.test(partition!)) throw new Error(`${where}: partition '${partition}' is not a whole number 0 or more`)
    if (!/^\d+$/.test(offset!) || !Number.isSafeInteger(Number(offset))) throw new Error(`${where}: offset '${offset}' is not a whole number 0 or more`)
    const topic = fields[fields.length - 3]!
    if (topic === '') throw new Error(`${where}: the topic is empty`)
    if (fields.length === 4 && fields[0]! === '') throw new Error(`${where}: the group is empty`)
    const row = { ...(fields.length === 4 ? { group: fields[0]! } : {}), topic, partition: Number(partition), offset: Number(offset) }
    const key = JSON.stringify([row.group ?? null, topic, row.partition])
    const before = seen.get(key)
    if (before !== undefined && before.offset !== row.offset) {
      throw new Error(`${where}: ${row.group === undefined ? '' : `group ${row.group} `}${topic}-${row.partition} is set to ${row.offset}, and to ${before.offset} on line ${before.line}; keep one line per partition`)
    }
    seen.set(key, { line, offset: row.offset })
    if (before === undefined) rows.push(row)
  })
  if (rows.length === 0) throw new Error(`${file} holds no offsets (expected lines topic,partition,offset or group,topic,partition,offset)`)
  return rows
}

/**
 * Records with their starting line number; a quoted field may hold commas, doubled quotes and line breaks. Text
 * between a closing quote and the next comma or line end is refused (`"ord"x` is no field).
 */
function splitRecords (text: string, file: string): { fields: string[], line: number }[] {
  const records: { fields: string[], line: number }[] = []
  let fields: string[] = []
  let field = ''
  let quoted = false
  let closed = false
  let line = 1
  let start = 1
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '\n') line++
    if (closed && c !== ',' && c !== '\n' && c !== '\r') throw new Error(`${file} line ${line}: text after the closing quote of "${field}"; quote the whole field`)
    closed = false
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++ } else if (c === '"') { quoted = false; closed = true }
      else field += c
    } else if (c === '"' && field === '') quoted = true
    else if (c === ',') { fields.push(field); field = '' } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') continue
      records.push({ fields: [...fields, field], line: start })
      fields = []
      field = ''
      start = line
    } else field += c
  }
  if (fields.length > 0 || field !== '') records.push({ fields: [...fields, field], line: start })
  return records
}
