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

// A form's properties and methods are shadowed by its controls' names (`<input name="firstChild">`
// makes `form.firstChild` that input, `name="getAttribute"` its method), and a document's by its
// named images and forms: what the walk reads of a node it reads through the prototypes, which
// no name shadows (in this script's world, no page can change them either).
const getter = (proto, name) => Object.getOwnPropertyDescriptor(proto, name).get;
const nodeTypeOf = getter(Node.prototype, 'nodeType');
const firstChildOf = getter(Node.prototype, 'firstChild');
const nextSiblingOf = getter(Node.prototype, 'nextSibling');
const parentNodeOf = getter(Node.prototype, 'parentNode');
const ownerDocumentOf = getter(Node.prototype, 'ownerDocument');
const textContentOf = getter(Node.prototype, 'textContent');
const hasChildNodes = Node.prototype.hasChildNodes;
const getRootNode = Node.prototype.getRootNode;
const localNameOf = getter(Element.prototype, 'localName');
const shadowRootOf = getter(Element.prototype, 'shadowRoot');
const childCountOf = getter(Element.prototype, 'childElementCount');
const childrenOf = getter(Element.prototype, 'children');
const rectOf = Element.prototype.getBoundingClientRect;
const checkVisibility = Element.prototype.checkVisibility;
const getAttribute = Element.prototype.getAttribute;
const getAttributeNames = Element.prototype.getAttributeNames;
const hasAttribute = Element.prototype.hasAttribute;
const hasAttributes = Element.prototype.hasAttributes;
const selectAll = Element.prototype.querySelectorAll;
const docSelectAll = Document.prototype.querySelectorAll;
const docEvaluate = Document.prototype.evaluate;
const fullscreenOf = getter(Document.prototype, 'fullscreenElement');
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
// Its box and everything it holds lie out of the region walked (`farAndAlone`).
const FAR = 5;

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
// It is positioned out of its ancestors' clips (absolute or fixed; the top layer is fixed):
// what they leave says nothing certain about it.
const ESCAPES_CLIPS = 16;
// Its clip is its padding box and no more: a box, not an inline or table part (`overflow`
// does not apply to them), and no `overflow: clip` (whose margin may show more). Content
// wholly outside that box is cut away, which spares a hit test to say so.
const CLIPS_EXACTLY = 32;
const EXACT_OVERFLOW = /^(hidden|auto|scroll)( (hidden|auto|scroll))?$/;
const CLIPPING_DISPLAY = /^(block|flow-root|inline-block|list-item|(inline-)?(flex|grid))$/;

/**
 * What a computed style says about pointing, covering and clipping (the flags above);
 * `display` is its value, read already.
 */
function styleFlags(s, display) {
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
  const overflow = s.getPropertyValue('overflow');
  if (overflow !== 'visible') {
    f |= transformed ? CLIPS_ANYHOW : CLIPS;
    if (EXACT_OVERFLOW.test(overflow) && CLIPPING_DISPLAY.test(display)) f |= CLIPS_EXACTLY;
  }
  if (s.getPropertyValue('clip-path') !== 'none') f |= CLIPS_ANYHOW;
  if (position === 'absolute' || position === 'fixed') {
    f |= ESCAPES_CLIPS;
    if (s.getPropertyValue('clip') !== 'auto') f |= CLIPS_ANYHOW;
  }
  return f;
}

// Elements that may draw content outside their ancestors' boxes whatever the page's sheets
// say, each kind found in one native pass over the document: custom elements (a shadow tree
// no selector reaches may hold anything, and no selector matches a tag by its hyphen, so
// XPath finds them), inline styles that may position, move or animate, and dialogs and
// popovers (the top layer).
const CUSTOM_ELEMENTS = "//*[contains(local-name(), '-')]";
const ESCAPING_ANYWAY = '[style],dialog,[popover]';
const ESCAPING_STYLE = /position|transform|translate|animation|offset/i;

// Testing a box against the selector costs about as much per selector and element as
// walking the box costs per element once there are some dozens of selectors: past this many
// from the page's sheets, far boxes are entered as before.
const MAX_ESCAPERS = 32;

// A sheet's escapers, kept while its number of rules stays the same (style sheets are
// mostly added to, not edited in place); `null`: it cannot tell (see `sheetEscapersInto`).
const sheetCache = new WeakMap();
// Each document's selector, made once per walk (cleared by `endWalk`).
const escapeSelectors = new Map();
// Each document's elements that hold something drawn within the region whatever the sheets
// say (`unsureOf`), found once per walk (cleared by `endWalk`).
const unsure = new Map();

