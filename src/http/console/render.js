// Builds the DOM of one flow from its /status?summary entry: state and totals, jobs, members, failing partitions
// (red), and its topics, worst first, each one opening onto its partitions (fetched by console.js); and the table
// of the brokers that troubled kmirror lately.
import { formatAgo, formatByteRate, formatBytes, formatCount, formatHeldRead, formatPartition, formatRate, formatSeconds, stateClass } from './format.js'

/** `h('td', { class: 'num' }, '12')`: an element with attributes and children (strings become text). */
export function h (name, attributes = {}, ...children) {
  const node = document.createElement(name)
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value === true ? '' : String(value))
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child))
  return node
}

function stat (label, value, bad = false, key) {
  return h('div', { class: bad ? 'stat bad' : 'stat', 'data-stat': key }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value))
}

function table (headers, rows, attributes = {}) {
  return h('table', attributes,
    h('thead', {}, h('tr', {}, headers.map(([text, numeric]) => h('th', { class: numeric ? 'num' : undefined }, text)))),
    h('tbody', {}, rows))
}

const num = value => h('td', { class: 'num' }, value)

function lagSecondsOf (p) {
  return typeof p.lagSeconds === 'number' ? formatSeconds(p.lagSeconds) : '—'
}

function stats (flow) {
  return h('div', { class: 'stats' },
    stat('Records/s', formatRate(flow.recordsPerSecond), false, 'records-per-second'),
    stat('Bytes/s', formatByteRate(flow.bytesPerSecond), false, 'bytes-per-second'),
    stat('Lag (records)', flow.lagRecords === null ? `— (${formatCount(flow.lagUnknownPartitions)} unknown)` : formatCount(flow.lagRecords), false, 'lag-records'),
    stat('Lag (time)', formatSeconds(flow.lagSeconds), false, 'lag-seconds'),
    stat('Partitions', formatCount(flow.partitionCount), false, 'partitions'),
    stat('Failing', formatCount(flow.failingPartitions), flow.failingPartitions > 0, 'failing'),
    stat('Copied', `${formatCount(flow.copiedRecords)} · ${formatBytes(flow.copiedBytes)}`, false, 'copied'))
}

function jobs (flow, now) {
  if (flow.jobs.length === 0) return null
  const rows = flow.jobs.map(j => h('tr', { class: j.lastError === null ? undefined : 'failing', 'data-job': j.name },
    h('td', {}, j.name), num(formatCount(j.runs)), num(formatCount(j.failures)), h('td', {}, formatAgo(j.lastRunAt, now)), num(`${formatCount(j.lastDurationMs)} ms`),
    h('td', { class: 'wrap' }, j.lastError ?? (j.lastFailure === null || j.lastFailure === undefined ? '—' : h('span', { class: 'muted' }, `${formatAgo(j.lastFailure.at, now)}: ${j.lastFailure.error}`)))))
  return [h('h3', {}, 'Periodic jobs'), table([['Job'], ['Runs', true], ['Failures', true], ['Last run'], ['Took', true], ['Last error']], rows, { class: 'jobs' })]
}

function members (flow) {
  const m = flow.membership
  if (m === undefined) return null
  const rows = m.members.map(member => h('tr', { 'data-member': member.name },
    h('td', {}, member.name, member.name === m.self ? ' (this instance)' : '', member.name === m.leader ? ' · leader' : ''),
    num(formatCount(member.partitions)), h('td', { class: 'wrap' }, member.jobs.join(', ') || '—')))
  return [h('h3', {}, `Group ${m.group} · generation ${m.generation}`), table([['Member'], ['Partitions owned', true], ['Jobs owned']], rows, { class: 'members' })]
}

/** A row per partition; failing ones red with their error, cluster, remedy and attempts; held ones with their hold. */
export function partitionRows (partitions) {
  return partitions.map(p => h('tr', { class: p.failure === null ? undefined : 'failing', 'data-partition': formatPartition(p.topic, p.partition) },
    h('td', {}, formatPartition(p.topic, p.partition)), num(p.position < 0 ? '—' : formatCount(p.position)), num(p.highWatermark < 0 ? '—' : formatCount(p.highWatermark)),
    num(formatCount(p.lagRecords)), num(lagSecondsOf(p)), num(formatCount(p.copiedRecords)),
    h('td', { class: 'wrap' }, p.failure === null ? heldText(p) : `${p.failure.error} on cluster ${p.failure.cluster} (${p.failure.side}), ${p.failure.attempts} attempts since ${p.failure.since}: ${p.failure.remedy}`)))
}

