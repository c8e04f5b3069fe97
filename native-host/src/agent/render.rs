//! The compact text form of an [`Observation`] that the model reads.
//!
//! ```text
//! Page: Sign in — https://shop.example/login
//! ... 1.5 pages above
//! [3]<input type=email name=email placeholder="Email" required empty>
//! *[4]<button>Sign in</button>
//! Forgot your password? [5]<a href="/reset">Reset it</a>
//! Our shop ships worldwide.
//! ... 2.5 pages below
//! ```
//!
//! The tree is walked in document order. Text accumulates on the current line;
//! an indexed element is appended to the line and ends it. Text that follows an
//! element on the same row of the page (its box beside the element's) joins the
//! element's line, so a price after a product link reads with that link, not with
//! the next one, unless its name says it already (a check box's label after it); text
//! on another row than the element after it is a line of its own.
//! `*` marks elements that are new since the previous observation. When the page does not fit the
//! token budget, every element in the viewport is kept (with the text before it
//! on its line), then as many lines as fit from the top of the page; dropped
//! stretches show as a `...` line and one closing line says what was cut.
//!
//! Pure string work with no I/O, so its output is deterministic: the same page gives the
//! same prompt, which a KV cache and the action cache's keys both rely on.

use itinero_shared::observation::{DomNode, Observation, Rect};

/// How much of the page to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// Budget, in estimated tokens (see [`estimate_tokens`]), for the whole
    /// rendering: header, scroll lines, page lines and the cut line. Elements
    /// in the viewport are kept even when they alone exceed it.
    pub max_tokens: usize,
    /// Longest accessible name, value, placeholder, href or attribute value, in chars.
    pub max_name_chars: usize,
    /// Longest text run (one text node), and longest title and URL, in chars.
    pub max_text_chars: usize,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            max_tokens: 2000,
            max_name_chars: 80,
            max_text_chars: 200,
        }
    }
}

/// The rendering and what it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// [`estimate_tokens`] of `text`.
    pub tokens: usize,
    /// Indexed elements that appear in `text`.
    pub shown_elements: usize,
    /// Indexed elements in the (non-occluded) tree.
    pub total_elements: usize,
    /// The indices of the elements that appear in `text`, in page order: all a reply may name.
    pub indices: Vec<u32>,
    /// The line saying what was cut to fit the budget (also the last page line
    /// of `text`); `None` when nothing was cut.
    pub cut: Option<String>,
}

/// Estimated number of tokens in `s`: its chars divided by four, rounded up.
///
/// This is an estimate, not a tokenizer: English prose with typical BPE
/// vocabularies averages about four characters per token; markup-heavy or
/// non-Latin text may need more tokens than this says.
pub fn estimate_tokens(s: &str) -> usize {
    s.chars().count().div_ceil(4)
}

/// Renders `obs` in the compact form, cut to `opts.max_tokens`.
pub fn render(obs: &Observation, opts: &RenderOptions) -> Rendered {
    let page = Laid::out(obs, opts);
    let whole = page.whole();
    if page.fits(&whole) {
        return whole;
    }

    // Mandatory: lines ending in an element that is in the viewport.
    let mut keep: Vec<bool> = page.lines.iter().map(|l| l.in_view).collect();
    if keep.iter().all(|k| *k) {
        // Everything is in view: nothing may be dropped.
        return whole;
    }

    // Cost with no optional lines. Adding lines from the top only ever removes
    // gap markers and shrinks the cut line, so this is an upper bound on the
    // overhead for any longer prefix.
    let mut used = page.chars_keeping(&keep);
    for (line, k) in page.lines.iter().zip(keep.iter_mut()) {
        if *k {
            continue;
        }
        let cost = line.chars + 1; // the line and its newline
        if used + cost > page.budget_chars {
            break;
        }
        used += cost;
        *k = true;
    }

    if keep.iter().all(|k| *k) {
        return whole;
    }
    page.keeping(&keep)
}

/// A page's lines with what frames them (the header, the scroll lines) and the reader's budget:
/// what both renderings choose lines from.
struct Laid {
    lines: Vec<Line>,
    header: String,
    above: Option<String>,
    below: Option<String>,
    budget_chars: usize,
}

impl Laid {
    fn out(obs: &Observation, opts: &RenderOptions) -> Self {
        Self {
            lines: collect_lines(obs, opts),
            header: header_line(obs, opts),
            above: scroll_line(obs.pages_above, "above"),
            below: scroll_line(obs.pages_below, "below"),
            budget_chars: opts.max_tokens.saturating_mul(4),
        }
    }

    /// Every line, cut nowhere.
    fn whole(&self) -> Rendered {
        let all = vec![true; self.lines.len()];
        let text = assemble(
            &self.header,
            &self.above,
            &self.below,
            &self.lines,
            &all,
            None,
        );
        finished(text, &self.lines, &all, None)
    }

    /// Whether `rendered` is within the budget.
    fn fits(&self, rendered: &Rendered) -> bool {
        rendered.text.chars().count() <= self.budget_chars
    }

    /// The lines of `keep`, with the cut line that says what was left out.
    fn keeping(&self, keep: &[bool]) -> Rendered {
        let cut = cut_line_for(&self.lines, keep);
        let text = assemble(
            &self.header,
            &self.above,
            &self.below,
            &self.lines,
            keep,
            Some(&cut),
        );
        finished(text, &self.lines, keep, Some(cut))
    }

    /// The length of [`Laid::keeping`]'s text, without the rest of its rendering.
    fn chars_keeping(&self, keep: &[bool]) -> usize {
        let cut = cut_line_for(&self.lines, keep);
        assemble(
            &self.header,
            &self.above,
            &self.below,
            &self.lines,
            keep,
            Some(&cut),
        )
        .chars()
        .count()
    }
}