// Values that leave an element where its ancestors put it (`position`, `all`); any other
// (`absolute`, `fixed`, `inherit`, a `var()`) may not.
const STAYS = new Set(['', 'static', 'relative', 'sticky', 'initial', 'unset', 'revert', 'revert-layer']);

/** Whether a declared value sets anything (a `var()` or a keyword like `inherit` counts). */
function isSet(v) {
  return v !== '' && v !== 'none' && v !== 'initial';
}

/**
 * Whether a style rule's declarations may take an element out of its ancestors' boxes:
 * far enough to matter, as positioning, transforms and animations can. Relative offsets
 * and negative margins move content by its own size, not by viewports, and are let be.
 */
function mayEscape(style) {
  return (
    !STAYS.has(style.getPropertyValue('position')) ||
    !STAYS.has(style.getPropertyValue('all')) ||
    isSet(style.getPropertyValue('transform')) ||
    isSet(style.getPropertyValue('translate')) ||
    isSet(style.getPropertyValue('animation-name')) ||
    isSet(style.getPropertyValue('animation')) ||
    isSet(style.getPropertyValue('offset-path')) ||
    isSet(style.getPropertyValue('offset'))
  );
}

/**
 * A style rule's selector for the elements it styles: pseudo-elements are drawn by
 * their element, so the element stands for them. Each selector of the list is kept
 * apart; one left empty (a bare `::before`) stands for every element.
 */
function elementSelector(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth += 1;
    else if (c === ')' || c === ']') depth -= 1;
    else if ((c === ',' && depth === 0) || i === text.length) {
      const part = text
        .slice(start, i)
        .replace(/::[A-Za-z-]+(\([^)]*\))?/g, '')
        .replace(/:(before|after|first-line|first-letter)\b/gi, '')
        .trim();
      parts.push(part === '' || /[>+~]$/.test(part) ? '*' : part);
      start = i + 1;
    }
  }
  return parts.join(',');
}

/** Selectors of the rules in `rules` that may take an element out of its ancestors' boxes, into `out`; false when a rule cannot be read that way. */
function collectEscapers(rules, out, probe) {
  for (const r of rules) {
    if (r.type === 1) {
      // Nested rules' selectors are relative to their parent's: not worth resolving.
      if (r.cssRules !== undefined && r.cssRules.length > 0) return false;
      if (!mayEscape(r.style)) continue;
      const sel = elementSelector(r.selectorText);
      try {
        probe.querySelector(sel);
      } catch (e) {
        return false;
      }
      out.push(sel);
      // Far past `MAX_ESCAPERS` (repeats allowed for), the answer is no: reading on would not change it.
      if (out.length > 4 * MAX_ESCAPERS) return false;
    } else if (r.type === 3) {
      if (r.styleSheet !== null && !sheetEscapersInto(r.styleSheet, out, probe)) return false;
    } else if (r.type === 7 || r.type === 6) {
      // Keyframes apply through `animation`, which is looked for; pages are not printed.
    } else if (r.cssRules !== undefined) {
      // @scope limits its rules to subtrees a selector cannot tell apart.
      if ('start' in r) return false;
      if (!collectEscapers(r.cssRules, out, probe)) return false;
    }
  }
  return true;
}

/** A sheet's escapers (`collectEscapers`) into `out`, from the cache while it holds. */
function sheetEscapersInto(sheet, out, probe) {
  let rules;
  try {
    rules = sheet.cssRules;
  } catch (e) {
    // A sheet from another origin, which the page may not read.
    return false;
  }
  let known = sheetCache.get(sheet);
  if (known === undefined || known.count !== rules.length) {
    const found = [];
    known = { count: rules.length, selectors: collectEscapers(rules, found, probe) ? found : null };
    sheetCache.set(sheet, known);
  }
  if (known.selectors === null) return false;
  for (const s of known.selectors) out.push(s);
  return true;
}

/**
 * One selector for every element of `doc` that its style sheets may draw outside its
 * ancestors' boxes: positioned (absolute, fixed), transformed or animated (`''`: none).
 * `null` when the sheets cannot tell (one from another origin, nested or scoped rules), or
 * name too many such rules for the test to pay (`MAX_ESCAPERS`).
 */