/** A partition an open source transaction holds, not failing yet (short holds are normal): what holds it, since when. */
function heldText (p) {
  return p.heldAt === undefined ? '' : `held at offset ${formatCount(p.heldAt)} by a transaction open on the source since ${p.heldSince}`
}

export const PARTITION_HEADERS = [['Partition'], ['Position', true], ['High watermark', true], ['Lag', true], ['Lag (time)', true], ['Copied', true], ['Error']]

function failing (flow) {
  if (flow.failing.length === 0) return null
  const more = flow.failingPartitions > flow.failing.length ? h('p', { class: 'muted' }, `${flow.failing.length} of ${formatCount(flow.failingPartitions)} failing partitions shown`) : null
  return [h('h3', { class: 'error-text' }, 'Failing partitions'), table(PARTITION_HEADERS, partitionRows(flow.failing), { class: 'failing-partitions' }), more]
}

/**
 * Topics whose remote topic cannot be created or grown (the last topic refresh's problems):
 * red, one row each with its cause and fix. Nothing when there is none, or another instance runs the refresh.
 */
function remoteTopicProblems (flow) {
  const problems = flow.remoteTopicProblems ?? []
  if (problems.length === 0) return null
  const rows = problems.map(p => h('tr', { class: 'failing', 'data-remote-topic-problem': p.topic }, h('td', {}, p.topic), h('td', {}, p.remoteTopic), h('td', { class: 'wrap' }, p.message)))
  const more = flow.remoteTopicProblemCount > problems.length ? h('p', { class: 'muted' }, `${problems.length} of ${formatCount(flow.remoteTopicProblemCount)} remote topic problems shown`) : null
  return [h('h3', { class: 'error-text' }, 'Remote topic problems'), table([['Topic'], ['Remote topic'], ['Problem and fix']], rows, { class: 'remote-topic-problems' }), more]
}

/**
 * The topics table. `view` holds what the operator opened: `isOpen(flow, topic)`, `toggle(flow, topic)`,
 * `partitions(flow, topic)` (rows fetched for an open topic, or undefined while loading) and `showMore(flow)`.
 */
function topics (flow, view) {
  const rows = []
  for (const t of flow.topics) {
    const open = view.isOpen(flow.name, t.topic)
    rows.push(h('tr', { class: ['topic', open ? 'open' : '', t.failingPartitions > 0 ? 'failing' : ''].filter(Boolean).join(' '), 'data-topic': t.topic, onclick: () => view.toggle(flow.name, t.topic) },
      h('td', {}, t.topic), h('td', {}, t.remoteTopic), num(formatCount(t.partitions)), num(formatCount(t.failingPartitions)),
      num(formatCount(t.lagRecords)), num(formatSeconds(t.lagSeconds)), num(formatCount(t.copiedRecords)), num(formatBytes(t.copiedBytes))))
    if (open) {
      const partitions = view.partitions(flow.name, t.topic)
      rows.push(h('tr', { class: 'detail' }, h('td', { colspan: 8 }, partitions === undefined ? h('span', { class: 'muted' }, 'loading…') : table(PARTITION_HEADERS, partitionRows(partitions), { class: 'partitions' }))))
    }
  }
  const hidden = flow.topicsMatching - flow.topics.length
  return [
    h('h3', {}, `Topics (${formatCount(flow.topicsMatching)}${flow.topicsMatching === flow.topicCount ? '' : ` of ${formatCount(flow.topicCount)}`}): failing first, then the most lag; click one for its partitions`),
    table([['Topic'], ['Remote topic'], ['Partitions', true], ['Failing', true], ['Lag', true], ['Lag (time)', true], ['Copied', true], ['Bytes', true]], rows, { class: 'topics' }),
    hidden > 0 ? h('div', { class: 'more' }, h('button', { onclick: () => view.showMore(flow.name) }, `show ${formatCount(Math.min(hidden, 100))} more of ${formatCount(hidden)} not shown`)) : null
  ]
}

// (10 s: SLOW_MS of src/kafka/slow-brokers.ts; test/unit/http/console-constants.test.ts keeps them in step)
const TROUBLE_KINDS = {
  silent: 'silent: connections cut',
  fenced: 'fenced by its cluster: connections cut',
  slow: 'slow: a request held 10 s',
  unreachable: 'unreachable: its partitions wait, the others copy on',
  throttled: 'throttled: a client quota paces kmirror'
}