/// The page's lines in document order.
fn collect_lines(obs: &Observation, opts: &RenderOptions) -> Vec<Line> {
    let mut collector = Collector {
        opts,
        origin: origin_of(&obs.url),
        lines: Vec::new(),
        cur: String::new(),
        cur_rect: Rect::default(),
    };
    collector.walk(&obs.root, TextCtx::Show);
    collector.finish_line();
    collector.lines
}

/// Renders only what matters most to the reader, for a small model's short prompt: the lines of
/// the page ranked by `relevance` (of a line's text; 0 is no relevance at all), the most relevant
/// first, as many as `opts.max_tokens` holds, shown in page order. Nothing is kept for being in
/// view alone: a small model reads a short page better than a long one that holds the answer.
pub fn render_focused(
    obs: &Observation,
    opts: &RenderOptions,
    relevance: &dyn Fn(&str) -> f32,
) -> Rendered {
    let page = Laid::out(obs, opts);
    let whole = page.whole();
    if page.fits(&whole) {
        return whole;
    }
    let lines = &page.lines;
    let mut ranked: Vec<(usize, f32)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut text = String::new();
            l.write(&mut text);
            (i, relevance(&text))
        })
        .filter(|(_, score)| *score > 0.0)
        .collect();
    // Best first; among equals, what is in view, then what comes first.
    ranked.sort_by(|(a, sa), (b, sb)| {
        sb.total_cmp(sa)
            .then(lines[*b].in_view.cmp(&lines[*a].in_view))
            .then(a.cmp(b))
    });
    let mut keep = vec![false; lines.len()];
    // Each kept line costs itself, its newline and at most one `...` line.
    let mut used = page.chars_keeping(&keep);
    for (i, _) in ranked {
        let cost = lines[i].chars + 1 + 4;
        if used + cost > page.budget_chars {
            continue;
        }
        used += cost;
        keep[i] = true;
    }
    page.keeping(&keep)
}

fn finished(text: String, lines: &[Line], keep: &[bool], cut: Option<String>) -> Rendered {
    let indices: Vec<u32> = lines
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .filter_map(|(l, _)| l.index)
        .collect();
    Rendered {
        tokens: estimate_tokens(&text),
        text,
        shown_elements: indices.len(),
        total_elements: lines.iter().filter(|l| l.elem.is_some()).count(),
        indices,
        cut,
    }
}

/// One output line: text runs, then at most one element, then the text beside it.
struct Line {
    text: String,
    elem: Option<String>,
    /// The element's index.
    index: Option<u32>,
    /// Text after the element on its row of the page.
    after: String,
    /// The element's box, where the observation measured it (zero where it did not, and on
    /// a line of text alone): what text may join it.
    row: Rect,
    /// The element's name: text beside it that the name already says (a check box's label
    /// after it) is not said again.
    name: String,
    /// The element is in the viewport (the line must be kept).
    in_view: bool,
    /// Chars of the rendered line.
    chars: usize,
    /// Chars of `text` and `after`.
    text_chars: usize,
}

impl Line {
    fn write(&self, out: &mut String) {
        out.push_str(&self.text);
        if let Some(e) = &self.elem {
            if !self.text.is_empty() {
                out.push(' ');
            }
            out.push_str(e);
        }
        if !self.after.is_empty() {
            out.push(' ');
            out.push_str(&self.after);
        }
    }

    /// Whether text in box `r` reads beside this line's element.
    fn beside(&self, r: &Rect) -> bool {
        same_row(&self.row, r) == Some(true)
    }

    fn push_after(&mut self, text: &str) {
        let sep = usize::from(!self.after.is_empty());
        if sep == 1 {
            self.after.push(' ');
        }
        self.after.push_str(text);
        let n = text.chars().count();
        // The space between the element and the text is the line's, not the text's.
        self.chars += n + 1;
        self.text_chars += n + sep;
    }
}

/// Whether two boxes sit on one row of the page: one's middle within the other's height, so
/// text that wraps on below a link still starts beside it, and text under a tall card's foot
/// does not. `None` when either was not measured (a frame's content the walk could not place).
fn same_row(a: &Rect, b: &Rect) -> Option<bool> {
    let measured = |r: &Rect| r.width > 0.0 && r.height > 0.0;
    let middle_in = |a: &Rect, b: &Rect| {
        let m = a.y + a.height / 2.0;
        b.y <= m && m <= b.y + b.height
    };
    (measured(a) && measured(b)).then(|| middle_in(a, b) || middle_in(b, a))
}

/// What to do with text nodes met while walking.
#[derive(Clone, Copy)]
enum TextCtx<'a> {
    Show,
    /// Inside an indexed element: skip text already contained in its name.
    SkipContainedIn(&'a str),
    /// Inside a void-like element (e.g. a select's options): skip all text.
    SkipAll,
}

struct Collector<'o> {
    opts: &'o RenderOptions,
    origin: Option<String>,
    lines: Vec<Line>,
    cur: String,
    /// The box of the last text put on `cur`.
    cur_rect: Rect,
}