function escapeSelector(doc) {
  let sel = escapeSelectors.get(doc);
  if (sel !== undefined) return sel;
  const found = [];
  const probe = doc.createDocumentFragment();
  sel = null;
  if (
    Array.prototype.every.call(doc.styleSheets, (s) => sheetEscapersInto(s, found, probe)) &&
    (doc.adoptedStyleSheets || []).every((s) => sheetEscapersInto(s, found, probe))
  ) {
    const distinct = new Set(found);
    if (distinct.size <= MAX_ESCAPERS) sel = [...distinct].join(',');
  }
  escapeSelectors.set(doc, sel);
  return sel;
}

/**
 * Whether a box `b` of element `e`, grown by what overflows it, meets the region (left,
 * top, right, bottom). Overflow grows a box right and down only: it is read for a box above
 * or left of the region.
 */
function meetsRegion(b, e, left, top, right, bottom) {
  return (
    b.x < right &&
    b.y < bottom &&
    (b.x + b.width > left || b.x + e.scrollWidth > left) &&
    (b.y + b.height > top || b.y + e.scrollHeight > top)
  );
}

/**
 * The ancestors of every custom element of `doc`, of every element `ESCAPING_ANYWAY`
 * finds that is drawn within the region, and of the fullscreen element.
 */
function unsureOf(doc, left, top, right, bottom) {
  let set = unsure.get(doc);
  if (set !== undefined) return set;
  set = new Set();
  const mark = (e) => {
    for (let a = parentNodeOf.call(e); a !== null && !set.has(a); a = parentNodeOf.call(a)) set.add(a);
  };
  const custom = docEvaluate.call(doc, CUSTOM_ELEMENTS, doc, null, XPathResult.UNORDERED_NODE_SNAPSHOT_TYPE, null);
  for (let i = 0; i < custom.snapshotLength; i++) mark(custom.snapshotItem(i));
  for (const e of docSelectAll.call(doc, ESCAPING_ANYWAY)) {
    const topLayer = localNameOf.call(e) === 'dialog' || hasAttribute.call(e, 'popover');
    if (!topLayer && !ESCAPING_STYLE.test(getAttribute.call(e, 'style') ?? '')) continue;
    if (meetsRegion(rectOf.call(e), e, left, top, right, bottom)) mark(e);
  }
  const full = fullscreenOf.call(doc);
  if (full) mark(full);
  unsure.set(doc, set);
  return set;
}

/**
 * Whether an element whose box `r` lies out of the region (left, top, right,
 * bottom), with what overflows it, draws nothing inside the region: then the walk
 * need not enter it. Content leaves its ancestors' boxes when something on the way is
 * positioned, transformed, animated or in the top layer; such elements (`unsureOf`,
 * `escapeSelector`) are measured, with what overflows them. Where the sheets cannot
 * tell, or a custom element may hold a shadow tree, the answer is no. Shadow roots
 * attached to built-in elements inside it are not looked for.
 */
