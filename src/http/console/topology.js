// Draws /topology as SVG: a box per cluster placed by its column and row (computed by kmirror:
// src/heartbeat/topology-graph.ts) and an arrow per link. A link this instance copies along is thick and names
// its flow; dashed while its target holds no heartbeat topic for it yet; thin grey when only the heartbeats show it
// (another replicator). An unreachable cluster is red, its error in the tooltip.

const SVG = 'http://www.w3.org/2000/svg'
const BOX = { width: 150, height: 46 }
const GAP = { x: 120, y: 34 }
const MARGIN = 16

function el (name, attributes = {}, text) {
  const node = document.createElementNS(SVG, name)
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value))
  if (text !== undefined) node.textContent = text
  return node
}

function position (node) {
  return { x: MARGIN + node.column * (BOX.width + GAP.x), y: MARGIN + node.row * (BOX.height + GAP.y) }
}

/**
 * The path of a link: from the right side of `from` to the left side of `to` when it goes forward, from the left
 * side to the right side when it goes back (both shifted by `bend` so that A->B and B->A do not overlap), and an
 * arc below the boxes within a column.
 */
function linkPath (from, to, bend) {
  const a = position(from)
  const b = position(to)
  const forward = to.column > from.column
  if (to.column !== from.column) {
    const start = { x: forward ? a.x + BOX.width : a.x, y: a.y + BOX.height / 2 + bend }
    const end = { x: forward ? b.x - 2 : b.x + BOX.width + 2, y: b.y + BOX.height / 2 + bend }
    const mid = (start.x + end.x) / 2
    return { d: `M${start.x},${start.y} C${mid},${start.y} ${mid},${end.y} ${end.x},${end.y}`, label: { x: mid, y: (start.y + end.y) / 2 + (bend > 0 ? 14 : -6) } }
  }
  const start = { x: a.x + BOX.width, y: a.y + BOX.height / 2 }
  const end = { x: b.x + BOX.width + 2, y: b.y + BOX.height / 2 }
  const reach = 50
  return { d: `M${start.x},${start.y} C${start.x + reach},${start.y} ${end.x + reach},${end.y} ${end.x},${end.y}`, label: { x: start.x + reach, y: (start.y + end.y) / 2 } }
}

function defs () {
  const d = el('defs')
  for (const [id, colour] of [['arrow', '#8a94a6'], ['arrow-flow', '#1f4e79']]) {
    const marker = el('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' })
    marker.append(el('path', { d: 'M0,0 L10,5 L0,10 z', fill: colour }))
    d.append(marker)
  }
  return d
}

function drawNode (node) {
  const { x, y } = position(node)
  const g = el('g', { class: `node${node.reachable ? '' : ' unreachable'}`, 'data-cluster': node.alias, transform: `translate(${x},${y})` })
  g.append(el('title', {}, node.reachable ? `${node.alias}: upstream ${node.upstream.map(u => `${u.alias} (${u.hops} hop${u.hops === 1 ? '' : 's'})`).join(', ') || 'none'}` : `${node.alias}: ${node.error}`))
  g.append(el('rect', { width: BOX.width, height: BOX.height, rx: 6 }))
  g.append(el('text', { x: 10, y: 19 }, node.alias))
  const sub = node.reachable ? (node.upstream.length === 0 ? 'no upstream' : `upstream: ${node.upstream.map(u => u.hops === 1 ? u.alias : `${u.alias}·${u.hops}`).join(' ')}`) : 'unreachable'
  g.append(el('text', { x: 10, y: 36, class: 'sub' }, sub.length > 26 ? `${sub.slice(0, 25)}…` : sub))
  return g
}

function drawLink (link, links, nodes, svg) {
  const from = nodes.get(link.from)
  const to = nodes.get(link.to)
  if (from === undefined || to === undefined) return
  const classes = ['link', link.flow === null ? '' : 'flow', link.heartbeats ? '' : 'configured'].filter(Boolean).join(' ')
  // A link with one in the other direction too: forward ones above the middle, backward ones below.
  const pair = links.some(l => l.from === link.to && l.to === link.from)
  const { d, label } = linkPath(from, to, pair ? (to.column >= from.column ? -7 : 7) : 0)
  const path = el('path', { d, class: classes, 'marker-end': `url(#${link.flow === null ? 'arrow' : 'arrow-flow'})`, 'data-link': `${link.from}->${link.to}` })
  path.append(el('title', {}, `${link.from} → ${link.to}${link.flow === null ? '' : ` (flow ${link.flow})`}${link.heartbeats ? ', heartbeats seen on the target' : ', no heartbeats on the target yet'}`))
  svg.append(path)
  if (link.flow !== null) svg.append(el('text', { x: label.x, y: label.y, class: 'link-label', 'text-anchor': 'middle' }, link.flow))
}

/** Replaces the content of `container` with the drawing of `doc` (a /topology document). */
export function drawTopology (container, doc) {
  const nodes = new Map(doc.nodes.map(n => [n.alias, n]))
  const columns = Math.max(1, ...doc.nodes.map(n => n.column + 1))
  const rows = Math.max(1, ...doc.nodes.map(n => n.row + 1))
  const width = MARGIN * 2 + columns * BOX.width + (columns - 1) * GAP.x + 60
  const height = MARGIN * 2 + rows * BOX.height + (rows - 1) * GAP.y + 14
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'replication topology' })
  svg.style.maxWidth = `${width}px`
  svg.append(defs())
  for (const link of doc.links) drawLink(link, doc.links, nodes, svg)
  for (const node of doc.nodes) svg.append(drawNode(node))
  const legend = document.createElement('div')
  legend.className = 'legend'
  legend.textContent = 'thick: a flow of this instance · dashed: no heartbeats on the target yet · thin grey: seen in the heartbeats only · red: cluster unreachable'
  container.replaceChildren(svg, legend)
}