impl Collector<'_> {
    fn walk(&mut self, node: &DomNode, ctx: TextCtx<'_>) {
        if node.occluded {
            return;
        }
        if node.tag == "#text" {
            let raw = node.text.as_deref().or(node.name.as_deref()).unwrap_or("");
            let text = collapse(raw);
            let skip = match ctx {
                TextCtx::Show => false,
                TextCtx::SkipContainedIn(name) => name.contains(text.as_str()),
                TextCtx::SkipAll => true,
            };
            if !skip && !text.is_empty() {
                self.push_text(&truncate(&text, self.opts.max_text_chars), &node.rect);
            }
            return;
        }
        let Some(index) = node.index else {
            for child in &node.children {
                self.walk(child, ctx);
            }
            return;
        };
        let void = is_void_like(&node.tag);
        let mut name = collapse(node.name.as_deref().unwrap_or(""));
        if name.is_empty() && !void {
            let mut parts = Vec::new();
            for child in &node.children {
                collect_text(child, &mut parts);
            }
            name = collapse(&parts.join(" "));
        }
        let rendered = self.render_element(node, index, &name, void);
        // Text on another row (a price under the card before it) is a line of its own, not
        // this element's.
        if same_row(&self.cur_rect, &node.rect) == Some(false) {
            self.finish_line();
        }
        let mut line = make_line(
            core::mem::take(&mut self.cur),
            Some(rendered),
            node.in_viewport,
        );
        line.row = node.rect;
        line.index = Some(index);
        line.name = name.clone();
        self.lines.push(line);
        let child_ctx = if void {
            TextCtx::SkipAll
        } else {
            TextCtx::SkipContainedIn(&name)
        };
        for child in &node.children {
            self.walk(child, child_ctx);
        }
    }

    /// Text in box `r`: beside the element just written, or on the line being gathered.
    fn push_text(&mut self, text: &str, r: &Rect) {
        if self.cur.is_empty() {
            if let Some(line) = self.lines.last_mut().filter(|l| l.beside(r)) {
                if !line.name.contains(text) {
                    line.push_after(text);
                }
                return;
            }
        }
        if !self.cur.is_empty() {
            self.cur.push(' ');
        }
        self.cur.push_str(text);
        self.cur_rect = *r;
    }

    fn finish_line(&mut self) {
        if !self.cur.is_empty() {
            let text = core::mem::take(&mut self.cur);
            self.lines.push(make_line(text, None, false));
        }
    }

    fn render_element(&self, node: &DomNode, index: u32, name: &str, void: bool) -> String {
        let max = self.opts.max_name_chars;
        let tag = node.tag.as_str();
        let is_input = tag == "input";
        let input_type = node.input_type.as_deref().map(str::to_ascii_lowercase);
        let mut out = String::new();
        if node.is_new {
            out.push('*');
        }
        out.push('[');
        out.push_str(&index.to_string());
        out.push_str("]<");
        out.push_str(tag);

        let role = node
            .role
            .as_deref()
            .map(str::trim)
            .filter(|r| !r.is_empty() && !is_implicit_role(tag, input_type.as_deref(), r));
        if let Some(role) = role {
            attr_bare(&mut out, "role", &truncate(role, max));
        }
        let show_type = is_input && input_type.is_some();
        if let Some(t) = input_type.as_deref().filter(|_| show_type) {
            attr_bare(&mut out, "type", &truncate(t, max));
        }

        let href = node.href.as_deref().filter(|h| !h.is_empty());
        let placeholder = node
            .placeholder
            .as_deref()
            .map(collapse)
            .filter(|p| !p.is_empty());
        let is_toggle = matches!(input_type.as_deref(), Some("checkbox" | "radio")) && is_input;
        let value = node
            .value
            .as_deref()
            .map(collapse)
            .filter(|v| !v.is_empty() && !is_toggle);

        // A void element's accessible name is written as `name="…"`, unless something shown
        // already says it (case-insensitively: `name=password` already says "Password").
        let show_name = void && !name.is_empty() && {
            let same = |s: &str| s.to_lowercase() == name.to_lowercase();
            !(placeholder.as_deref().is_some_and(same)
                || value.as_deref().is_some_and(same)
                || node
                    .attributes
                    .iter()
                    .any(|(k, v)| (k == "name" || k == "aria-label") && same(&collapse(v))))
        };
        for (key, val) in &node.attributes {
            let key = key.trim();
            let shadowed = match key {
                "" => true,
                "role" => role.is_some(),
                "type" => show_type,
                "href" => href.is_some(),
                "placeholder" => placeholder.is_some(),
                "value" => value.is_some(),
                // A form field's `name` attribute beside its accessible name would read as a
                // second name (`name=q name="Search products"`); the one a person reads is kept.
                "name" => show_name,
                _ => false,
            };
            if !shadowed {
                attr_bare(&mut out, key, &truncate(&collapse(val), max));
            }
        }
        if let Some(h) = href {
            attr_quoted(&mut out, "href", &truncate(&self.shorten_href(h), max));
        }
        if let Some(p) = &placeholder {
            attr_quoted(&mut out, "placeholder", &truncate(p, max));
        }
        if show_name {
            attr_quoted(&mut out, "name", &truncate(name, max));
        }
        if let Some(v) = &value {
            attr_quoted(&mut out, "value", &truncate(v, max));
        }
        for state in &node.states {
            let state = state.trim();
            if !state.is_empty() {
                out.push(' ');
                out.push_str(state);
            }
        }
        out.push('>');
        if !void && !name.is_empty() {
            out.push_str(&truncate(name, max));
            out.push_str("</");
            out.push_str(tag);
            out.push('>');
        }
        out
    }

    /// Drops the scheme and host of links to the page's own origin.
    fn shorten_href(&self, href: &str) -> String {
        let href = href.trim();
        if let Some(origin) = &self.origin {
            if href.len() >= origin.len()
                && href.is_char_boundary(origin.len())
                && href[..origin.len()].eq_ignore_ascii_case(origin)
            {
                let rest = &href[origin.len()..];
                if rest.is_empty() {
                    return "/".into();
                }
                if rest.starts_with(['/', '?', '#']) {
                    return rest.into();
                }
            }
        }
        href.into()
    }
}

