// The console's loop: polls /status?summary every REFRESH_MS (and the partitions of every opened topic), /topology
// every TOPOLOGY_MS, and redraws in place (morph.js: unchanged nodes stay, so a text selection survives a refresh).
// Only same-origin requests to kmirror itself: it works offline.
import { formatAgo, headerState } from './format.js'
import { morphChildren } from './morph.js'
import { h, renderBrokers, renderFlow } from './render.js'
import { drawTopology } from './topology.js'

const REFRESH_MS = 1500
const TOPOLOGY_MS = 10_000
const TOPIC_PAGE = 100

const state = {
  filter: '',
  /** Topics shown per flow (grows with "show more"). */
  limits: new Map(),
  /** `flow\u0000topic` → partitions of an opened topic (undefined while the first fetch runs). */
  open: new Map(),
  last: null
}

const $ = id => document.getElementById(id)
const key = (flow, topic) => `${flow}\u0000${topic}`

const view = {
  isOpen: (flow, topic) => state.open.has(key(flow, topic)),
  partitions: (flow, topic) => state.open.get(key(flow, topic)),
  toggle (flow, topic) {
    const k = key(flow, topic)
    if (state.open.has(k)) state.open.delete(k)
    else {
      state.open.set(k, undefined)
      loadTopic(flow, topic).then(render, () => undefined)
    }
    render()
  },
  showMore (flow) {
    state.limits.set(flow, (state.limits.get(flow) ?? TOPIC_PAGE) + TOPIC_PAGE)
    refresh()
  }
}

async function getJson (path) {
  const res = await fetch(path, { cache: 'no-store' })
  if (!res.ok && res.status !== 404) throw new Error(`${path}: HTTP ${res.status}`)
  return await res.json()
}

async function loadTopic (flow, topic) {
  const doc = await getJson(`/status?flow=${encodeURIComponent(flow)}&topic=${encodeURIComponent(topic)}`)
  const k = key(flow, topic)
  if (state.open.has(k)) state.open.set(k, doc.partitions ?? [])
}

function render () {
  const doc = state.last
  if (doc === null) return
  const now = Date.now()
  const health = $('health')
  health.textContent = headerState(doc)
  health.className = `badge ${doc.healthy ? 'ok' : 'bad'}`
  $('health-text').textContent = doc.healthy ? '' : doc.health === 'ok' ? '' : doc.health
  const error = $('error')
  error.hidden = doc.error === null
  error.textContent = doc.error === null ? '' : `Replication stopped: ${doc.error}`
  const brokers = doc.brokers ?? []
  $('brokers-section').hidden = brokers.length === 0
  morphChildren($('brokers'), brokers.length === 0 ? [] : [renderBrokers(brokers, now)])
  const flows = doc.flows.map(flow => renderFlow(flow, view, now))
  morphChildren($('flows'), flows.length > 0 ? flows : [h('p', { class: 'muted' }, 'no flow runs in this instance')])
}

async function refresh () {
  const limit = Math.max(TOPIC_PAGE, ...state.limits.values())
  try {
    const doc = await getJson(`/status?summary&limit=${limit}&filter=${encodeURIComponent(state.filter)}`)
    await Promise.all([...state.open.keys()].map(k => loadTopic(...k.split('\u0000'))))
    state.last = doc
    $('connection').hidden = true
    $('updated').textContent = `updated ${new Date().toLocaleTimeString()}`
    $('updated').dataset.at = String(Date.now())
    render()
  } catch (err) {
    $('connection').hidden = false
    $('connection').textContent = `cannot reach kmirror (${err instanceof Error ? err.message : String(err)}): showing the last answer, retrying`
  }
}

async function refreshTopology () {
  try {
    const doc = await getJson('/topology')
    if (doc.nodes === undefined) {
      $('topology').replaceChildren(h('p', { class: 'muted' }, doc.error ?? 'no topology'))
      return
    }
    drawTopology($('topology'), doc)
    $('topology-read').textContent = `clusters read ${formatAgo(doc.readAt, Date.now())}`
  } catch (err) {
    $('topology').replaceChildren(h('p', { class: 'error-text' }, `cannot read the topology: ${err instanceof Error ? err.message : String(err)}`))
  }
}

/** Polls `fn` every `ms`, never two at a time. */
function every (ms, fn) {
  const loop = () => { fn().finally(() => setTimeout(loop, ms)) }
  loop()
}

$('topic-filter').addEventListener('input', event => {
  state.filter = event.target.value.trim()
  refresh()
})
every(REFRESH_MS, refresh)
every(TOPOLOGY_MS, refreshTopology)