function farAndAlone(el, r, left, top, right, bottom) {
  if (r.width < 2 || r.height < 2 || meetsRegion(r, el, left, top, right, bottom)) return false;
  const doc = ownerDocumentOf.call(el);
  if (shadowRootOf.call(el) !== null || localNameOf.call(el).includes('-') || getRootNode.call(el) !== doc) {
    return false;
  }
  if (unsureOf(doc, left, top, right, bottom).has(el)) return false;
  const sel = escapeSelector(doc);
  if (sel === null) return false;
  if (sel !== '') {
    for (const e of selectAll.call(el, sel)) {
      if (meetsRegion(rectOf.call(e), e, left, top, right, bottom)) return false;
    }
  }
  return true;
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
const RECORD = 12;
// Tag name → code (its position in dom.rs `TAGS`, plus one): common tags cross as a number.
let tagCodes = new Map();

function buffer() {
  if (view === null || stale(view)) view = new Float64Array(memory.buffer, base, RECORD + 1);
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

// Strings go back as UTF-8 in a buffer of their own in wasm memory (dom.rs `TEXT`) where
// they fit. Where the last read's string went is the number after the record in the buffer
// above (`STRING`): its length in bytes, or one of the codes below. The reads themselves
// return nothing: a returned string goes through glue that allocates in wasm memory and
// writes its place through a view of memory, on every call, even when there is none. One
// that does not fit waits in `kept` until Rust takes it (`takeGiven`).
const STRING = RECORD;
const NO_STRING = -1;
const KEPT = -2;
const encoder = new TextEncoder();
let textBase = 0;
let textCap = 0;
let textView = null;
let kept = '';

/** Where strings go (`give`), and how many bytes fit there; again whenever that grows. */
export function bindText(ptr, cap) {
  textBase = ptr;
  textCap = cap;
  textView = null;
}

/** The string the last read kept because it did not fit the buffer. */
export function takeGiven() {
  const s = kept;
  kept = '';
  return s;
}

/** Hands `s` (undefined: none) to Rust as `STRING` says. */
function give(s) {
  const o = buffer();
  if (s === undefined) {
    o[STRING] = NO_STRING;
  } else if (s.length * 3 > textCap) {
    // A UTF-16 unit takes at most three bytes in UTF-8.
    o[STRING] = KEPT;
    kept = s;
  } else {
    o[STRING] = put(s, 0);
  }
}

/**
 * Hands the first `n` of `parts` (`units` UTF-16 units in all) to Rust as one string, as
 * `give` does: written one after the other, they are never joined unless kept.
 */
function giveAll(parts, n, units) {
  const o = buffer();
  if (n === 0) {
    o[STRING] = NO_STRING;
  } else if (units * 3 > textCap) {
    o[STRING] = KEPT;
    let s = '';
    for (let k = 0; k < n; k++) s += parts[k];
    kept = s;
  } else {
    let at = 0;
    for (let k = 0; k < n; k++) at += put(parts[k], at);
    o[STRING] = at;
  }
}

/** Writes `s` as UTF-8 at byte `at` of the string buffer, which has room; returns its length there. */
function put(s, at) {
  if (textView === null || stale(textView)) textView = new Uint8Array(memory.buffer, textBase, textCap);
  const bytes = textView;
  // ASCII a unit at a time (most of a page is), the rest by the encoder: a call to it makes
  // an object to say what it wrote, which costs more than a short string's loop.
  const n = s.length;
  let i = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f) break;
    bytes[at + i] = c;
  }
  return i < n ? i + encoder.encodeInto(s.slice(i), bytes.subarray(at + i)).written : n;
}

// The attributes that decide whether an element is interactive (semantics.rs);
// the rest are read (`readAttributes`) only for elements that are.
// `aria-hidden` too: text under it inside an indexed element is left out (observe.rs `Ctx::muted`).
const DECIDING = new Set([
  'role', 'contenteditable', 'tabindex', 'onclick', 'inert', 'href', 'type', 'multiple', 'aria-hidden',
]);

// One node's facts, as a record of 12 numbers (dom.rs `RECORD`): [kind (1 element,
// 3 text, 0 other), display, style flags (above), has children, open shadow root, child
// element count, tag code (0: the tag leads the string), string length in UTF-16
// units (-1: none), then x, y, width, height of its border box (x NaN: not measured)].
// Only an element's are meaningful beside its kind.

/**
 * An element's facts into `o` from `at` (see above). Style is read only when
 * `styled`; then an element with children is measured first, and is not read further
 * when `farAndAlone` in the region (left, top, right, bottom). Returns nothing for a
 * tag with a code and none of the DECIDING attributes; else the tag (when it has no
 * code), then each of those attributes as NUL-separated name and value (HTML cannot
 * hold NUL).
 */
function elementInto(o, at, el, win, styled, left, top, right, bottom) {
  const tag = localNameOf.call(el);
  o[at] = 1;
  o[at + 8] = NaN;
  const styledHere = styled && !NO_STYLE.has(tag);
  // Not `firstChild`: a node handed to an isolated world is looked up in a table of its own.
  const hasChildren = hasChildNodes.call(el);
  let far = false;
  if (styledHere && hasChildren) {
    const r = rectOf.call(el);
    o[at + 8] = r.x;
    o[at + 9] = r.y;
    o[at + 10] = r.width;
    o[at + 11] = r.height;
    far = farAndAlone(el, r, left, top, right, bottom);
  }
  if (far) {
    o[at + 1] = FAR;
    o[at + 2] = 0;
  } else if (styledHere) {
    const s = win.getComputedStyle(el);
    const value = s.getPropertyValue('display');
    const display = displayCode(value);
    o[at + 1] = display;
    // A hidden subtree is cut where it starts, and `contents` has no box: no more is asked.
    o[at + 2] = display === NONE || display === CONTENTS ? 0 : styleFlags(s, value);
    readStyle = s;
  } else {
    o[at + 1] = UNREAD;
    o[at + 2] = 0;
  }
  o[at + 3] = hasChildren ? 1 : 0;
  o[at + 4] = shadowRootOf.call(el) !== null ? 1 : 0;
  o[at + 5] = childCountOf.call(el);
  const code = tagCodes.get(tag) || 0;
  o[at + 6] = code;
  // Not entered (far or hidden): only its tag still counts, for its siblings' paths.
  let attrs = '';
  if (!far && o[at + 1] !== NONE && hasAttributes.call(el)) {
    readNames = getAttributeNames.call(el);
    attrs = attributes(el, readNames, DECIDING);
  }
  if (code !== 0) return attrs === '' ? undefined : attrs;
  return tag + attrs;
}