fn make_line(text: String, elem: Option<String>, in_view: bool) -> Line {
    let text_chars = text.chars().count();
    let elem_chars = elem.as_deref().map_or(0, |e| e.chars().count());
    let sep = usize::from(text_chars > 0 && elem_chars > 0);
    Line {
        in_view: in_view && elem.is_some(),
        chars: text_chars + sep + elem_chars,
        text_chars,
        text,
        elem,
        index: None,
        after: String::new(),
        row: Rect::default(),
        name: String::new(),
    }
}

/// Text of the descendants of an element that belong to it (not to nested indexed elements).
fn collect_text(node: &DomNode, out: &mut Vec<String>) {
    if node.occluded || (node.index.is_some() && node.tag != "#text") {
        return;
    }
    if node.tag == "#text" {
        if let Some(t) = node.text.as_deref().or(node.name.as_deref()) {
            out.push(t.to_string());
        }
        return;
    }
    for child in &node.children {
        collect_text(child, out);
    }
}

fn header_line(obs: &Observation, opts: &RenderOptions) -> String {
    let title = truncate(&collapse(&obs.title), opts.max_text_chars);
    let url = truncate(&collapse(&obs.url), opts.max_text_chars);
    match (title.is_empty(), url.is_empty()) {
        (false, false) => format!("Page: {title} — {url}"),
        (true, false) => format!("Page: {url}"),
        (false, true) => format!("Page: {title}"),
        (true, true) => "Page: (untitled)".into(),
    }
}

fn scroll_line(pages: f64, side: &str) -> Option<String> {
    (pages.is_finite() && pages > 0.05).then(|| format!("... {pages:.1} pages {side}"))
}

fn cut_line_for(lines: &[Line], keep: &[bool]) -> String {
    let (mut elems, mut chars) = (0usize, 0usize);
    for (line, k) in lines.iter().zip(keep) {
        if !k {
            elems += usize::from(line.elem.is_some());
            chars += line.text_chars;
        }
    }
    let mut parts = Vec::new();
    if elems > 0 {
        let s = if elems == 1 { "" } else { "s" };
        parts.push(format!("{} more element{s}", thousands(elems)));
    }
    if chars > 0 {
        let s = if chars == 1 { "" } else { "s" };
        parts.push(format!("{} character{s} of text", thousands(chars)));
    }
    format!(
        "... cut to fit: {} not shown (scroll or ask to see more)",
        parts.join(" and ")
    )
}

/// Header, scroll lines and the kept lines; a `...` line marks each dropped stretch
/// between kept lines (a dropped tail is covered by the cut line).
fn assemble(
    header: &str,
    above: &Option<String>,
    below: &Option<String>,
    lines: &[Line],
    keep: &[bool],
    cut: Option<&str>,
) -> String {
    let mut out = String::from(header);
    if let Some(a) = above {
        out.push('\n');
        out.push_str(a);
    }
    let mut skipped = false;
    for (line, k) in lines.iter().zip(keep) {
        if !k {
            skipped = true;
            continue;
        }
        if skipped {
            out.push_str("\n...");
            skipped = false;
        }
        out.push('\n');
        line.write(&mut out);
    }
    if let Some(c) = cut {
        out.push('\n');
        out.push_str(c);
    }
    if let Some(b) = below {
        out.push('\n');
        out.push_str(b);
    }
    out
}

fn is_void_like(tag: &str) -> bool {
    matches!(tag, "input" | "img" | "textarea" | "select")
}

/// Whether `role` is what the tag says anyway, so it needs no `role=`.
fn is_implicit_role(tag: &str, input_type: Option<&str>, role: &str) -> bool {
    let implicit: &[&str] = match tag {
        "a" | "area" => &["link"],
        "button" => &["button"],
        "input" => match input_type.unwrap_or("text") {
            "checkbox" => &["checkbox"],
            "radio" => &["radio"],
            "search" => &["searchbox", "textbox"],
            "number" => &["spinbutton", "textbox"],
            "range" => &["slider"],
            "submit" | "button" | "reset" | "image" => &["button"],
            "text" | "email" | "tel" | "url" | "password" => &["textbox"],
            _ => &[],
        },
        "select" => &["combobox", "listbox"],
        "textarea" => &["textbox"],
        "img" => &["img", "image"],
        "option" => &["option"],
        "li" => &["listitem"],
        "ul" | "ol" | "menu" => &["list"],
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => &["heading"],
        "nav" => &["navigation"],
        "main" => &["main"],
        "form" => &["form"],
        "dialog" => &["dialog"],
        "table" => &["table"],
        "tr" => &["row"],
        "td" => &["cell", "gridcell"],
        "th" => &["columnheader", "rowheader"],
        "details" | "fieldset" => &["group"],
        "summary" => &["button"],
        "progress" => &["progressbar"],
        "hr" => &["separator"],
        "p" => &["paragraph"],
        "div" | "span" => &["generic"],
        _ => &[],
    };
    implicit.iter().any(|r| r.eq_ignore_ascii_case(role))
}

/// ` key=value`, quoted only when the value needs it.
fn attr_bare(out: &mut String, key: &str, val: &str) {
    out.push(' ');
    out.push_str(key);
    out.push('=');
    let needs_quotes = val.is_empty()
        || val
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '=' | '\\'));
    if needs_quotes {
        push_quoted(out, val);
    } else {
        out.push_str(val);
    }
}

/// ` key="value"`: free text (names, values, placeholders, hrefs) is always quoted.
fn attr_quoted(out: &mut String, key: &str, val: &str) {
    out.push(' ');
    out.push_str(key);
    out.push('=');
    push_quoted(out, val);
}

