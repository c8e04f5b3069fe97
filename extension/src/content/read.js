// Batched DOM reads for the observation walk (see dom.rs).
//
// Each call into JavaScript from WebAssembly costs glue, and every string
// argument is decoded on the way: a walk that asks for each fact separately
// crosses the boundary ~35 times per element. These functions read what the
// walk needs about one node in a single crossing, writing numbers into a
// buffer in wasm memory and returning at most one string. They only read: every
// decision stays in Rust.

const VISIBILITY = { checkOpacity: true, checkVisibilityCSS: true };
// Tags the walk never enters (observe.rs SKIPPED) and slots, whose style is not asked for.
const NO_STYLE = new Set([
  'script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base', 'slot',
]);

// Display codes shared with dom.rs `Display`.
const NONE = 0;
const CONTENTS = 1;
const BLOCK = 2;
const FLEX_OR_GRID = 3;
const UNREAD = 4;

function displayCode(d) {
  if (d === 'none') return NONE;
  if (d === 'contents') return CONTENTS;
  return d.includes('flex') || d.includes('grid') ? FLEX_OR_GRID : BLOCK;
}

// Numbers go back through a buffer in wasm memory (dom.rs `FACTS`), viewed
// afresh whenever memory has grown: no array is allocated per call. (Growing
// detaches a WebAssembly memory's old buffer, but wasm2js's memory replaces it
// without detaching, so the check must compare buffers.)
let memory = null;
let base = 0;
let view = null;
// Tag name → code (its position in dom.rs `TAGS`, plus one): common tags cross as a number.
let tagCodes = new Map();

function buffer() {
  if (view === null || view.buffer !== memory.buffer) view = new Float64Array(memory.buffer, base, 8);
  return view;
}

/** Called once: where the buffer is, and the tags that have codes (comma-separated). */
export function bind(mem, ptr, tags) {
  memory = mem;
  base = ptr;
  view = null;
  tagCodes = new Map(tags.split(',').map((t, i) => [t, i + 1]));
}

// The attributes that decide whether an element is interactive (semantics.rs);
// the rest are read (`readAttributes`) only for elements that are.
const DECIDING = new Set(['role', 'contenteditable', 'tabindex', 'onclick', 'inert', 'href', 'type', 'multiple']);

/**
 * One element. Buffer: [display, pointer cursor, has children, open shadow root,
 * child element count, tag code (0: the tag leads the string)]. Style is read
 * only when `styled`. Returns nothing for a tag with a code and none of the
 * DECIDING attributes; else the tag (when it has no code), then each of those
 * attributes as NUL-separated name and value (HTML cannot hold NUL).
 */
export function readElement(el, win, styled) {
  const o = buffer();
  const tag = el.localName;
  if (styled && !NO_STYLE.has(tag)) {
    const s = win.getComputedStyle(el);
    o[0] = displayCode(s.getPropertyValue('display'));
    o[1] = s.getPropertyValue('cursor') === 'pointer' ? 1 : 0;
  } else {
    o[0] = UNREAD;
    o[1] = 0;
  }
  o[2] = el.firstChild !== null ? 1 : 0;
  o[3] = el.shadowRoot !== null ? 1 : 0;
  o[4] = el.childElementCount;
  const code = tagCodes.get(tag) || 0;
  o[5] = code;
  const attrs = attributes(el, DECIDING);
  if (code !== 0) return attrs === '' ? undefined : attrs;
  return tag + attrs;
}

/** Attributes (all, or those in `only`) as NUL-separated name and value, each led by a NUL. */
function attributes(el, only) {
  let s = '';
  if (!el.hasAttributes()) return s;
  for (const name of el.getAttributeNames()) {
    if (only === null || only.has(name)) s += '\0' + name + '\0' + el.getAttribute(name);
  }
  return s;
}

