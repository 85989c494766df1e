// Brings the page's DOM in line with a tree render.js just built, in place: unchanged nodes stay the same objects
// (a text selection, a hover or a scroll position in them survives the refresh), changed text nodes get their new
// text, changed attributes are set, and only nodes of another kind or identity are replaced. Identity: the tag and
// the first data-* key an element carries (a row of another topic is another row, with its own click handler).
// Event handlers are not compared: a node kept keeps its handlers, which is right because elements with handlers
// carry a key (topic rows) or sit in a keyed element (a flow's "show more" button).

const KEYS = ['data-flow', 'data-topic', 'data-partition', 'data-job', 'data-member', 'data-stat', 'data-state', 'data-trouble']

function keyOf (node) {
  if (node.nodeType !== Node.ELEMENT_NODE) return null
  for (const key of KEYS) if (node.hasAttribute(key)) return `${key}=${node.getAttribute(key)}`
  return null
}

function sameIdentity (a, b) {
  return a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b)
}

/** A later sibling of `from` with the identity of `wanted` (a keyed row that moved up), or null. */
function findLater (from, wanted) {
  const key = keyOf(wanted)
  if (key === null) return null
  for (let node = from.nextSibling; node !== null; node = node.nextSibling) if (sameIdentity(node, wanted)) return node
  return null
}

function morphNode (current, wanted) {
  if (current.nodeType !== Node.ELEMENT_NODE) {
    if (current.nodeValue !== wanted.nodeValue) current.nodeValue = wanted.nodeValue
    return
  }
  for (const { name } of [...current.attributes]) if (!wanted.hasAttribute(name)) current.removeAttribute(name)
  for (const { name, value } of wanted.attributes) if (current.getAttribute(name) !== value) current.setAttribute(name, value)
  morphChildren(current, [...wanted.childNodes])
}

/** Makes `parent`'s children match `wanted` (nodes of a fresh tree; those not needed are moved into `parent`). */
export function morphChildren (parent, wanted) {
  for (let i = 0; i < wanted.length; i++) {
    const next = wanted[i]
    const current = parent.childNodes[i]
    if (current === undefined) parent.appendChild(next)
    else if (sameIdentity(current, next)) morphNode(current, next)
    else {
      const moved = findLater(current, next)
      if (moved === null) parent.insertBefore(next, current)
      else {
        parent.insertBefore(moved, current)
        morphNode(moved, next)
      }
    }
  }
  while (parent.childNodes.length > wanted.length) parent.lastChild.remove()
}