/**
 * The brokers that troubled kmirror lately (/status `brokers`): cut ones red, slow ones plain. A row's identity is
 * its kind and broker (`data-trouble`: one broker can be slow and fenced), so a refresh that reorders them moves
 * rows rather than rewriting their text.
 */
export function renderBrokers (brokers, now) {
  const rows = brokers.map(b => h('tr', { class: b.kind === 'slow' ? undefined : 'failing', 'data-trouble': `${b.kind} ${b.broker}`, 'data-broker': b.broker, 'data-kind': b.kind },
    h('td', {}, b.broker), h('td', {}, b.clusters.length === 0 ? '—' : b.clusters.join(', ')), h('td', {}, TROUBLE_KINDS[b.kind] ?? b.kind), num(formatCount(b.count)),
    h('td', {}, formatAgo(b.lastAt, now)), h('td', { class: 'wrap' }, b.cause)))
  return table([['Broker'], ['Cluster'], ['What'], ['Times', true], ['Last'], ['Last cause']], rows, { class: 'brokers' })
}

/**
 * MM2's offset syncs that cannot be written (their topic's leader down): red while the writes fail, and how many were
 * dropped by thinning once that happened. Nothing while they are written.
 */
function offsetSyncs (flow) {
  const syncs = flow.offsetSyncs
  if (syncs === undefined || (syncs.failure === null && syncs.thinned === 0)) return null
  const failing = syncs.failure === null
    ? ''
    : `cannot write MM2's offset syncs: ${formatCount(syncs.pending)} waiting, ${syncs.failure.attempts} attempts since ${syncs.failure.since}: ${syncs.failure.error}. `
  const thinned = syncs.thinned === 0 ? '' : `${formatCount(syncs.thinned)} offset syncs dropped unwritten (too many waited; MM2's translation coarser there, kmirror's exact).`
  return h('p', { class: syncs.failure === null ? 'muted' : 'error-text', 'data-offset-syncs': '' }, failing + thinned)
}

/**
 * A start or an assignment waiting for a transaction open on one of the flow's internal topics (progress, history):
 * the topic, where, since when, and where the way to end it is told. Nothing while no read waits.
 */
function heldReads (flow, now) {
  const held = flow.heldReads ?? []
  if (held.length === 0) return null
  return h('p', { class: 'error-text', 'data-held-reads': '' }, held.map(r => formatHeldRead(r, now)).join(' '))
}

/** Aborts this recent are shown in red: rounds copied again, or a flow that cannot commit. */
const RECENT_ABORT_MS = 15 * 60 * 1000

/**
 * Exactly-once mode: the transactional id, how many round transactions were committed (the last when) and aborted,
 * and the last abort's cause, in red while it is recent. Nothing in at-least-once mode.
 */
function exactlyOnce (flow, now) {
  const eos = flow.exactlyOnce
  if (eos === undefined) return null
  const committed = eos.lastCommitAt === null
    ? `exactly-once as ${eos.transactionalId}: no transaction committed yet`
    : `exactly-once as ${eos.transactionalId}: ${formatCount(eos.committed)} ${eos.committed === 1 ? 'transaction' : 'transactions'} committed (last ${formatAgo(eos.lastCommitAt, now)})`
  const abort = eos.lastAbort
  const aborted = abort === null ? '' : `; ${formatCount(eos.aborted)} aborted, the last ${formatAgo(abort.at, now)}: ${abort.code}: ${abort.message}`
  const recent = abort !== null && now - Date.parse(abort.at) < RECENT_ABORT_MS
  return h('p', { class: recent ? 'error-text' : 'muted', 'data-exactly-once': '' }, committed + aborted)
}

/** The card of one flow. */
export function renderFlow (flow, view, now) {
  const step = flow.stepFailure === null ? null : h('p', { class: 'error-text' }, `cannot copy: ${flow.stepFailure.code} (${flow.stepFailure.attempts} attempts since ${flow.stepFailure.since}): ${flow.stepFailure.message ?? ''}`)
  return h('article', { class: 'flow', 'data-flow': flow.name },
    h('div', { class: 'flow-head' }, h('h2', {}, flow.name), h('span', { class: `badge ${stateClass(flow.state)}`, 'data-state': flow.state }, flow.state)),
    step, heldReads(flow, now), offsetSyncs(flow), exactlyOnce(flow, now), stats(flow), failing(flow), remoteTopicProblems(flow), topics(flow, view), jobs(flow, now), members(flow))
}