// What the last `elementInto` read besides its record, kept with the batch (`readChildren`)
// so that the walk's later questions about the same element do not read it again: its
// computed style, and its attributes' names (`NO_NAMES`: none read).
let readStyle = null;
const NO_NAMES = [];
let readNames = NO_NAMES;

/**
 * Attributes of `el` named in `names` (all, or those also in `only`) as NUL-separated name and
 * value, each led by a NUL.
 */
function attributes(el, names, only) {
  let s = '';
  for (const name of names) {
    if (only === null || only.has(name)) s += '\0' + name + '\0' + getAttribute.call(el, name);
  }
  return s;
}

/** All of an element's attributes, as `attributes` writes them. */
function allAttributes(el) {
  return hasAttributes.call(el) ? attributes(el, getAttributeNames.call(el), null) : '';
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
 * given (a text's only when `wantText`); the region as `elementInto` takes it.
 */
export function readNode(node, win, styled, wantText, left, top, right, bottom) {
  const o = buffer();
  const t = nodeTypeOf.call(node);
  let s;
  if (t === 1) {
    s = elementInto(o, 0, node, win, styled, left, top, right, bottom);
  } else {
    o[0] = t === 3 ? 3 : 0;
    if (t === 3 && wantText) s = readText(node);
  }
  o[7] = s === undefined ? -1 : s.length;
  give(s);
}

// The children the walk has read, by depth: `batches[d]` holds the nodes the last
// `readChildren` at depth d wrote records for. Rust names such a node by its depth
// and index and asks for it as an object (`nodeAt`) only when it needs one: most
// nodes of a page never cross the boundary at all. `styles[d]` and `names[d]` hold,
// at the same places, what `elementInto` read of each (null and `NO_NAMES` where it did not).
// The arrays are kept from walk to walk and refilled, and the strings of a batch are
// gathered in `parts`: garbage made per walk is collected in the walk's own time.
const batches = [];
const styles = [];
const names = [];
const parts = [];
let records = null;

/** The array at `d` of `arrays`, emptied of what it held: made the first time a walk gets so deep. */
function refill(arrays, d) {
  while (arrays.length <= d) arrays.push([]);
  return arrays[d];
}

/** Whether a position names a node of a batch, not one Rust holds. */
function batched(node) {
  return node === undefined || node === null;
}

/** The node a position names: `node` itself when Rust holds it, else index `i` of batch `d`. */
function at(node, d, i) {
  return batched(node) ? batches[d][i] : node;
}

/** The computed style of the node a position names, read by the walk where it can be. */
function styleAt(node, d, i, win) {
  return (batched(node) ? styles[d][i] : null) ?? win.getComputedStyle(at(node, d, i));
}

export function nodeAt(d, i) {
  return batches[d][i];
}

/** Lets go of every node read (keeping the arrays that held them): called when a walk ends. */
export function endWalk() {
  for (const arrays of [batches, styles, names]) {
    for (const a of arrays) a.length = 0;
  }
  parts.length = 0;
  escapeSelectors.clear();
  unsure.clear();
}

/**
 * The children of a parent (named as `at` does) that the walk would use, read in
 * one call: elements, and texts that are not blank when `wantText` (comments,
 * blank text between tags and unwanted text are passed over here); the region (left,
 * top, right, bottom) is the one `elementInto` skips what lies wholly out of. Their records
 * go to the `cap` records at `ptr` in wasm memory, and they become batch `depth`.
 * Gives their strings joined (`give`; each record says its length); buffer[0] is their
 * number. When that is more than `cap`, nothing is given and Rust asks again
 * with room for all.
 */
export function readChildren(parent, pd, pi, depth, win, styled, wantText, left, top, right, bottom, ptr, cap) {
  if (records === null || records.byteOffset !== ptr || records.length < cap * RECORD || stale(records)) {
    records = new Float64Array(memory.buffer, ptr, cap * RECORD);
  }
  const o = records;
  // The parent is found before its batch's depth (deeper than its own) is refilled.
  const first = firstChildOf.call(at(parent, pd, pi));
  const kids = refill(batches, depth);
  const kidStyles = refill(styles, depth);
  const kidNames = refill(names, depth);
  let units = 0;
  let given = 0;
  let n = 0;
  for (let node = first; node !== null; node = nextSiblingOf.call(node)) {
    const t = nodeTypeOf.call(node);
    let s;
    readStyle = null;
    readNames = NO_NAMES;
    if (t === 1) {
      if (n < cap) s = elementInto(o, n * RECORD, node, win, styled, left, top, right, bottom);
    } else if (t === 3 && wantText) {
      s = readText(node);
      if (s === undefined) continue;
      if (n < cap) o[n * RECORD] = 3;
    } else {
      continue;
    }
    if (n < cap) {
      o[n * RECORD + 7] = s === undefined ? -1 : s.length;
      if (s !== undefined) {
        parts[given++] = s;
        units += s.length;
      }
    }
    kids[n] = node;
    kidStyles[n] = readStyle;
    kidNames[n] = readNames;
    n += 1;
  }
  kids.length = n;
  kidStyles.length = n;
  kidNames.length = n;
  buffer()[0] = n;
  if (n > cap) return;
  // What `parts` holds past `given` is from an earlier batch: overwritten, or let go when the walk ends.
  giveAll(parts, given, units);
}

/** Every attribute of an element, as `elementInto` returns them (after the tag). */
export function readAttributes(el) {
  return allAttributes(el);
}

/**
 * What the walk asks of every candidate, in one call: buffer = [x, y, width,
 * height]; when the box meets the region given (dom.rs `Bounds::meets`), also
 * buffer[4] = visible, and every attribute is given (`give`), as `readAttributes` returns them. A box
 * measured already (`elementInto`) is passed in (`x` NaN: none).
 */
export function readCandidate(node, d, i, left, top, right, bottom, x, y, width, height) {
  const el = at(node, d, i);
  if (Number.isNaN(x)) {
    const r = rectOf.call(el);
    x = r.x;
    y = r.y;
    width = r.width;
    height = r.height;
  }
  const o = buffer();
  o[0] = x;
  o[1] = y;
  o[2] = width;
  o[3] = height;
  if (!(x < right && y < bottom && x + width > left && y + height > top)) {
    give(undefined);
    return;
  }
  buffer()[4] = checkVisibility.call(el, VISIBILITY) ? 1 : 0;
  // The walk read the names of a batched element already; one it read none of has none.
  give(batched(node) ? attributes(el, names[d][i], null) : allAttributes(el));
}

/** Buffer: [x, y, width, height] of the element's border box. */
export function readRect(node, d, i) {
  writeRect(rectOf.call(at(node, d, i)));
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
 * nothing shows, left out); then its layout width and height, which differ from its
 * measured box where it or an ancestor is scaled or turned (NaN where it has none).
 */
export function readClipBox(node, d, i) {
  const el = at(node, d, i);
  const o = buffer();
  o[0] = el.clientLeft;
  o[1] = el.clientTop;
  o[2] = el.clientWidth;
  o[3] = el.clientHeight;
  o[4] = el.offsetWidth ?? NaN;
  o[5] = el.offsetHeight ?? NaN;
}

/** `Element.checkVisibility` with opacity and `visibility` checked. */
export function isVisible(node, d, i) {
  return checkVisibility.call(at(node, d, i), VISIBILITY);
}

// What `readIndexed` is asked for besides the properties every indexed element has (the
// same constants in dom.rs).
const WANT_CONTENT = 1;
const WANT_HREF = 2;
const WANT_VALUE = 4;
const WANT_EMPTY = 8;
const WANT_CHECKED = 16;
const WANT_SELECTED = 32;
const WANT_LABELS = 64;
const WANT_OPTIONS = 128;
const indexedParts = [];

/** The text of each item of `list` (`textOf`), NUL-separated (HTML cannot hold NUL). */
function nulJoined(list, textOf) {
  let s = '';
  for (let k = 0; k < list.length; k++) {
    const item = list.item(k);
    s += (k === 0 ? '' : '\0') + ((item === null ? null : textOf(item)) ?? '');
  }
  return s;
}

/** The text a person reads in each of a control's labels (`nulJoined`); null where it has no list of labels. */
function labelTexts(el) {
  const list = el.labels;
  if (list === null || typeof list !== 'object') return null;
  return nulJoined(list, contentText);
}

// Name from content, as a person reads it (accname's step F, as far as markup and rendering
// tell it). `textContent` would also give the text of what is not rendered (a spinner's
// "Saving…", a tooltip shown on hover), the words of an icon font's ligatures (`aria-hidden`
// "shopping_cart" beside "Cart") and blocks run together where the markup has no whitespace
// between them, as JSX writes it ("Wool socks$12.00").
const SILENT = new Set(['script', 'style', 'noscript', 'template']);
// Elements a browser lays out as blocks (or breaks): their text is a word of its own.
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'dialog', 'div',
  'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5',
  'h6', 'header', 'hr', 'legend', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary',
  'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul',
]);
// What `contentInto` gathers: all the rendered text, and that text less what is aria-hidden.
let shownText = '';
let spokenText = '';
// How many more elements `contentInto` may enter. A name is cut to 120 characters, and a
// region made focusable for its scrolling (`tabindex="0"`) may hold a whole table: its first
// elements already say more than fits.
const CONTENT_ELEMENTS = 200;
let contentLeft = 0;

