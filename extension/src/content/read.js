// Batched DOM reads for the observation walk (see dom.rs).
//
// Each call into JavaScript from WebAssembly costs glue, and every string
// argument is decoded on the way: a walk that asks for each fact separately
// crosses the boundary ~35 times per element. These functions read what the
// walk needs in as few crossings as they can: all the children of a parent in
// one (`readChildren`), every fact of a candidate in one (`readCandidate`),
// writing numbers into buffers in wasm memory and returning at most one string.
// They only read: every decision stays in Rust.

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

// Style flags (the same constants in dom.rs), in the record's third number.
const POINTER = 1;
// It may paint over content that is not its own: positioned, transformed, floated,
// translucent or filtered. Only such an element's box can hide another's part of the page.
const COVER = 2;
// It clips its content to its padding box (`overflow` other than `visible`).
const CLIPS = 4;
// It clips its content to a shape its boxes do not give (`clip-path`, `clip`, or a clip
// under a transform): anything inside may be hidden.
const CLIPS_ANYHOW = 8;

/** What a computed style says about pointing, covering and clipping (the flags above). */
function styleFlags(s) {
  let f = s.getPropertyValue('cursor') === 'pointer' ? POINTER : 0;
  const position = s.getPropertyValue('position');
  const transformed = s.getPropertyValue('transform') !== 'none';
  if (
    position !== 'static' ||
    transformed ||
    s.getPropertyValue('float') !== 'none' ||
    s.getPropertyValue('opacity') !== '1' ||
    s.getPropertyValue('filter') !== 'none'
  ) {
    f |= COVER;
  }
  if (s.getPropertyValue('overflow') !== 'visible') f |= transformed ? CLIPS_ANYHOW : CLIPS;
  if (s.getPropertyValue('clip-path') !== 'none') f |= CLIPS_ANYHOW;
  if ((position === 'absolute' || position === 'fixed') && s.getPropertyValue('clip') !== 'auto') f |= CLIPS_ANYHOW;
  return f;
}

function displayCode(d) {
  if (d === 'none') return NONE;
  if (d === 'contents') return CONTENTS;
  return d.includes('flex') || d.includes('grid') ? FLEX_OR_GRID : BLOCK;
}

// Numbers go back through a buffer in wasm memory (dom.rs `FACTS`), viewed
// afresh whenever memory has grown: no array is allocated per call. Growing
// detaches a WebAssembly memory's old buffer, which empties every view of it (a
// cheap test: asking a memory for its buffer is not); wasm2js's memory replaces
// its buffer without detaching, so there the buffers must be compared.
let memory = null;
let detaches = false;
let base = 0;
let view = null;

/** Whether `v` no longer views the memory's current buffer. */
function stale(v) {
  return detaches ? v.length === 0 : v.buffer !== memory.buffer;
}
// Tag name → code (its position in dom.rs `TAGS`, plus one): common tags cross as a number.
let tagCodes = new Map();

function buffer() {
  if (view === null || stale(view)) view = new Float64Array(memory.buffer, base, 8);
  return view;
}

/** Called once: where the buffer is, and the tags that have codes (comma-separated). */
export function bind(mem, ptr, tags) {
  memory = mem;
  detaches = typeof WebAssembly === 'object' && mem instanceof WebAssembly.Memory;
  base = ptr;
  view = null;
  tagCodes = new Map(tags.split(',').map((t, i) => [t, i + 1]));
}

// The attributes that decide whether an element is interactive (semantics.rs);
// the rest are read (`readAttributes`) only for elements that are.
const DECIDING = new Set(['role', 'contenteditable', 'tabindex', 'onclick', 'inert', 'href', 'type', 'multiple']);

// One node's facts, as a record of 8 numbers (dom.rs `RECORD`): [kind (1 element,
// 3 text, 0 other), display, style flags (above), has children, open shadow root, child
// element count, tag code (0: the tag leads the string), string length in UTF-16
// units (-1: none)]. Only an element's first seven are meaningful beside its kind.

/**
 * An element's facts into `o` from `at` (see above). Style is read only when
 * `styled`. Returns nothing for a tag with a code and none of the DECIDING
 * attributes; else the tag (when it has no code), then each of those attributes
 * as NUL-separated name and value (HTML cannot hold NUL).
 */
