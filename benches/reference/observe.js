// Plain-JS reference of the content script's observation walk
// (extension/src/content/{observe,semantics,occlusion,paint,dom}.rs), for the
// `observe_extraction` benchmark: the same pruning, hit-testing, names, states
// and fingerprints, written the way a hand-written JS extension would, so the
// Rust/WASM walker can be timed against it on the same page.
//
// It runs in the page's MAIN world (the benchmark injects this file's text with
// CDP `Runtime.evaluate`), so, unlike the content script, it cannot reach closed
// shadow roots (`chrome.dom.openOrClosedShadowRoot` is an extension API): those
// are skipped. Everything else follows the Rust code step by step, including the
// DOM calls it makes (and the order it makes them in), so that both walks do the
// same work. Type checks go by tag or node type, never `instanceof`: elements of
// same-origin frames belong to another realm.
//
// Defines one global: `window.__itineroReferenceObserve()` → an object shaped
// like `itinero_shared::observation::Observation` serialised by serde (same
// field names and order; `None` / empty fields left out where serde skips them).
(() => {
  'use strict';

  const PAGE_TEXT_MAX = 8000; // bytes (UTF-8), like the Rust `String::len`
  const TEXT_RUN_MAX = 300;
  // Text the tree carries beyond what is in view (bytes, UTF-8); in-view text is always kept.
  const TREE_TEXT_MAX = 24000;
  // observe.rs REACH_ABOVE, REACH_BELOW, REACH_SIDE: how far beyond the viewport the page is described.
  const REACH_ABOVE = 1.0;
  const REACH_BELOW = 2.0;
  const REACH_SIDE = 1.0;
  const NAME_MAX = 120;
  const SKIPPED = new Set([
    'script', 'style', 'noscript', 'template', 'head', 'meta', 'link', 'title', 'base',
  ]);
  const WIDGET_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'combobox', 'listbox', 'textbox', 'searchbox', 'slider',
    'spinbutton', 'treeitem', 'gridcell', 'scrollbar',
  ]);
  const NO_NAME_FROM_CONTENT = new Set([
    'combobox', 'listbox', 'textbox', 'searchbox', 'slider', 'spinbutton', 'scrollbar', 'progressbar',
    'menu', 'menubar', 'tablist', 'tabpanel', 'tree', 'treegrid', 'grid', 'radiogroup', 'toolbar',
  ]);
  const TEXT_INPUTS = new Set(['text', 'email', 'password', 'search', 'tel', 'url', 'number', '']);
  const NO_VALUE_INPUTS = new Set([
    'password', 'checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file', 'hidden',
  ]);
  const VISIBILITY_OPTIONS = { checkOpacity: true, checkVisibilityCSS: true };
  const ELEMENT_NODE = 1;
  const TEXT_NODE = 3;

  // Rust's `char::is_whitespace` (Unicode White_Space), which `split_whitespace` and `trim` use.
  const WS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
  const WS_RUN = new RegExp('[' + WS + ']+');
  const NON_WS = new RegExp('[^' + WS + ']');
  const TRIM = new RegExp('^[' + WS + ']+|[' + WS + ']+$', 'g');

  function splitWhitespace(s) {
    const parts = s.split(WS_RUN);
    // Leading / trailing whitespace leaves empty strings at the ends only.
    if (parts.length && parts[0] === '') parts.shift();
    if (parts.length && parts[parts.length - 1] === '') parts.pop();
    return parts;
  }

  function asciiLower(s) {
    return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  }

  // f64::round: halves away from zero (Math.round rounds them up).
  function rustRound(v) {
    return v < 0 ? -Math.round(-v) : Math.round(v);
  }

  function px(v) {
    return rustRound(v * 10) / 10;
  }

  /** dom::clean_text: whitespace collapsed and trimmed, cut to `max` characters (code points). */
  function cleanText(s, max) {
    let out = '';
    let count = 0;
    for (const word of splitWhitespace(s)) {
      if (count > 0) {
        out += ' ';
        count += 1;
      }
      // Fast path: a word of BMP characters that fits (the usual case).
      if (count + word.length <= max && !/[\ud800-\udfff]/.test(word)) {
        out += word;
        count += word.length;
        continue;
      }
      for (const c of word) {
        if (count >= max) {
          return out + '\u2026';
        }
        out += c;
        count += 1;
      }
    }
    return out;
  }

  function utf8Len(s) {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c <= 0xdbff) {
        n += 4;
        i += 1;
      } else n += 3;
    }
    return n;
  }

  /** Longest prefix of `s` whose UTF-8 length is at most `max` bytes (String::truncate at a char boundary). */
  function truncateUtf8(s, max) {
    let n = 0;
    let i = 0;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      const w = c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 4 : 3;
      if (n + w > max) break;
      n += w;
      i += w === 4 ? 2 : 1;
    }
    return s.slice(0, i);
  }

  // Attributes are read once per element, all together (dom.rs `Attrs`): most
  // lookups are for attributes the element does not have.
  let snapshotOf = null;
  let snapshot = [];

  function attributesOf(el) {
    if (el !== snapshotOf) {
      snapshotOf = el;
      snapshot = [];
      if (el.hasAttributes()) {
        for (const name of el.getAttributeNames()) snapshot.push(name, el.getAttribute(name));
      }
    }
    return snapshot;
  }

  function attr(el, name) {
    const a = attributesOf(el);
    for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
    return null;
  }

  function hasAttr(el, name) {
    return attr(el, name) !== null;
  }

  function nonEmptyAttr(el, name) {
    const v = attr(el, name);
    return v === null || v === '' ? null : v;
  }

  // ---- dom.rs ---------------------------------------------------------------------------------

  function isVisible(el) {
    return el.checkVisibility(VISIBILITY_OPTIONS);
  }

  /** Open shadow roots only: the main world cannot reach closed ones. */
  function shadowRoot(el) {
    return el.shadowRoot;
  }

  /** Topmost element at a point, descending into (open) shadow roots. Coordinates go through f32, as in web-sys. */
  function elementAt(doc, x, y) {
    const fx = Math.fround(x);
    const fy = Math.fround(y);
    let top = doc.elementFromPoint(fx, fy);
    if (top === null) return null;
    for (let i = 0; i < 32; i++) {
      const root = shadowRoot(top);
      if (!root) break;
      const inner = root.elementFromPoint(fx, fy);
      if (inner !== null && inner !== top) top = inner;
      else break;
    }
    return top;
  }

  /** `inner` is `outer` or inside it, across shadow boundaries. */
  function composedContains(outer, inner) {
    let node = inner;
    for (let i = 0; i < 4096; i++) {
      if (node === null || node === undefined) return false;
      if (node === outer) return true;
      const parent = node.parentNode;
      const host = node.nodeType === 11 ? node.host : null;
      node = parent !== null ? parent : typeof host === 'object' ? host : null;
    }
    return false;
  }

  // ---- occlusion.rs ---------------------------------------------------------------------------

  function pointerEvents(el) {
    const doc = el.ownerDocument;
    const win = doc && doc.defaultView;
    if (!win) return '';
    const style = win.getComputedStyle(el);
    return style ? style.getPropertyValue('pointer-events') : '';
  }

  const VISIBLE = { clipped: false, occluded: false, by: null };

  function inViewportPoint(px, py, viewport) {
    return px >= 0 && py >= 0 && px < viewport[0] && py < viewport[1];
  }

  /** occlusion.rs `points`: the five points of a box that lie in the viewport. */
  function testPoints(x, y, w, h, viewport) {
    return [
      [x + w * 0.5, y + h * 0.5],
      [x + w * 0.25, y + h * 0.25],
      [x + w * 0.75, y + h * 0.25],
      [x + w * 0.25, y + h * 0.75],
      [x + w * 0.75, y + h * 0.75],
    ].filter(([px, py]) => inViewportPoint(px, py, viewport));
  }

  const MAX_FRAGMENTS = 4;

  /** occlusion.rs `a_fragment_shows`: a wrapped inline element on top at one of its fragments. */
  function aFragmentShows(doc, el, viewport) {
    const rects = el.getClientRects();
    if (rects.length < 2) return false;
    for (let i = 0; i < Math.min(rects.length, MAX_FRAGMENTS); i++) {
      const r = rects[i];
      const px = r.x + r.width / 2;
      const py = r.y + r.height / 2;
      if (!inViewportPoint(px, py, viewport)) continue;
      const top = elementAt(doc, px, py);
      if (top !== null && composedContains(el, top)) return true;
    }
    return false;
  }

  function occlusionTest(doc, el, points, viewport) {
    if (points.length === 0) return VISIBLE;
    let ancestorsOnly = true;
    let cover = null;
    for (const [px, py] of points) {
      const top = elementAt(doc, px, py);
      if (top !== null) {
        if (composedContains(el, top)) return VISIBLE;
        if (!composedContains(top, el)) {
          ancestorsOnly = false;
          if (cover === null) cover = top;
        }
      } else {
        ancestorsOnly = false;
      }
    }
    if (aFragmentShows(doc, el, viewport)) return VISIBLE;
    if (ancestorsOnly && pointerEvents(el) !== 'none') {
      return { clipped: true, occluded: false, by: null };
    }
    return { clipped: false, occluded: true, by: cover === null ? null : describe(cover) };
  }

  function textVisibleAt(doc, parent, px, py, viewport) {
    if (!inViewportPoint(px, py, viewport)) return true;
    const top = elementAt(doc, px, py);
    if (top === null) return true;
    if (composedContains(parent, top)) return true;
    if (composedContains(top, parent)) return pointerEvents(parent) === 'none';
    return false;
  }

  // ---- overlap.rs ------------------------------------------------------------------------------

  // read.js style flags.
  const POINTER = 1;
  const COVER = 2;
  const CLIPS = 4;
  const CLIPS_ANYHOW = 8;
  const ESCAPES_CLIPS = 16;
  const CLIPS_EXACTLY = 32;
  const EXACT_OVERFLOW = /^(hidden|auto|scroll)( (hidden|auto|scroll))?$/;
  const CLIPPING_DISPLAY = /^(block|flow-root|inline-block|list-item|(inline-)?(flex|grid))$/;
  const NOWHERE = [0, 0, 0, 0];

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

  // read.js's test for a faraway subtree, copied: the reference runs alone in the page.
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
      for (let a = e.parentNode; a !== null && !set.has(a); a = a.parentNode) set.add(a);
    };
    const custom = doc.evaluate(CUSTOM_ELEMENTS, doc, null, XPathResult.UNORDERED_NODE_SNAPSHOT_TYPE, null);
    for (let i = 0; i < custom.snapshotLength; i++) mark(custom.snapshotItem(i));
    for (const e of doc.querySelectorAll(ESCAPING_ANYWAY)) {
      const topLayer = e.localName === 'dialog' || e.hasAttribute('popover');
      if (!topLayer && !ESCAPING_STYLE.test(e.getAttribute('style') ?? '')) continue;
      if (meetsRegion(e.getBoundingClientRect(), e, left, top, right, bottom)) mark(e);
    }
    if (doc.fullscreenElement) mark(doc.fullscreenElement);
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
    const doc = el.ownerDocument;
    if (el.shadowRoot !== null || el.localName.includes('-') || el.getRootNode() !== doc) return false;
    if (unsureOf(doc, left, top, right, bottom).has(el)) return false;
    const sel = escapeSelector(doc);
    if (sel === null) return false;
    if (sel !== '') {
      for (const e of el.querySelectorAll(sel)) {
        if (meetsRegion(e.getBoundingClientRect(), e, left, top, right, bottom)) return false;
      }
    }
    return true;
  }

  function boxContains(b, px, py) {
    return px >= b[0] && px < b[0] + b[2] && py >= b[1] && py < b[1] + b[3];
  }

  function spanHolds(span, order) {
    return span.order <= order && order <= span.end;
  }

  function Cover(span, r) {
    this.span = span;
    this.extent = [r.x, r.y, r.width, r.height];
  }

  Cover.prototype.grow = function (x, y, w, h) {
    if (w <= 0 || h <= 0) return;
    const e = this.extent;
    if (e[2] <= 0 || e[3] <= 0) {
      this.extent = [x, y, w, h];
      return;
    }
    const left = Math.min(e[0], x);
    const top = Math.min(e[1], y);
    const right = Math.max(e[0] + e[2], x + w);
    const bottom = Math.max(e[1] + e[3], y + h);
    this.extent = [left, top, right - left, bottom - top];
  };

  function coveredSomewhere(covers, points, span, ownsInside) {
    for (const c of covers) {
      const around = span !== null && spanHolds(c.span, span.order);
      const inside = ownsInside && span !== null && spanHolds(span, c.span.order);
      if (around || inside) continue;
      for (const [px, py] of points) if (boxContains(c.extent, px, py)) return true;
    }
    return false;
  }

  /** overlap.rs `inside_somewhere`. */
  function insideSomewhere(clip, points) {
    for (const [px, py] of points) if (clip === null || boxContains(clip, px, py)) return true;
    return false;
  }

  /** overlap.rs `wholly_outside`. */
  function whollyOutside(clip, x, y, w, h) {
    if (clip === null) return false;
    const [cx, cy, cw, ch] = clip;
    return x + w <= cx || y + h <= cy || x >= cx + cw || y >= cy + ch || cw <= 0 || ch <= 0;
  }

  function intersect(a, x, y, w, h) {
    if (a === null) return [x, y, Math.max(w, 0), Math.max(h, 0)];
    const left = Math.max(a[0], x);
    const top = Math.max(a[1], y);
    const right = Math.min(a[0] + a[2], x + w);
    const bottom = Math.min(a[1] + a[3], y + h);
    return [left, top, Math.max(right - left, 0), Math.max(bottom - top, 0)];
  }

  /** observe.rs `Test::by_layout`: true shows, false cut away, null only a hit test can tell. */
  function byLayout(t) {
    if (t.state.escaped) return null;
    if (t.cutAway) return false;
    return t.inClip && !coveredSomewhere(t.state.covers, t.points, t.span, t.ownsInside) ? true : null;
  }

  function describe(el) {
    let s = el.localName;
    const id = nonEmptyAttr(el, 'id');
    if (id !== null) {
      s += '#' + id;
    } else {
      const cls = attr(el, 'class');
      if (cls !== null) {
        const first = splitWhitespace(cls)[0];
        if (first !== undefined) s += '.' + first;
      }
    }
    const text = cleanText(el.textContent || '', 40);
    if (text !== '') s += ' "' + text + '"';
    return s;
  }

  // ---- semantics.rs ---------------------------------------------------------------------------

  // semantics.rs INPUT_TYPES: the keywords of an input's `type` attribute.
  const INPUT_TYPES = new Set([
    'hidden', 'text', 'search', 'tel', 'url', 'email', 'password', 'date', 'month', 'week',
    'time', 'datetime-local', 'number', 'range', 'color', 'checkbox', 'radio', 'file',
    'submit', 'image', 'reset', 'button',
  ]);

  /** `attrs`: the element has attributes at all (`hasAttributes()`), which saves asking for each one. */
  function inputType(el, tag, attrs = true) {
    if (tag === 'input') {
      // The attribute says it where it names a keyword or nothing; else the property.
      const t = attrs ? attr(el, 'type') : null;
      if (t === null) return 'text';
      const k = asciiLower(t);
      return INPUT_TYPES.has(k) ? k : asciiLower(String(el.type));
    }
    if (tag === 'button') {
      const t = attrs ? attr(el, 'type') : null;
      return asciiLower(t === null ? 'submit' : t);
    }
    return null;
  }

  function role(el, tag, itype, attrs = true) {
    if (!attrs) return implicitRole(el, tag, itype, false);
    const explicit = attr(el, 'role');
    if (explicit !== null) {
      const first = splitWhitespace(explicit)[0];
      if (first !== undefined) return first;
    }
    return implicitRole(el, tag, itype, true);
  }

  function implicitRole(el, tag, itype, attrs) {
    switch (tag) {
      case 'a':
        return attrs && hasAttr(el, 'href') ? 'link' : null;
      case 'button':
      case 'summary':
        return 'button';
      case 'select':
        return attrs && hasAttr(el, 'multiple') ? 'listbox' : 'combobox';
      case 'textarea':
        return 'textbox';
      case 'option':
        return 'option';
      case 'img':
        return 'img';
      case 'input':
        switch (itype === null ? 'text' : itype) {
          case 'checkbox':
            return 'checkbox';
          case 'radio':
            return 'radio';
          case 'range':
            return 'slider';
          case 'number':
            return 'spinbutton';
          case 'search':
            return 'searchbox';
          case 'button':
          case 'submit':
          case 'reset':
          case 'image':
            return 'button';
          default:
            return 'textbox';
        }
      case 'dialog':
        return 'dialog';
      default:
        return null;
    }
  }

  function isInteractive(el, tag, role, pointerCursor, attrs = true) {
    switch (tag) {
      case 'a':
        return (attrs && hasAttr(el, 'href')) || pointerCursor;
      case 'button':
      case 'select':
      case 'textarea':
      case 'summary':
        return true;
      case 'input':
        return el.type !== 'hidden';
      default:
        break;
    }
    if (role !== null && WIDGET_ROLES.has(role)) return true;
    if (!attrs) return pointerCursor;
    const ce = attr(el, 'contenteditable');
    if (ce !== null) {
      const l = asciiLower(ce);
      if (ce === '' || l === 'true' || l === 'plaintext-only') return true;
    }
    const tabindex = attr(el, 'tabindex');
    if (tabindex !== null) {
      // str::parse::<i32>: optional sign, ASCII digits, in range.
      const t = tabindex.replace(TRIM, '');
      if (/^[+-]?[0-9]+$/.test(t)) {
        const n = Number(t);
        if (n >= 0 && n <= 2147483647) return true;
      }
    }
    if (hasAttr(el, 'onclick')) return true;
    return pointerCursor;
  }

  function nonEmpty(s) {
    if (s === null || s === undefined) return null;
    const t = cleanText(s, NAME_MAX);
    return t === '' ? null : t;
  }

  function textByIds(doc, ids) {
    const parts = [];
    for (const id of splitWhitespace(ids)) {
      const e = doc.getElementById(id);
      if (e === null) continue;
      const text = e.textContent;
      if (text === null) continue;
      const t = cleanText(text, NAME_MAX);
      if (t !== '') parts.push(t);
    }
    return parts.join(' ');
  }

  // Name from content as a person reads it (read.js `contentText`): rendered text only, blocks
  // as words of their own, aria-hidden text left out unless it is all there is.
  const SILENT = new Set(['script', 'style', 'noscript', 'template']);
  const BLOCKS = new Set([
    'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'dialog', 'div',
    'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5',
    'h6', 'header', 'hr', 'legend', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary',
    'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul',
  ]);

  // read.js `CONTENT_ELEMENTS`: how many elements a name from content is gathered from.
  const CONTENT_ELEMENTS = 200;

  function addContent(out, s, muted) {
    out.shown += s;
    if (!muted) out.spoken += s;
  }

  function contentInto(parent, muted, out) {
    for (let c = parent.firstChild; c !== null; c = c.nextSibling) {
      const t = c.nodeType;
      if (t === 1 && --out.left < 0) return;
      if (t === TEXT_NODE) {
        addContent(out, c.data, muted);
      } else if (t === 1) {
        const tag = c.localName;
        if (SILENT.has(tag) || !c.checkVisibility(VISIBILITY_OPTIONS)) continue;
        const quiet = muted || c.getAttribute('aria-hidden') === 'true';
        const gap = BLOCKS.has(tag) || tag === 'svg' ? ' ' : '';
        addContent(out, gap, quiet);
        if (tag === 'svg') {
          for (const k of c.children) {
            if (k.localName !== 'title') continue;
            addContent(out, k.textContent, quiet);
            break;
          }
        } else if (c.hasChildNodes()) {
          contentInto(c, quiet, out);
        }
        addContent(out, gap, quiet);
      }
    }
  }

  function contentText(el) {
    if (el.childElementCount === 0) return el.textContent;
    const out = { shown: '', spoken: '', left: CONTENT_ELEMENTS };
    contentInto(el, false, out);
    return NON_WS.test(out.spoken) ? out.spoken : out.shown;
  }

  function labelText(el) {
    const list = el.labels;
    if (list === null || typeof list !== 'object') return null;
    const parts = [];
    for (let i = 0; i < list.length; i++) {
      const l = list.item(i);
      const text = l === null ? null : contentText(l);
      if (text !== null) {
        const t = cleanText(text, NAME_MAX);
        if (t !== '') parts.push(t);
      }
    }
    return parts.length ? parts.join(' ') : null;
  }

  /** Whether the element's explicit role lets its content name it (semantics.rs `named_by_content`). */
  function namedByContent(el) {
    const role = attr(el, 'role');
    if (role === null) return true;
    const first = splitWhitespace(role)[0];
    return first === undefined || !NO_NAME_FROM_CONTENT.has(first);
  }

  function accessibleName(doc, el, tag, itype) {
    const ids = attr(el, 'aria-labelledby');
    if (ids !== null) {
      const t = textByIds(doc, ids);
      if (t !== '') return t;
    }
    let t = nonEmpty(attr(el, 'aria-label'));
    if (t !== null) return t;
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      if (itype === 'submit' || itype === 'button' || itype === 'reset') {
        t = nonEmpty(attr(el, 'value'));
        return t !== null ? t : itype === 'reset' ? 'Reset' : 'Submit';
      }
      if (itype === 'image') {
        t = nonEmpty(attr(el, 'alt'));
        return t !== null ? t : nonEmpty(attr(el, 'title'));
      }
      t = labelText(el);
      if (t !== null) return t;
      t = nonEmpty(attr(el, 'placeholder'));
      if (t !== null) return t;
      return nonEmpty(attr(el, 'title'));
    }
    if (tag === 'img') {
      t = nonEmpty(attr(el, 'alt'));
      return t !== null ? t : nonEmpty(attr(el, 'title'));
    }
    if (!namedByContent(el)) return nonEmpty(attr(el, 'title'));
    t = nonEmpty(contentText(el));
    if (t !== null) return t;
    const img = el.querySelector('img[alt]');
    if (img !== null) {
      t = nonEmpty(attr(img, 'alt'));
      if (t !== null) return t;
    }
    return nonEmpty(attr(el, 'title'));
  }

  /**
   * An input's or a text area's `value`, read once for both `value` and `states` (as
   * semantics.rs `wants` asks); null where neither needs it.
   */
  function rawValue(el, tag, itype) {
    if (tag === 'textarea') return el.value;
    if (tag === 'input' && (!NO_VALUE_INPUTS.has(itype) || TEXT_INPUTS.has(itype))) return el.value;
    return null;
  }

  /** `raw`: as `rawValue` read it. */
  function value(el, tag, itype, raw) {
    let v = null;
    if (tag === 'input') {
      if (!NO_VALUE_INPUTS.has(itype)) v = cleanText(raw, NAME_MAX);
    } else if (tag === 'textarea') {
      v = cleanText(raw, NAME_MAX);
    } else if (tag === 'select') {
      const options = el.selectedOptions;
      const labels = [];
      for (let i = 0; i < options.length; i++) {
        const o = options.item(i);
        if (o !== null) labels.push(cleanText(o.text, NAME_MAX));
      }
      v = labels.join(', ');
    }
    return v === '' ? null : v;
  }

  /** `active`: the focused element of the element's document; `raw` as `rawValue` read it. */
  function states(active, el, tag, itype, raw) {
    const out = [];
    const input = tag === 'input' ? el : null;
    const checked =
      input !== null && (itype === 'checkbox' || itype === 'radio')
        ? input.checked
        : attr(el, 'aria-checked') === 'true';
    if (checked) out.push('checked');
    const selected =
      tag === 'option' ? el.selected : attr(el, 'aria-selected') === 'true';
    if (selected) out.push('selected');
    const d = el.disabled;
    if ((typeof d === 'boolean' && d) || attr(el, 'aria-disabled') === 'true') out.push('disabled');
    const expanded = attr(el, 'aria-expanded');
    if (expanded === 'true') out.push('expanded');
    else if (expanded === 'false') out.push('collapsed');
    if (tag === 'summary') {
      const details = el.parentElement;
      if (details !== null && details.localName === 'details') {
        out.push(details.hasAttribute('open') ? 'expanded' : 'collapsed');
      }
    }
    const formControl = tag === 'input' || tag === 'select' || tag === 'textarea';
    if ((formControl && hasAttr(el, 'required')) || attr(el, 'aria-required') === 'true') {
      out.push('required');
    }
    const textLike =
      tag === 'textarea' || (tag === 'input' && TEXT_INPUTS.has(itype === null ? '' : itype));
    if (textLike && raw === '') out.push('empty');
    const ariaInvalid = attr(el, 'aria-invalid');
    let invalid = ariaInvalid !== null && ariaInvalid !== 'false';
    if (!invalid && formControl) {
      // `validity.valid`, not `checkValidity()`: the latter fires events the page sees.
      const validity = el.validity;
      const valid =
        validity !== null && validity !== undefined && typeof validity.valid === 'boolean'
          ? validity.valid
          : true;
      invalid = !valid && !out.includes('empty');
    }
    if (invalid) out.push('invalid');
    if (formControl && hasAttr(el, 'readonly')) out.push('readonly');
    if (active === el) out.push('focused');
    return out;
  }

  // ---- paint.rs -------------------------------------------------------------------------------

  // str::parse::<i32>() and str::parse::<f64>() (finite decimal forms; computed values are never others).
  function parseI32(s) {
    if (!/^[+-]?[0-9]+$/.test(s)) return null;
    const n = Number(s);
    return n >= -2147483648 && n <= 2147483647 ? n : null;
  }

  function parseF64(s) {
    return /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$/.test(s) ? Number(s) : null;
  }

  /** paint::classify: the element's step in its context's paint key, and whether it groups its descendants. */
  function classifyPaint(style, parentFlexOrGrid, order) {
    const position = style.getPropertyValue('position');
    let z = parseI32(style.getPropertyValue('z-index'));
    const positioned = position !== '' && position !== 'static';
    if (!(positioned || parentFlexOrGrid)) z = null;
    const o = parseF64(style.getPropertyValue('opacity'));
    const opacity = o === null ? 1 : o;
    const context =
      z !== null ||
      position === 'fixed' ||
      position === 'sticky' ||
      opacity < 1 ||
      style.getPropertyValue('transform') !== 'none' ||
      style.getPropertyValue('filter') !== 'none' ||
      style.getPropertyValue('isolation') === 'isolate';
    const layer = z !== null && z < 0 ? 0 : z !== null && z > 0 ? 3 : positioned || context ? 2 : 1;
    return { step: [layer, z === null ? 0 : z, order], groupsChildren: context || positioned };
  }

  function isFlexOrGrid(display) {
    return display.includes('flex') || display.includes('grid');
  }

  /** Lexicographic order of keys (arrays of [layer, z, order] steps), as Rust's `Vec<(u8, i32, u32)>`. */
  function compareKeys(a, b) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const x = a[i];
      const y = b[i];
      if (x[0] !== y[0]) return x[0] - y[0];
      if (x[1] !== y[1]) return x[1] - y[1];
      if (x[2] !== y[2]) return x[2] - y[2];
    }
    return a.length - b.length;
  }

  /**
   * paint::ranks: each key's position in paint order (0 painted first). Keys
   * are only worked out in the viewport, where overlap can be seen: `null`
   * (outside) ranks after every key, in document order.
   */
  function paintRanks(keys) {
    const order = keys.map((_, i) => i);
    order.sort((a, b) => {
      const ka = keys[a];
      const kb = keys[b];
      if (ka === null || kb === null) return ka === kb ? a - b : ka === null ? 1 : -1;
      return compareKeys(ka, kb) || a - b;
    });
    const rank = new Array(keys.length);
    order.forEach((i, r) => {
      rank[i] = r;
    });
    return rank;
  }

  // ---- observe.rs -----------------------------------------------------------------------------

  function viewportOf(doc, win) {
    const iw = win.innerWidth;
    const ih = win.innerHeight;
    const root = doc.documentElement;
    if (root !== null) {
      const cw = root.clientWidth;
      const ch = root.clientHeight;
      if (cw > 0 && ch > 0) return [Math.min(cw, iw), Math.min(ch, ih)];
    }
    return [iw, ih];
  }

  // ---- scrolling.rs (what the observation asks of it) ------------------------------------------

  /** A box's scroll position and room, down the page. */
  function verticalPosition(el) {
    return [el.scrollTop, el.scrollHeight - el.clientHeight];
  }

  /** The nearest box from `el` up that scrolls down the page at all; null: the top page. */
  function verticalScroller(win, el) {
    const top = win.document.scrollingElement;
    let at = el;
    while (at !== null && at !== undefined) {
      if (at === top) return null;
      const doc = at.ownerDocument;
      const frameRoot = doc !== null && doc.scrollingElement === at;
      const overflow = win.getComputedStyle(at).getPropertyValue('overflow-y');
      const scrolls =
        overflow === 'auto' || overflow === 'scroll' || overflow === 'overlay' || (frameRoot && overflow === 'visible');
      if (scrolls && verticalPosition(at)[1] >= 1) return at;
      if (frameRoot) {
        const view = doc.defaultView;
        at = view === null ? null : view.frameElement;
      } else {
        let parent = at.parentElement;
        if (parent === null) {
          const root = at.getRootNode();
          parent = root instanceof ShadowRoot ? root.host : null;
        }
        at = parent;
      }
    }
    return null;
  }

  /** The element under the middle of a window `[vw, vh]`, inside shadow roots and same-origin frames. */
  function underCentre(win, doc, [vw, vh]) {
    let x = vw / 2;
    let y = vh / 2;
    let hit = elementAt(doc, x, y);
    if (hit === null) return null;
    for (let i = 0; i < 8; i++) {
      if (hit.localName !== 'iframe') break;
      const inner = hit.contentDocument;
      if (inner === null) break;
      const r = hit.getBoundingClientRect();
      const style = win.getComputedStyle(hit);
      const padding = (side) => parseFloat(style.getPropertyValue(side)) || 0;
      x -= r.left + hit.clientLeft + padding('padding-left');
      y -= r.top + hit.clientTop + padding('padding-top');
      const next = elementAt(inner, x, y);
      if (next === null) break;
      hit = next;
    }
    return hit;
  }

  /** The page's own pane down the page, where the document does not scroll that way. */
  function mainPane(win, doc, viewport) {
    const root = doc.scrollingElement;
    if (root === null || verticalPosition(root)[1] >= 1) return null;
    const centre = underCentre(win, doc, viewport);
    if (centre === null) return null;
    const pane = verticalScroller(win, centre);
    if (pane === null) return null;
    return pane.clientHeight * 2 >= viewport[1] ? pane : null;
  }

  /** Windows of the page above and below what is shown, to a tenth. */
  function pagesAboveBelow(win, doc, [vw, vh], scrollY) {
    const tenths = (pages) => rustRound(Math.max(pages, 0) * 10) / 10;
    const pane = mainPane(win, doc, [vw, vh]);
    if (pane !== null) {
      const [pos, room] = verticalPosition(pane);
      const len = Math.max(pane.clientHeight, 1);
      return [tenths(pos / len), tenths((room - pos) / len)];
    }
    const fullHeight = doc.documentElement !== null ? doc.documentElement.scrollHeight : vh;
    return [tenths(scrollY / Math.max(vh, 1)), tenths((fullHeight - scrollY - vh) / Math.max(vh, 1))];
  }

  function fingerprintKey(fp) {
    return JSON.stringify([fp.path, fp.tag, fp.name === undefined ? null : fp.name, fp.frame_path || []]);
  }

  /** A DomNode as serde writes it: optional fields only when set, in declaration order. */
  function domNode(tag, rect, inViewport, scrollContainer) {
    return {
      tag,
      rect,
      in_viewport: inViewport,
      occluded: false,
      scroll_container: scrollContainer,
      paint_order: 0,
      is_new: false,
    };
  }

  function Walk(previous, topViewport) {
    this.nextIndex = 0;
    this.previous = previous;
    this.seen = new Set();
    this.text = '';
    this.textBytes = 0;
    this.topViewport = topViewport;
    this.order = 0;
    // Boxes out of reach the walk did not enter (for the benchmark's census).
    this.notEntered = 0;
    this.paintKeys = [];
    // Interactive nodes, whose provisional paint_order indexes paintKeys.
    this.painted = [];
    // observe.rs `Mark`s, by the node they were left on (settled after the walk).
    this.marks = new Map();
    // The frame walked is covered (never, for the reference: it walks the top frame).
    this.covered = false;
    this.range = null;
    this.treeTextBytes = 0;
    // Each document's focused element, read once: focus does not move while walking.
    this.active = new Map();
  }

  Walk.prototype.activeOf = function (doc) {
    let a = this.active.get(doc);
    if (a === undefined) {
      a = doc.activeElement;
      this.active.set(doc, a);
    }
    return a;
  };

  /**
   * An element whose children are being walked: the facts about it that its
   * children may need, read only when one of them asks (observe.rs `Box_`).
   */
  function Box(el, span) {
    this.el = el;
    // Its place in document order ({order, end}); null for the page root and new boxes.
    this.span = span;
    this.visible = undefined;
    this.rect = undefined;
    // Its mark, when it is indexed: its own text needs no hit test when that shows it.
    this.mark = null;
  }

  Box.prototype.isVisible = function () {
    if (this.visible === undefined) this.visible = isVisible(this.el);
    return this.visible;
  };

  Box.prototype.boundingRect = function () {
    if (this.rect === undefined) this.rect = this.el.getBoundingClientRect();
    return this.rect;
  };

  /**
   * Paint facts of an element that is an ancestor of (or is) something indexed,
   * read lazily: most elements are never asked (observe.rs `PaintEntry`).
   */
  function PaintEntry(win, el, style, display, order, parent, span) {
    this.span = span;
    this.win = win;
    this.el = el;
    this.style = style;
    this.display = display;
    this.order = order;
    this.parent = parent;
    this.painting = undefined;
    this.key = undefined;
    this.context = undefined;
  }

  function styleOf(entry) {
    if (entry.style === null) entry.style = entry.win.getComputedStyle(entry.el);
    return entry.style;
  }

  function displayOf(entry) {
    if (entry.display === null) entry.display = styleOf(entry).getPropertyValue('display');
    return entry.display;
  }

  function paintingOf(entry) {
    if (entry.painting === undefined) {
      const parentFlexOrGrid = entry.parent !== null && isFlexOrGrid(displayOf(entry.parent));
      entry.painting = classifyPaint(styleOf(entry), parentFlexOrGrid, entry.order);
    }
    return entry.painting;
  }

  /** The key of the context that `entry`'s children are painted in. */
  function contextKey(entry) {
    if (entry === null) return [];
    if (entry.context === undefined) {
      entry.context = paintingOf(entry).groupsChildren ? keyOf(entry) : contextKey(entry.parent);
    }
    return entry.context;
  }

  function keyOf(entry) {
    if (entry.key === undefined) entry.key = contextKey(entry.parent).concat([paintingOf(entry).step]);
    return entry.key;
  }

  Walk.prototype.children = function (parent, ctx, out) {
    const counts = new Map();
    let child = parent.firstChild;
    while (child !== null) {
      const node = child;
      child = node.nextSibling;
      this.node(node, ctx, counts, out);
    }
  };

  Walk.prototype.node = function (node, ctx, counts, out) {
    const type = node.nodeType;
    if (type === ELEMENT_NODE) this.element(node, ctx, counts, out);
    else if (type === TEXT_NODE) this.textNode(node, ctx, out);
  };

  Walk.prototype.textNode = function (node, ctx, out) {
    // Past the budget, text under a box wholly off screen is not even read, nor ever under one out of reach.
    if (ctx.far || (this.treeTextBytes >= TREE_TEXT_MAX && ctx.outside)) return;
    const raw = node.textContent || '';
    if (!NON_WS.test(raw) || this.covered || ctx.muted) return;
    const parent = node.parentElement;
    if (parent === null) return;
    // Texts of the walked element share its facts; a slotted text's parent is elsewhere.
    const own = ctx.box !== null && ctx.box.el === parent;
    const box = own ? ctx.box : new Box(parent, null);
    if (this.treeTextBytes >= TREE_TEXT_MAX) {
      // Past the budget only text in view is kept: its element's box tells, without measuring the text.
      const b = box.boundingRect();
      const inView = b.right > 0 && b.bottom > 0 && b.left < ctx.viewport[0] && b.top < ctx.viewport[1];
      if (!inView) return;
    }
    if (this.range === null) this.range = ctx.doc.createRange();
    const range = this.range;
    range.selectNodeContents(node);
    const r = range.getBoundingClientRect();
    const x = r.x;
    const y = r.y;
    const w = r.width;
    const h = r.height;
    if (w < 2 || h < 2 || !reaches(ctx.reach, x, y, w, h)) return;
    if (!box.isVisible()) return;
    if (x + w <= 0 || y + h + ctx.scrollY <= 0) return;
    if (ctx.cover !== null) ctx.cover.grow(x, y, w, h);
    const cx = x + w / 2;
    const cy = y + h / 2;
    let mark = null;
    if (inViewportPoint(cx, cy, ctx.viewport)) {
      if (ctx.outside) ctx.state.escaped = true;
      const points = [[cx, cy]];
      mark = {
        test: {
          state: ctx.state,
          doc: ctx.doc,
          viewport: ctx.viewport,
          el: parent,
          points,
          span: own ? ctx.box.span : ctx.paint !== null ? ctx.paint.span : null,
          ownsInside: own,
          inClip: insideSomewhere(ctx.clip, points),
          cutAway: whollyOutside(ctx.exactClip, x, y, w, h),
          textOf: box.mark,
        },
        key: null,
        shown: false,
      };
    }
    const text = cleanText(raw, TEXT_RUN_MAX);
    this.treeTextBytes += utf8Len(text);
    const textNode = {
      tag: '#text',
      text,
      rect: { x: px(x + ctx.offset[0]), y: px(y + ctx.offset[1]), width: px(w), height: px(h) },
      in_viewport: false,
      occluded: false,
      scroll_container: false,
      paint_order: 0,
      is_new: false,
    };
    if (mark !== null) this.marks.set(textNode, mark);
    out.push(textNode);
  };

  /** shared `push_page_text`: the page text, bounded. */
  Walk.prototype.pushText = function (text) {
    if (this.textBytes >= PAGE_TEXT_MAX) return;
    if (this.text !== '') {
      this.text += ' ';
      this.textBytes += 1;
    }
    this.text += text;
    this.textBytes += utf8Len(text);
    if (this.textBytes > PAGE_TEXT_MAX) {
      this.text = truncateUtf8(this.text, PAGE_TEXT_MAX);
      this.textBytes = utf8Len(this.text);
    }
  };

  function withPath(ctx, path) {
    return {
      doc: ctx.doc,
      win: ctx.win,
      viewport: ctx.viewport,
      offset: ctx.offset,
      reach: ctx.reach,
      scrollY: ctx.scrollY,
      state: ctx.state,
      inert: ctx.inert,
      parentPointer: ctx.parentPointer,
      within: ctx.within,
      muted: ctx.muted,
      path,
      framePath: ctx.framePath,
      paint: ctx.paint,
      box: ctx.box,
      outside: ctx.outside,
      far: ctx.far,
      clip: ctx.clip,
      exactClip: ctx.exactClip,
      cover: ctx.cover,
    };
  }

  Walk.prototype.element = function (el, ctx, counts, out) {
    const tag = el.localName;
    if (SKIPPED.has(tag)) return;
    const nth = counts.get(tag) || 0;
    counts.set(tag, nth + 1);
    const path = ctx.path + '>' + tag + '[' + nth + ']';
    if (tag === 'slot') {
      // Rendered content of a slot: its assigned nodes, else its fallback children.
      const f = el.assignedNodes;
      const assigned = typeof f === 'function' ? Array.from(f.call(el, { flatten: true })) : [];
      const inner = withPath(ctx, path);
      if (assigned.length === 0) {
        this.children(el, inner, out);
      } else {
        const slotCounts = new Map();
        for (const n of assigned) this.node(n, inner, slotCounts, out);
      }
      return;
    }
    // Inside the viewport every element's style is read: hidden subtrees are cut
    // where they start and a pointer cursor marks a click target. Outside it
    // (an ancestor's box lies wholly off screen) markup alone decides.
    // An element with children in view is measured first: one out of reach with nothing
    // that could be drawn within it is not entered (read.js `farAndAlone`).
    let measuredFirst = null;
    if (!ctx.outside && el.hasChildNodes()) {
      measuredFirst = el.getBoundingClientRect();
      const b = ctx.reach;
      if (b !== null && farAndAlone(el, measuredFirst, b.left, b.top, b.right, b.bottom)) {
        this.notEntered += 1;
        return;
      }
    }
    let style = null;
    let display = null;
    let flags = 0;
    if (!ctx.outside) {
      style = ctx.win.getComputedStyle(el);
      display = style.getPropertyValue('display');
      if (display === 'none') return;
      if (display === 'contents') {
        // No box of its own, while its children render.
        this.children(el, withPath(ctx, path), out);
        return;
      }
      flags = styleFlags(style, display);
    }
    const pointer = (flags & POINTER) !== 0;
    const attrs = attributesOf(el).length > 0;
    const inert = ctx.inert || (attrs && hasAttr(el, 'inert'));
    this.order += 1;
    const span = { order: this.order, end: this.order };
    const entry = new PaintEntry(ctx.win, el, style, display, this.order, ctx.paint, span);
    const itype = inputType(el, tag, attrs);
    const rl = role(el, tag, itype, attrs);
    const isFrame = tag === 'iframe' || tag === 'frame';
    const candidate = !inert && isInteractive(el, tag, rl, pointer && !ctx.parentPointer, attrs);
    const box = new Box(el, span);
    if (measuredFirst !== null) box.rect = measuredFirst;
    // Its box, and what it draws beyond it, may hide others' (overlap.rs).
    let cover = null;
    if ((flags & COVER) !== 0) {
      cover = new Cover(span, box.boundingRect());
      ctx.state.covers.push(cover);
    }
    if (isFrame && !box.isVisible()) return;
    const root = isFrame ? null : shadowRoot(el);
    const hasChildren = el.hasChildNodes() || root !== null;
    let x = 0;
    let y = 0;
    let w = 0;
    let h = 0;
    let measured = false;
    if (candidate || isFrame || (hasChildren && !ctx.outside)) {
      const r = box.boundingRect();
      x = r.x;
      y = r.y;
      w = r.width;
      h = r.height;
      measured = true;
      if (ctx.cover !== null) ctx.cover.grow(x, y, w, h);
    }
    // Placed where no scrolling reaches (left of the page, above its top): nobody sees it.
    const offscreen = x + w <= 0 || y + h + ctx.scrollY <= 0;
    const tiny = measured && (w < 2 || h < 2);
    const reached = !measured || reaches(ctx.reach, x, y, w, h);
    if (isFrame && !reached) return;
    const interactive = candidate && reached && box.isVisible() && !offscreen && !tiny;
    const far = ctx.far || (measured && !tiny && !reached);
    const outside =
      ctx.outside ||
      (measured && !tiny && (x + w <= 0 || y + h <= 0 || x >= ctx.viewport[0] || y >= ctx.viewport[1]));
    const topRect = {
      x: px(x + ctx.offset[0]),
      y: px(y + ctx.offset[1]),
      width: px(w),
      height: px(h),
    };
    const inViewport = inViewportOf(this.topViewport, topRect);

    const node = domNode(tag, topRect, inViewport, false);
    // Positioned out of its ancestors' clips, it may show outside all of them.
    const exactClip = (flags & ESCAPES_CLIPS) !== 0 ? null : ctx.exactClip;
    // Whether it is covered or clipped away is settled after the walk (`settle`).
    let test = null;
    if ((interactive || isFrame) && inViewport && !this.covered) {
      if (ctx.outside) ctx.state.escaped = true;
      const points = testPoints(x, y, w, h, ctx.viewport);
      test = {
        state: ctx.state,
        doc: ctx.doc,
        viewport: ctx.viewport,
        el,
        points,
        span,
        ownsInside: true,
        inClip: insideSomewhere(ctx.clip, points),
        cutAway: whollyOutside(exactClip, x, y, w, h),
        textOf: undefined,
      };
    }
    const mark = interactive || test !== null ? { test, key: null, seen: null, shown: false } : null;
    let result = node;
    if (interactive) {
      const name = accessibleName(ctx.doc, el, tag, itype);
      const fingerprint = { tag };
      if (rl !== null) fingerprint.role = rl;
      if (name !== null) fingerprint.name = name;
      const id = nonEmptyAttr(el, 'id');
      if (id !== null) fingerprint.id = id;
      const nameAttr = nonEmptyAttr(el, 'name');
      if (nameAttr !== null) fingerprint.name_attr = nameAttr;
      let testId = attr(el, 'data-testid');
      if (testId === null) testId = attr(el, 'data-test-id');
      if (testId === null) testId = attr(el, 'data-test');
      if (testId !== null) fingerprint.test_id = testId;
      const ariaLabel = nonEmptyAttr(el, 'aria-label');
      if (ariaLabel !== null) fingerprint.aria_label = ariaLabel;
      fingerprint.path = path;
      if (ctx.framePath.length) fingerprint.frame_path = ctx.framePath.slice();
      const key = fingerprintKey(fingerprint);
      const isNew = this.previous !== null && !this.previous.has(key);
      const raw = rawValue(el, tag, itype);
      const v = value(el, tag, itype, raw);
      let href = null;
      if (tag === 'a' && attr(el, 'href') !== null) {
        const h = el.href;
        if (typeof h === 'string') href = h;
      }
      const placeholder = nonEmptyAttr(el, 'placeholder');
      const attributes = [];
      for (const a of ['name', 'id', 'aria-haspopup', 'aria-controls']) {
        const av = nonEmptyAttr(el, a);
        if (av !== null) attributes.push([a, av]);
      }
      const st = states(this.activeOf(ctx.doc), el, tag, itype, raw);
      // In serde's field order (the index, given out by `settle`, goes first).
      result = {};
      result.tag = tag;
      if (rl !== null) result.role = rl;
      if (name !== null) result.name = name;
      if (itype !== null) result.input_type = itype;
      if (v !== null) result.value = v;
      if (href !== null) result.href = href;
      if (placeholder !== null) result.placeholder = placeholder;
      if (attributes.length) result.attributes = attributes;
      if (st.length) result.states = st;
      result.rect = topRect;
      result.in_viewport = inViewport;
      result.occluded = false;
      result.scroll_container = scrollContainer(el, styleOf(entry));
      result.paint_order = 0;
      result.is_new = isNew;
      result.fingerprint = fingerprint;
      mark.key = inViewport ? keyOf(entry) : null;
      mark.seen = key;
      mark.el = el;
      box.mark = mark;
    }
    if (mark !== null) this.marks.set(result, mark);
    // What its content is clipped to.
    let clip = ctx.clip;
    let innerExactClip = exactClip;
    if (hasChildren && (flags & CLIPS_ANYHOW) !== 0) {
      clip = NOWHERE;
    } else if (hasChildren && (flags & CLIPS) !== 0) {
      const r = box.boundingRect();
      const [cx, cy, cw, ch] = [r.x + el.clientLeft, r.y + el.clientTop, el.clientWidth, el.clientHeight];
      clip = intersect(ctx.clip, cx, cy, cw, ch);
      const untransformed = Math.abs(r.width - (el.offsetWidth ?? NaN)) < 1 && Math.abs(r.height - (el.offsetHeight ?? NaN)) < 1;
      if ((flags & CLIPS_EXACTLY) !== 0 && untransformed) innerExactClip = intersect(exactClip, cx, cy, cw, ch);
    }

    const inner = {
      doc: ctx.doc,
      win: ctx.win,
      viewport: ctx.viewport,
      offset: ctx.offset,
      reach: ctx.reach,
      scrollY: ctx.scrollY,
      state: ctx.state,
      inert,
      parentPointer: pointer,
      // observe.rs `Ctx::within` and `Ctx::muted`.
      within: ctx.within || interactive,
      muted: ctx.muted || (ctx.within && attr(el, 'aria-hidden') === 'true'),
      path,
      framePath: ctx.framePath,
      paint: entry,
      box,
      outside,
      far,
      clip,
      exactClip: innerExactClip,
      cover: cover !== null ? cover : ctx.cover,
    };
    let kids = [];
    if (isFrame) {
      this.frame(el, x, y, inner, kids);
    } else if (root) {
      const shadow = withPath(inner, path + '/shadow');
      shadow.box = null;
      this.children(root, shadow, kids);
    } else if (
      hasChildren &&
      (!tiny || el.childElementCount > 0) &&
      tag !== 'select' &&
      tag !== 'textarea' &&
      tag !== 'option'
    ) {
      // A tiny box's own text is visually hidden (the sr-only pattern); its positioned children may not be.
      this.children(el, inner, kids);
      if (tiny) kids = kids.filter((n) => n.tag !== '#text');
    }
    span.end = this.order;

    if (interactive) {
      if (kids.length) result.children = kids;
      out.push(result);
    } else if (isFrame || (el.shadowRoot !== null && kids.length) || tag === 'dialog') {
      if (kids.length) {
        result.children = kids;
        result.occluded = false;
        if (!measured) {
          const r = box.boundingRect();
          result.rect = { x: px(r.x + ctx.offset[0]), y: px(r.y + ctx.offset[1]), width: px(r.width), height: px(r.height) };
          result.in_viewport = inViewportOf(this.topViewport, result.rect);
        }
        result.scroll_container = scrollContainer(el, styleOf(entry));
        out.push(result);
      }
    } else {
      // Plain containers are flattened away: their kept content joins the parent's.
      for (const k of kids) out.push(k);
    }
  };

  /**
   * observe.rs `Walk::settle`: what the walk left open, settled once every cover is
   * known; then indices, page text and paint keys in document order.
   */
  Walk.prototype.settle = function (nodes, covered) {
    const out = [];
    for (let node of nodes) {
      const mark = this.marks.get(node);
      if (node.tag === '#text') {
        if (covered || (mark !== undefined && !this.textShows(mark))) continue;
        this.pushText(node.text);
        out.push(node);
        continue;
      }
      let hidden = covered;
      const shows = mark === undefined || covered || mark.test === null ? true : byLayout(mark.test);
      if (shows === false) continue;
      if (shows === null) {
        const t = mark.test;
        const occ = occlusionTest(t.doc, t.el, t.points, t.viewport);
        if (occ.clipped) continue;
        if (occ.occluded) {
          hidden = true;
          if (occ.by !== null) node.occluded_by = occ.by;
        }
      }
      if (node.fingerprint !== undefined && mark !== undefined) {
        node.occluded = hidden;
        this.seen.add(mark.seen);
        mark.shown = !hidden && mark.test !== null;
        if (!hidden) node = Object.assign({ index: this.nextIndex++ }, node);
        node.paint_order = this.paintKeys.length;
        this.paintKeys.push(mark.key);
        this.painted.push(node);
      }
      if (node.children !== undefined) {
        const kids = this.settle(node.children, hidden);
        if (kids.length) node.children = kids;
        else delete node.children;
      }
      out.push(node);
    }
    return out;
  };

  /** observe.rs `Walk::text_shows`. */
  Walk.prototype.textShows = function (mark) {
    const t = mark.test;
    if (t.textOf !== null && t.textOf.shown) return true;
    const shows = byLayout(t);
    if (shows !== null) return shows;
    return textVisibleAt(t.doc, t.el, t.points[0][0], t.points[0][1], t.viewport);
  };

  /** observe.rs `Reach::bounds`: the described region in the viewport of a frame at `offset`. */
  function reachOf([vw, vh], offset) {
    return {
      left: -REACH_SIDE * vw - offset[0],
      top: -REACH_ABOVE * vh - offset[1],
      right: (1.0 + REACH_SIDE) * vw - offset[0],
      bottom: (1.0 + REACH_BELOW) * vh - offset[1],
    };
  }

  /** dom.rs `Bounds::meets`. */
  function reaches(b, x, y, w, h) {
    return x < b.right && y < b.bottom && x + w > b.left && y + h > b.top;
  }

  function inViewportOf(viewport, r) {
    return r.x < viewport[0] && r.y < viewport[1] && r.x + r.width > 0 && r.y + r.height > 0;
  }

  /** Whether the element scrolls its content: read only for nodes the observation keeps. */
  function scrollContainer(el, style) {
    const o = style.getPropertyValue('overflow-y');
    return (o === 'auto' || o === 'scroll') && el.scrollHeight > el.clientHeight + 1;
  }

  /** A same-origin iframe's document, walked in place. */
  Walk.prototype.frame = function (el, x, y, ctx, out) {
    const doc = el.contentDocument;
    const win = el.contentWindow;
    if (doc === null || win === null) return;
    const body = doc.body;
    if (body === null) return;
    const offset = [ctx.offset[0] + x + el.clientLeft, ctx.offset[1] + y + el.clientTop];
    const inner = {
      doc,
      win,
      viewport: viewportOf(doc, win),
      offset,
      reach: reachOf(this.topViewport, offset),
      scrollY: win.scrollY,
      // Another document, with boxes and clips of its own.
      state: { covers: [], escaped: false },
      inert: ctx.inert,
      parentPointer: false,
      within: ctx.within,
      muted: ctx.muted,
      path: ctx.path + '/frame',
      framePath: ctx.framePath,
      paint: ctx.paint,
      box: new Box(body, null),
      outside: ctx.outside,
      far: ctx.far,
      clip: null,
      exactClip: null,
      cover: null,
    };
    this.range = null;
    this.children(body, inner, out);
    this.range = null;
  };

  /** Observer::observe. `previous` (for `is_new`) persists on the window between calls. */
  function observe() {
    const win = window;
    const t0 = performance.now();
    const doc = win.document;
    const [vw, vh] = viewportOf(doc, win);
    const walk = new Walk(observe.previous, [vw, vh]);
    snapshotOf = null;
    const ctx = {
      doc,
      win,
      viewport: [vw, vh],
      offset: [0, 0],
      reach: reachOf([vw, vh], [0, 0]),
      scrollY: win.scrollY,
      state: { covers: [], escaped: false },
      inert: false,
      parentPointer: false,
      within: false,
      muted: false,
      path: '',
      framePath: [],
      paint: null,
      box: doc.body !== null ? new Box(doc.body, null) : null,
      outside: false,
      far: false,
      clip: null,
      exactClip: null,
      cover: null,
    };
    const walked = [];
    if (doc.body !== null) walk.children(doc.body, ctx, walked);
    const children = walk.settle(walked, walk.covered);
    escapeSelectors.clear();
    unsure.clear();
    // Provisional paint orders (indices into the key list) become ranks.
    const ranks = paintRanks(walk.paintKeys);
    for (const node of walk.painted) node.paint_order = ranks[node.paint_order];
    observe.previous = walk.seen;
    observe.census = { elements: walk.order, notEntered: walk.notEntered };
    const scrollX = win.scrollX;
    const scrollY = ctx.scrollY;
    const [pagesAbove, pagesBelow] = pagesAboveBelow(win, doc, [vw, vh], scrollY);
    const root = {
      tag: 'body',
      rect: { x: 0, y: 0, width: 0, height: 0 },
      in_viewport: false,
      occluded: false,
      scroll_container: false,
      paint_order: 0,
      is_new: false,
    };
    if (children.length) root.children = children;
    return {
      url: doc.URL,
      title: doc.title,
      viewport: { x: 0, y: 0, width: vw, height: vh },
      scroll_x: scrollX,
      scroll_y: scrollY,
      pages_above: pagesAbove,
      pages_below: pagesBelow,
      root,
      text: walk.text,
      snapshot_ms: performance.now() - t0,
    };
  }
  observe.previous = null;

  window.__itineroReferenceObserve = observe;
})();