/** Adds `s` to the rendered text, and to the spoken text unless it is `muted` (aria-hidden). */
function addContent(s, muted) {
  shownText += s;
  if (!muted) spokenText += s;
}

function contentInto(parent, muted) {
  for (let c = firstChildOf.call(parent); c !== null; c = nextSiblingOf.call(c)) {
    const t = nodeTypeOf.call(c);
    if (t === 1 && --contentLeft < 0) return;
    if (t === 3) {
      addContent(c.data, muted);
    } else if (t === 1) {
      const tag = localNameOf.call(c);
      if (SILENT.has(tag) || !checkVisibility.call(c, VISIBILITY)) continue;
      const quiet = muted || getAttribute.call(c, 'aria-hidden') === 'true';
      const gap = BLOCKS.has(tag) || tag === 'svg' ? ' ' : '';
      addContent(gap, quiet);
      if (tag === 'svg') {
        // Its text is drawing; its name is its own `<title>`.
        for (const k of childrenOf.call(c)) {
          if (localNameOf.call(k) !== 'title') continue;
          addContent(textContentOf.call(k), quiet);
          break;
        }
      } else if (hasChildNodes.call(c)) {
        contentInto(c, quiet);
      }
      addContent(gap, quiet);
    }
  }
}

/**
 * The text a person reads in `el`: its rendered text, less what is marked `aria-hidden`
 * unless that is all there is (a lone "×" is what a person reads on its button).
 */