// Anything but Rust's `char::is_whitespace` (Unicode White_Space), which the walk trims with.
const NON_BLANK = /[^\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** A text node's text, or nothing when it is only whitespace. */
export function readText(node) {
  const t = node.data;
  return NON_BLANK.test(t) ? t : undefined;
}

/**
 * Any node, in one call: buffer[6] says what it was (1 element, read as
 * `readElement`; 3 text, returned as `readText` when `wantText`; 0 other).
 */
export function readNode(node, win, styled, wantText) {
  const t = node.nodeType;
  if (t === 1) {
    const s = readElement(node, win, styled);
    buffer()[6] = 1;
    return s;
  }
  buffer()[6] = t === 3 ? 3 : 0;
  return t === 3 && wantText ? readText(node) : undefined;
}

// The string the last readFirst/readNext produced, until takeString asks for it.
let pending;

/**
 * Steps to a parent's first child the walk would use (an element, or a text
 * that is not blank when `wantText`) and reads it as `readNode` does, in one
 * call: the node is returned, and its string (buffer[7] = 1 when there is one)
 * waits for `takeString`. Most elements have no string, so they cross once.
 */
export function readFirst(parent, win, styled, wantText) {
  return readAt(parent.firstChild, win, styled, wantText);
}

/** As `readFirst`, for the next sibling of `node`. */
export function readNext(node, win, styled, wantText) {
  return readAt(node.nextSibling, win, styled, wantText);
}

// Steps on from `node` (itself included) to the first node the walk would do
// anything with, and reads it: nodes that would read as nothing (comments,
// blank text, text when none is wanted) are passed over here rather than
// crossing into wasm one by one. On a typical page half the nodes are blank
// text between tags.
function readAt(node, win, styled, wantText) {
  for (; node !== null; node = node.nextSibling) {
    const s = readNode(node, win, styled, wantText);
    const o = buffer();
    if (o[6] !== 1 && s === undefined) continue;
    pending = s;
    o[7] = s === undefined ? 0 : 1;
    return node;
  }
  return undefined;
}

export function takeString() {
  const s = pending;
  pending = undefined;
  return s;
}

/** Every attribute of an element, as `readElement` returns them (after the tag). */
export function readAttributes(el) {
  return attributes(el, null);
}

/**
 * What the walk asks of every candidate, in one call: buffer = [x, y, width,
 * height]; when the box meets the region given (dom.rs `Bounds::meets`), also
 * buffer[4] = visible, and every attribute is returned, as `readAttributes`.
 */
export function readCandidate(el, left, top, right, bottom) {
  const r = el.getBoundingClientRect();
  writeRect(r);
  if (!(r.x < right && r.y < bottom && r.x + r.width > left && r.y + r.height > top)) return undefined;
  buffer()[4] = el.checkVisibility(VISIBILITY) ? 1 : 0;
  return attributes(el, null);
}

/** Buffer: [x, y, width, height] of the element's border box. */
export function readRect(el) {
  writeRect(el.getBoundingClientRect());
}

function writeRect(r) {
  const o = buffer();
  o[0] = r.x;
  o[1] = r.y;
  o[2] = r.width;
  o[3] = r.height;
}

/** `Element.checkVisibility` with opacity and `visibility` checked. */
export function isVisible(el) {
  return el.checkVisibility(VISIBILITY);
}

/** Buffer: [x, y, width, height] of a text node's rendered text, measured with `range`. */
export function readTextRect(range, node) {
  range.selectNodeContents(node);
  writeRect(range.getBoundingClientRect());
}

/**
 * Paint facts: buffer = [position (0 static, 1 relative, 2 absolute, 3 fixed,
 * 4 sticky), z-index (NaN for auto), opacity, transform, filter, isolate,
 * display], as the strings computed style gives them reduced to numbers.
 */
export function readPaint(el, win) {
  const out = buffer();
  const s = win.getComputedStyle(el);
  const p = s.getPropertyValue('position');
  out[0] = p === 'relative' ? 1 : p === 'absolute' ? 2 : p === 'fixed' ? 3 : p === 'sticky' ? 4 : 0;
  const z = s.getPropertyValue('z-index');
  out[1] = /^[+-]?[0-9]+$/.test(z) ? Number(z) : NaN;
  const o = Number(s.getPropertyValue('opacity'));
  out[2] = Number.isFinite(o) ? o : 1;
  out[3] = s.getPropertyValue('transform') !== 'none' ? 1 : 0;
  out[4] = s.getPropertyValue('filter') !== 'none' ? 1 : 0;
  out[5] = s.getPropertyValue('isolation') === 'isolate' ? 1 : 0;
  out[6] = displayCode(s.getPropertyValue('display'));
}

/** Whether the element scrolls its content vertically (and has content to scroll). */
export function readScrolls(el, win) {
  const o = win.getComputedStyle(el).getPropertyValue('overflow-y');
  return (o === 'auto' || o === 'scroll') && el.scrollHeight > el.clientHeight + 1;
}