fn push_quoted(out: &mut String, val: &str) {
    out.push('"');
    for c in val.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// Whitespace runs become one space; leading and trailing whitespace goes.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// At most `max` chars; a cut string ends in `…` (counted in `max`).
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// `scheme://host[:port]` of an absolute URL, lower-cased.
fn origin_of(url: &str) -> Option<String> {
    let url = url.trim();
    let scheme_end = url.find("://")?;
    let scheme = &url[..scheme_end];
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let rest = &url[scheme_end + 3..];
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if host_end == 0 {
        return None;
    }
    Some(url[..scheme_end + 3 + host_end].to_ascii_lowercase())
}

/// `4210` → `4,210`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> DomNode {
        DomNode {
            tag: "#text".into(),
            text: Some(t.into()),
            in_viewport: true,
            ..Default::default()
        }
    }

    fn el(index: u32, tag: &str, name: &str) -> DomNode {
        DomNode {
            index: Some(index),
            tag: tag.into(),
            name: (!name.is_empty()).then(|| name.into()),
            in_viewport: true,
            ..Default::default()
        }
    }

    fn input(index: u32, ty: &str, name: &str) -> DomNode {
        DomNode {
            input_type: Some(ty.into()),
            role: Some("textbox".into()),
            ..el(index, "input", name)
        }
    }

    fn container(tag: &str, children: Vec<DomNode>) -> DomNode {
        DomNode {
            tag: tag.into(),
            children,
            ..Default::default()
        }
    }

    fn page(children: Vec<DomNode>) -> Observation {
        Observation {
            url: "https://shop.example/login".into(),
            title: "Sign in".into(),
            root: container("body", children),
            ..Default::default()
        }
    }

    fn r(obs: &Observation) -> Rendered {
        render(obs, &RenderOptions::default())
    }

    fn body(rendered: &Rendered) -> Vec<&str> {
        rendered.text.lines().skip(1).collect()
    }

    fn login_page() -> Observation {
        let mut email = input(3, "email", "Email");
        email.placeholder = Some("Email".into());
        email.attributes = vec![("name".into(), "email".into())];
        email.states = vec!["required".into(), "empty".into()];
        let mut password = input(4, "password", "Password");
        password.attributes = vec![
            ("name".into(), "password".into()),
            ("autocomplete".into(), "current-password".into()),
        ];
        password.states = vec!["required".into(), "empty".into()];
        let mut remember = el(5, "input", "Remember me");
        remember.input_type = Some("checkbox".into());
        remember.role = Some("checkbox".into());
        remember.value = Some("on".into());
        remember.states = vec!["checked".into()];
        let mut sign_in = el(6, "button", "Sign in");
        sign_in.role = Some("button".into());
        sign_in.input_type = Some("submit".into());
        sign_in.is_new = true;
        let mut reset = el(7, "a", "Reset it");
        reset.role = Some("link".into());
        reset.href = Some("https://shop.example/reset".into());
        reset.children = vec![text("Reset it")];
        let mut home = el(1, "a", "Shop home");
        home.href = Some("https://shop.example/".into());
        let mut cart = el(2, "a", "Cart (0)");
        cart.href = Some("https://shop.example/cart".into());
        let mut lang = el(10, "select", "Language");
        lang.role = Some("combobox".into());
        lang.value = Some("English".into());
        lang.children = vec![
            container("option", vec![text("English")]),
            container("option", vec![text("Deutsch")]),
        ];
        let mut help = el(9, "a", "Help");
        help.href = Some("https://help.example/login".into());
        let mut signup = el(8, "a", "Create an account");
        signup.href = Some("/signup".into());
        let mut obs = page(vec![
            container("header", vec![home, cart]),
            container(
                "form",
                vec![
                    text("Sign in to your account"),
                    email,
                    password,
                    remember,
                    sign_in,
                ],
            ),
            text("Forgot your password?"),
            reset,
            text("New here?"),
            signup,
            container(
                "footer",
                vec![help, lang, text("Our shop ships worldwide.")],
            ),
        ]);
        obs.pages_below = 0.0;
        obs
    }

    #[test]
    fn login_page_exact() {
        let out = r(&login_page());
        let expected = "\
Page: Sign in — https://shop.example/login
[1]<a href=\"/\">Shop home</a>
[2]<a href=\"/cart\">Cart (0)</a>
Sign in to your account [3]<input type=email name=email placeholder=\"Email\" required empty>
[4]<input type=password name=password autocomplete=current-password required empty>
[5]<input type=checkbox name=\"Remember me\" checked>
*[6]<button>Sign in</button>
Forgot your password? [7]<a href=\"/reset\">Reset it</a>
New here? [8]<a href=\"/signup\">Create an account</a>
[9]<a href=\"https://help.example/login\">Help</a>
[10]<select name=\"Language\" value=\"English\">
Our shop ships worldwide.";
        assert_eq!(out.text, expected);
        assert_eq!(out.shown_elements, 10);
        assert_eq!(out.total_elements, 10);
        assert_eq!(out.cut, None);
        assert_eq!(out.tokens, estimate_tokens(expected));
        assert!(out.tokens < 300, "login page took {} tokens", out.tokens);
    }

    #[test]
    fn login_page_with_more_fields_stays_small() {
        // 15 elements, with long-ish names and attributes everywhere.
        let mut obs = login_page();
        for i in 11..=15 {
            let mut a = el(i, "a", "Terms and conditions of service");
            a.href = Some(format!("https://shop.example/legal/page-{i}"));
            obs.root.children.push(a);
        }
        let out = r(&obs);
        assert_eq!(out.total_elements, 15);
        assert!(out.tokens < 300, "took {} tokens", out.tokens);
    }

    #[test]
    fn new_elements_are_starred() {
        let mut a = el(1, "button", "Old");
        a.is_new = false;
        let mut b = el(2, "button", "Fresh");
        b.is_new = true;
        let out = r(&page(vec![a, b]));
        assert_eq!(
            body(&out),
            ["[1]<button>Old</button>", "*[2]<button>Fresh</button>"]
        );
    }

    #[test]
    fn containers_flatten() {
        let obs = page(vec![container(
            "div",
            vec![
                text("Hello"),
                container(
                    "section",
                    vec![container("span", vec![text("nested"), el(1, "a", "Go")])],
                ),
                container("div", vec![]),
            ],
        )]);
        assert_eq!(body(&r(&obs)), ["Hello nested [1]<a>Go</a>"]);
    }

    #[test]
    fn occluded_subtree_is_omitted() {
        let mut hidden = container(
            "div",
            vec![text("Behind the modal"), el(1, "button", "Buy")],
        );
        hidden.occluded = true;
        let mut covered = el(2, "a", "Covered");
        covered.occluded = true;
        covered.children = vec![el(3, "button", "Inner")];
        let modal = container(
            "dialog",
            vec![text("We use cookies."), el(4, "button", "Accept")],
        );
        let out = r(&page(vec![hidden, covered, modal]));
        assert_eq!(body(&out), ["We use cookies. [4]<button>Accept</button>"]);
        assert_eq!(out.total_elements, 1);
    }

    #[test]
    fn text_then_element_is_one_line_element_then_text_two() {
        let obs = page(vec![
            text("Before"),
            el(1, "a", "Link"),
            text("After"),
            text("  and   more  "),
            el(2, "button", "A"),
            el(3, "button", "B"),
        ]);
        assert_eq!(
            body(&r(&obs)),
            [
                "Before [1]<a>Link</a>",
                "After and more [2]<button>A</button>",
                "[3]<button>B</button>",
            ]
        );
    }

    /// `node` with its box at (x, y), `w` by `h`.
    fn at(node: DomNode, (x, y, w, h): (f64, f64, f64, f64)) -> DomNode {
        DomNode {
            rect: Rect {
                x,
                y,
                width: w,
                height: h,
            },
            ..node
        }
    }

    #[test]
    fn text_beside_an_element_reads_on_its_line_not_the_next_ones() {
        let obs = page(vec![
            // A result list: each price follows its link on the same row.
            at(el(1, "a", "Wool socks"), (0.0, 0.0, 90.0, 20.0)),
            at(text("12.99 EUR"), (95.0, 2.0, 70.0, 16.0)),
            at(text("in stock"), (170.0, 2.0, 60.0, 16.0)),
            at(el(2, "a", "Cotton socks"), (0.0, 30.0, 90.0, 20.0)),
            // Text that starts beside the link and wraps on below it.
            at(text("8.50 EUR, ships in a week"), (0.0, 30.0, 300.0, 40.0)),
            // A tall card, then a price under its foot: a row of its own, neither the card's
            // nor the button's below it.
            at(el(3, "a", "Silk socks"), (0.0, 80.0, 200.0, 200.0)),
            at(text("30.00 EUR"), (0.0, 285.0, 70.0, 16.0)),
            at(el(4, "button", "Next page"), (0.0, 310.0, 90.0, 20.0)),
            // Text before a link on its row reads with it.
            at(text("Lost it?"), (0.0, 340.0, 50.0, 16.0)),
            at(el(5, "a", "Reset it"), (55.0, 338.0, 60.0, 20.0)),
            // A label after its check box, which the name says already.
            at(el(6, "button", "Remember me"), (0.0, 370.0, 16.0, 16.0)),
            at(text("Remember me"), (20.0, 370.0, 90.0, 16.0)),
            // Not measured (a frame's content the walk could not place): as before.
            el(7, "a", "Help"),
            text("Contact us"),
            el(8, "a", "Mail"),
        ]);
        let out = r(&obs);
        assert_eq!(
            body(&out),
            [
                "[1]<a>Wool socks</a> 12.99 EUR in stock",
                "[2]<a>Cotton socks</a> 8.50 EUR, ships in a week",
                "[3]<a>Silk socks</a>",
                "30.00 EUR",
                "[4]<button>Next page</button>",
                "Lost it? [5]<a>Reset it</a>",
                "[6]<button>Remember me</button>",
                "[7]<a>Help</a>",
                "Contact us [8]<a>Mail</a>",
            ]
        );
        // What a line costs counts its text after the element: out of view, every budget holds.
        let mut below = obs.clone();
        for n in &mut below.root.children {
            n.in_viewport = false;
        }
        let full = r(&below).text.chars().count();
        // From a budget that holds the header and the cut line, which are always there.
        for max_tokens in 40..=full.div_ceil(4) {
            let cut = render(
                &below,
                &RenderOptions {
                    max_tokens,
                    ..Default::default()
                },
            );
            assert!(cut.text.chars().count() <= max_tokens * 4, "{}", cut.text);
        }
    }

    #[test]
    fn text_inside_elements() {
        // Text that is the element's name is not repeated; other text is kept;
        // an element without a name takes its text; nested elements come after.
        let mut icon = el(1, "a", "Home");
        icon.children = vec![text("Acme")];
        let mut card = el(2, "div", "");
        card.role = Some("button".into());
        card.children = vec![
            text("Blue shoes"),
            container("span", vec![text("$20")]),
            el(3, "button", "Add to cart"),
        ];
        let mut plain = el(4, "span", "");
        plain.role = Some("generic".into());
        assert_eq!(
            body(&r(&page(vec![icon, card, plain]))),
            [
                "[1]<a>Home</a>",
                "Acme [2]<div role=button>Blue shoes $20</div>",
                "[3]<button>Add to cart</button>",
                "[4]<span>",
            ]
        );
    }

    #[test]
    fn quoting_and_escaping() {
        let mut a = el(1, "input", "Say \"hi\"");
        a.input_type = Some("text".into());
        a.value = Some("back\\slash \"quoted\"".into());
        a.attributes = vec![
            ("id".into(), "q".into()),
            ("data-x".into(), "a b".into()),
            ("data-y".into(), "".into()),
            ("data-z".into(), "x>y".into()),
        ];
        a.placeholder = Some("Search…".into());
        let mut t = el(2, "textarea", "Comment");
        t.value = Some("line one\nline two".into());
        t.placeholder = Some("Comment".into());
        let mut img = el(3, "img", "Logo");
        img.role = Some("img".into());
        let mut b = el(4, "button", "Next");
        b.role = Some("link".into());
        b.states = vec!["disabled".into()];
        let out = r(&page(vec![a, t, img, b]));
        assert_eq!(
            body(&out),
            [
                r#"[1]<input type=text id=q data-x="a b" data-y="" data-z="x>y" placeholder="Search…" name="Say \"hi\"" value="back\\slash \"quoted\"">"#,
                r#"[2]<textarea placeholder="Comment" value="line one line two">"#,
                r#"[3]<img name="Logo">"#,
                "[4]<button role=link disabled>Next</button>",
            ]
        );
    }

    #[test]
    fn a_field_reads_by_one_name_only() {
        let field = |index, name: &str, name_attr: &str| {
            let mut f = el(index, "input", name);
            f.input_type = Some("search".into());
            f.attributes = vec![("name".into(), name_attr.into())];
            f
        };
        let out = r(&page(vec![
            // The name a person reads, not the form's key as a second `name`.
            field(1, "Search products", "q"),
            // No other name: the form's key is all there is.
            field(2, "", "email"),
            // The same words: said once.
            field(3, "Password", "password"),
        ]));
        assert_eq!(
            body(&out),
            [
                r#"[1]<input type=search name="Search products">"#,
                "[2]<input type=search name=email>",
                "[3]<input type=search name=password>",
            ]
        );
    }

    #[test]
    fn long_names_and_text_are_truncated() {
        let opts = RenderOptions {
            max_name_chars: 10,
            max_text_chars: 12,
            ..Default::default()
        };
        let obs = page(vec![
            text("This text run is far too long"),
            el(1, "a", "A very long link name"),
        ]);
        let out = render(&obs, &opts);
        assert_eq!(body(&out), ["This text r… [1]<a>A very lo…</a>"]);
    }

    #[test]
    fn href_shortened_only_for_same_origin() {
        let mut links = Vec::new();
        for (i, href) in [
            "https://shop.example/a/b?c=1",
            "https://SHOP.example",
            "https://shop.example#top",
            "https://shop.example.evil/x",
            "http://shop.example/a",
            "https://shop.example:8443/a",
            "/relative",
            "mailto:help@shop.example",
        ]
        .into_iter()
        .enumerate()
        {
            let mut a = el(i as u32, "a", "x");
            a.href = Some(href.into());
            links.push(a);
        }
        let out = r(&page(links));
        assert_eq!(
            body(&out),
            [
                r#"[0]<a href="/a/b?c=1">x</a>"#,
                r#"[1]<a href="/">x</a>"#,
                r##"[2]<a href="#top">x</a>"##,
                r#"[3]<a href="https://shop.example.evil/x">x</a>"#,
                r#"[4]<a href="http://shop.example/a">x</a>"#,
                r#"[5]<a href="https://shop.example:8443/a">x</a>"#,
                r#"[6]<a href="/relative">x</a>"#,
                r#"[7]<a href="mailto:help@shop.example">x</a>"#,
            ]
        );
    }

    #[test]
    fn pages_above_and_below() {
        let mut obs = page(vec![el(1, "a", "x")]);
        obs.pages_above = 1.5;
        obs.pages_below = 2.46;
        assert_eq!(
            r(&obs).text,
            "Page: Sign in — https://shop.example/login\n\
             ... 1.5 pages above\n\
             [1]<a>x</a>\n\
             ... 2.5 pages below"
        );
        obs.pages_above = 0.05;
        obs.pages_below = 0.04;
        assert_eq!(
            r(&obs).text,
            "Page: Sign in — https://shop.example/login\n[1]<a>x</a>"
        );
    }

    /// 2,000 elements, each after a line of text; `in_view` picks which are in the viewport.
    fn big_page(in_view: impl Fn(u32) -> bool) -> Observation {
        let mut children = Vec::new();
        for i in 0..2000u32 {
            children.push(text(&format!("Item number {i} of the catalogue")));
            let mut a = el(i, "a", &format!("Product {i}"));
            a.href = Some(format!("https://shop.example/p/{i}"));
            a.in_viewport = in_view(i);
            children.push(a);
        }
        let mut obs = page(children);
        obs.pages_below = 40.0;
        obs
    }

    #[test]
    fn budget_keeps_viewport_and_top() {
        let in_view = |i: u32| (1500..1510).contains(&i) || i == 1999;
        let obs = big_page(in_view);
        let opts = RenderOptions {
            max_tokens: 1000,
            ..Default::default()
        };
        let out = render(&obs, &opts);
        assert!(out.tokens <= 1000, "{} tokens", out.tokens);
        assert_eq!(out.tokens, estimate_tokens(&out.text));
        assert_eq!(out.total_elements, 2000);
        let lines: Vec<&str> = out.text.lines().collect();
        // Every in-view element is there, with its text.
        for i in (1500..1510).chain([1999]) {
            let line =
                format!("Item number {i} of the catalogue [{i}]<a href=\"/p/{i}\">Product {i}</a>");
            assert!(lines.contains(&line.as_str()), "missing {i}");
        }
        // The top of the page is kept, as a contiguous run.
        assert_eq!(lines[0], "Page: Sign in — https://shop.example/login");
        assert!(lines[1].starts_with("Item number 0 of the catalogue [0]<a"));
        let top = lines[1..]
            .iter()
            .take_while(|l| l.starts_with("Item number"))
            .count();
        assert!(top > 10, "only {top} lines from the top");
        // Document order, with gap markers.
        let idx = |i: u32| {
            lines
                .iter()
                .position(|l| l.contains(&format!("[{i}]<")))
                .unwrap()
        };
        assert!(idx(0) < idx(1) && idx(1) < idx(1500) && idx(1509) < idx(1999));
        assert_eq!(lines[idx(1500) - 1], "...");
        assert_eq!(lines[idx(1999) - 1], "...");
        // The cut line, with the right counts, then the pages-below line.
        let shown = top + 11;
        assert_eq!(out.shown_elements, shown);
        let per_text = |i: usize| format!("Item number {i} of the catalogue").len();
        let hidden_chars: usize = (0..2000)
            .filter(|&i| !(i < top || in_view(i as u32)))
            .map(per_text)
            .sum();
        let cut = format!(
            "... cut to fit: {} more elements and {} characters of text not shown (scroll or ask to see more)",
            thousands(2000 - shown),
            thousands(hidden_chars)
        );
        assert_eq!(out.cut.as_deref(), Some(cut.as_str()));
        assert_eq!(lines[lines.len() - 2], cut);
        assert_eq!(lines[lines.len() - 1], "... 40.0 pages below");
        // The line after the top run is a gap marker, not half an element.
        assert_eq!(lines[1 + top], "...");
        assert_eq!(lines.len(), 1 + top + 1 + 10 + 1 + 1 + 1 + 1);
    }

    #[test]
    fn budget_uses_most_of_it() {
        let obs = big_page(|i| i < 5);
        let opts = RenderOptions {
            max_tokens: 500,
            ..Default::default()
        };
        let out = render(&obs, &opts);
        assert!(out.tokens <= 500);
        // The next line (about 80 chars, 20 tokens) would not have fitted.
        assert!(out.tokens > 500 - 25, "{} tokens", out.tokens);
        assert!(
            !out.text.contains("\n...\n"),
            "no gaps when the view is at the top"
        );
    }

    #[test]
    fn in_view_elements_survive_a_tiny_budget() {
        let in_view = |i: u32| i % 100 == 7;
        let obs = big_page(in_view);
        let opts = RenderOptions {
            max_tokens: 50,
            ..Default::default()
        };
        let out = render(&obs, &opts);
        assert!(out.tokens > 50);
        assert_eq!(out.shown_elements, 20);
        let lines: Vec<&str> = out.text.lines().collect();
        for i in (0..2000).filter(|&i| in_view(i)) {
            assert!(lines.iter().any(|l| l.contains(&format!("[{i}]<a"))));
        }
        assert!(
            !out.text.contains("[0]<"),
            "no top lines when the view alone is over"
        );
        assert_eq!(lines[1], "...");
        assert!(out
            .cut
            .as_deref()
            .unwrap()
            .starts_with("... cut to fit: 1,980 more elements and "));
    }

    #[test]
    fn nothing_cut_when_everything_fits_or_all_in_view() {
        let obs = big_page(|_| true);
        let opts = RenderOptions {
            max_tokens: 10,
            ..Default::default()
        };
        let out = render(&obs, &opts);
        assert_eq!(out.cut, None);
        assert_eq!(out.shown_elements, 2000);
        assert!(!out.text.contains("cut to fit"));
    }

    #[test]
    fn cut_line_singular_and_text_only() {
        let obs = page(vec![
            el(1, "button", "Visible"),
            text("x"),
            el(2, "a", &"y".repeat(200)),
        ]);
        let mut obs2 = obs.clone();
        obs2.root.children[2].in_viewport = false;
        let opts = RenderOptions {
            max_tokens: 20,
            ..Default::default()
        };
        let out = render(&obs2, &opts);
        assert_eq!(
            out.cut.as_deref(),
            Some("... cut to fit: 1 more element and 1 character of text not shown (scroll or ask to see more)")
        );
        assert_eq!(out.shown_elements, 1);
    }

    #[test]
    fn deterministic() {
        let obs = big_page(|i| i % 37 == 0);
        let opts = RenderOptions {
            max_tokens: 700,
            ..Default::default()
        };
        let a = render(&obs, &opts);
        let b = render(&obs.clone(), &opts);
        assert_eq!(a, b);
        assert_eq!(r(&login_page()).text, r(&login_page()).text);
    }

    #[test]
    fn token_estimate() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("a"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        // Chars, not bytes.
        assert_eq!(estimate_tokens("ééééé"), 2);
        assert_eq!(estimate_tokens("— … —"), 2);
    }

    #[test]
    fn helpers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(4210), "4,210");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "ab…");
        assert_eq!(truncate("abcd", 0), "");
        assert_eq!(collapse("  a \n\t b  "), "a b");
        assert_eq!(
            origin_of("https://a.example:8080/x?y").as_deref(),
            Some("https://a.example:8080")
        );
        assert_eq!(origin_of("about:blank"), None);
    }

    #[test]
    fn header_without_title() {
        let mut obs = page(vec![]);
        obs.title = "  ".into();
        assert_eq!(r(&obs).text, "Page: https://shop.example/login");
    }
}