export function contentText(el) {
  if (childCountOf.call(el) === 0) return textContentOf.call(el);
  shownText = '';
  spokenText = '';
  contentLeft = CONTENT_ELEMENTS;
  contentInto(el, false);
  const s = NON_BLANK.test(spokenText) ? spokenText : shownText;
  shownText = '';
  spokenText = '';
  return s;
}

/** The text of a select's chosen options (`nulJoined`). */
function optionTexts(el) {
  return nulJoined(el.selectedOptions, (o) => o.text);
}

/** Adds `s` to the strings `readIndexed` gives, its length at `o[k]`; returns its length (0: none). */
function indexedPart(o, k, s) {
  if (typeof s !== 'string') {
    o[k] = -1;
    return 0;
  }
  o[k] = s.length;
  indexedParts.push(s);
  return s.length;
}

/**
 * What the walk reads of an element it indexes, in one call (each property asked for by
 * name from Rust is a crossing of its own, with a string copied across for each string):
 * buffer = [disabled (the `disabled` property), invalid (`validity.valid` false; read only
 * for a form control, `control`), scrolls (as `readScrolls`), focused (it is `active`, its
 * document's focused element), checked, selected, empty (its `value` is ''), then the
 * lengths in UTF-16 units of its text content, its resolved `href`, its `value`, its labels'
 * text (`labelTexts`) and its chosen options' (`optionTexts`) (-1: not asked for, or none)].
 * Those strings are given joined, in that order (`giveAll`). `want` (the flags above) says
 * which of checked, selected, empty and the strings to read: a password's value is only ever
 * asked whether it is empty. Returns the element, which Rust keeps to act on.
 */