function elementInto(o, at, el, win, styled) {
  const tag = el.localName;
  o[at] = 1;
  if (styled && !NO_STYLE.has(tag)) {
    const s = win.getComputedStyle(el);
    const display = displayCode(s.getPropertyValue('display'));
    o[at + 1] = display;
    // A hidden subtree is cut where it starts, and `contents` has no box: no more is asked.
    o[at + 2] = display === NONE || display === CONTENTS ? 0 : styleFlags(s);
  } else {
    o[at + 1] = UNREAD;
    o[at + 2] = 0;
  }
  o[at + 3] = el.firstChild !== null ? 1 : 0;
  o[at + 4] = el.shadowRoot !== null ? 1 : 0;
  o[at + 5] = el.childElementCount;
  const code = tagCodes.get(tag) || 0;
  o[at + 6] = code;
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
 * Any node, in one call: its record (see above) into the buffer, and its string
 * returned (a text's only when `wantText`).
 */
export function readNode(node, win, styled, wantText) {
  const o = buffer();
  const t = node.nodeType;
  let s;
  if (t === 1) {
    s = elementInto(o, 0, node, win, styled);
  } else {
    o[0] = t === 3 ? 3 : 0;
    if (t === 3 && wantText) s = readText(node);
  }
  o[7] = s === undefined ? -1 : s.length;
  return s;
}

// The children the walk has read, by depth: `batches[d]` holds the nodes the last
// `readChildren` at depth d wrote records for. Rust names such a node by its depth
// and index and asks for it as an object (`nodeAt`) only when it needs one: most
// nodes of a page never cross the boundary at all.
const batches = [];
const RECORD = 8;
let records = null;

/** The node a position names: `node` itself when Rust holds it, else index `i` of batch `d`. */
function at(node, d, i) {
  return node === undefined || node === null ? batches[d][i] : node;
}

export function nodeAt(d, i) {
  return batches[d][i];
}

/** Lets go of every node read: called when a walk ends. */
export function endWalk() {
  batches.length = 0;
}

/**
 * The children of a parent (named as `at` does) that the walk would use, read in
 * one call: elements, and texts that are not blank when `wantText` (comments,
 * blank text between tags and unwanted text are passed over here). Their records
 * go to the `cap` records at `ptr` in wasm memory, and they become batch `depth`.
 * Returns their strings joined (each record says its length); buffer[0] is their
 * number. When that is more than `cap`, nothing is returned and Rust asks again
 * with room for all.
 */
export function readChildren(parent, pd, pi, depth, win, styled, wantText, ptr, cap) {
  if (records === null || records.byteOffset !== ptr || records.length < cap * RECORD || stale(records)) {
    records = new Float64Array(memory.buffer, ptr, cap * RECORD);
  }
  const o = records;
  const kids = [];
  let joined = '';
  let n = 0;
  for (let node = at(parent, pd, pi).firstChild; node !== null; node = node.nextSibling) {
    const t = node.nodeType;
    let s;
    if (t === 1) {
      if (n < cap) s = elementInto(o, n * RECORD, node, win, styled);
    } else if (t === 3 && wantText) {
      s = readText(node);
      if (s === undefined) continue;
      if (n < cap) o[n * RECORD] = 3;
    } else {
      continue;
    }
    if (n < cap) {
      o[n * RECORD + 7] = s === undefined ? -1 : s.length;
      if (s !== undefined) joined += s;
    }
    kids.push(node);
    n += 1;
  }
  buffer()[0] = n;
  if (n > cap) return undefined;
  batches[depth] = kids;
  batches.length = depth + 1;
  return joined === '' ? undefined : joined;
}

/** Every attribute of an element, as `elementInto` returns them (after the tag). */
export function readAttributes(el) {
  return attributes(el, null);
}

/**
 * What the walk asks of every candidate, in one call: buffer = [x, y, width,
 * height]; when the box meets the region given (dom.rs `Bounds::meets`), also
 * buffer[4] = visible, and every attribute is returned, as `readAttributes`.
 */
export function readCandidate(node, d, i, left, top, right, bottom) {
  const el = at(node, d, i);
  const r = el.getBoundingClientRect();
  writeRect(r);
  if (!(r.x < right && r.y < bottom && r.x + r.width > left && r.y + r.height > top)) return undefined;
  buffer()[4] = el.checkVisibility(VISIBILITY) ? 1 : 0;
  return attributes(el, null);
}

/** Buffer: [x, y, width, height] of the element's border box. */
export function readRect(node, d, i) {
  writeRect(at(node, d, i).getBoundingClientRect());
}

function writeRect(r) {
  const o = buffer();
  o[0] = r.x;
  o[1] = r.y;
  o[2] = r.width;
  o[3] = r.height;
}

/**
 * Buffer: [left, top, width, height] of the element's padding box, which its content
 * is clipped to, relative to its border box (borders and scrollbars, under which
 * nothing shows, left out).
 */
export function readClipBox(node, d, i) {
  const el = at(node, d, i);
  const o = buffer();
  o[0] = el.clientLeft;
  o[1] = el.clientTop;
  o[2] = el.clientWidth;
  o[3] = el.clientHeight;
}

/** `Element.checkVisibility` with opacity and `visibility` checked. */
export function isVisible(node, d, i) {
  return at(node, d, i).checkVisibility(VISIBILITY);
}

/** Buffer: [x, y, width, height] of a text node's rendered text, measured with `range`. */
export function readTextRect(range, node, d, i) {
  range.selectNodeContents(at(node, d, i));
  writeRect(range.getBoundingClientRect());
}

/**
 * Paint facts: buffer = [position (0 static, 1 relative, 2 absolute, 3 fixed,
 * 4 sticky), z-index (NaN for auto), opacity, transform, filter, isolate,
 * display], as the strings computed style gives them reduced to numbers.
 */
export function readPaint(node, d, i, win) {
  const out = buffer();
  const s = win.getComputedStyle(at(node, d, i));
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