export function readIndexed(node, d, i, win, control, active, want) {
  const el = at(node, d, i);
  const o = buffer();
  o[0] = el.disabled === true ? 1 : 0;
  const v = control ? el.validity : undefined;
  o[1] = v !== undefined && v !== null && v.valid === false ? 1 : 0;
  o[2] = readScrolls(node, d, i, win) ? 1 : 0;
  o[3] = el === active ? 1 : 0;
  o[4] = (want & WANT_CHECKED) !== 0 && el.checked === true ? 1 : 0;
  o[5] = (want & WANT_SELECTED) !== 0 && el.selected === true ? 1 : 0;
  const content = (want & WANT_CONTENT) !== 0 ? contentText(el) : null;
  const href = (want & WANT_HREF) !== 0 ? el.href : null;
  const value = (want & (WANT_VALUE | WANT_EMPTY)) !== 0 ? el.value : null;
  o[6] = (want & WANT_EMPTY) !== 0 && value === '' ? 1 : 0;
  const units =
    indexedPart(o, 7, content) +
    indexedPart(o, 8, href) +
    indexedPart(o, 9, (want & WANT_VALUE) !== 0 ? value : null) +
    indexedPart(o, 10, (want & WANT_LABELS) !== 0 ? labelTexts(el) : null) +
    indexedPart(o, 11, (want & WANT_OPTIONS) !== 0 ? optionTexts(el) : null);
  giveAll(indexedParts, indexedParts.length, units);
  indexedParts.length = 0;
  return el;
}

/**
 * Whether `inner` is `outer` or inside it in the composed tree: a shadow root's parent is its
 * host (found by node type: another realm's roots fail `instanceof`). In one call, where a
 * step at a time from Rust crosses twice per ancestor.
 */
export function composedContains(outer, inner) {
  let n = inner;
  while (n !== null && n !== undefined) {
    if (n === outer) return true;
    const parent = parentNodeOf.call(n);
    n = parent !== null ? parent : nodeTypeOf.call(n) === 11 ? n.host : null;
  }
  return false;
}

/** Buffer: [x, y, width, height] of a text node's rendered text, measured with `range`. */
export function readTextRect(range, node, d, i) {
  range.selectNodeContents(at(node, d, i));
  writeRect(range.getBoundingClientRect());
}

/**
 * Paint facts: buffer = [position (0 static, 1 relative, 2 absolute, 3 fixed,
 * 4 sticky), z-index (NaN for auto), opacity, groups, display (4, unread, unless
 * `wantDisplay`: the walk has usually read it already)], as the strings computed
 * style gives them reduced to numbers. `groups` (a transform, a filter or
 * `isolation: isolate`, each of which makes a stacking context) is only looked for
 * where nothing read before it already makes one, and stops at the first it finds.
 */
export function readPaint(node, d, i, win, wantDisplay) {
  const out = buffer();
  const s = styleAt(node, d, i, win);
  const p = s.getPropertyValue('position');
  const position = p === 'relative' ? 1 : p === 'absolute' ? 2 : p === 'fixed' ? 3 : p === 'sticky' ? 4 : 0;
  out[0] = position;
  const z = s.getPropertyValue('z-index');
  out[1] = /^[+-]?[0-9]+$/.test(z) ? Number(z) : NaN;
  const o = Number(s.getPropertyValue('opacity'));
  out[2] = Number.isFinite(o) ? o : 1;
  const context = position >= 3 || out[2] < 1 || (position !== 0 && !Number.isNaN(out[1]));
  out[3] =
    !context &&
    (s.getPropertyValue('transform') !== 'none' ||
      s.getPropertyValue('filter') !== 'none' ||
      s.getPropertyValue('isolation') === 'isolate')
      ? 1
      : 0;
  out[4] = wantDisplay ? displayCode(s.getPropertyValue('display')) : 4;
}

/** Whether the element scrolls its content vertically (and has content to scroll). */
export function readScrolls(node, d, i, win) {
  const el = at(node, d, i);
  const o = styleAt(node, d, i, win).getPropertyValue('overflow-y');
  return (o === 'auto' || o === 'scroll') && el.scrollHeight > el.clientHeight + 1;
}

// What is read of a form goes through the prototypes (see the top of this file).

/** `el`'s attribute `name`, or null, whatever its controls are named. */
export function attributeOf(el, name) {
  return getAttribute.call(el, name);
}

/** The attribute `name` of each element under `root` that `selector` matches, in order. */
export function attributesIn(root, selector, name) {
  return Array.from(selectAll.call(root, selector), e => getAttribute.call(e, name) ?? '');
}
