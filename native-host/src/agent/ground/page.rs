//! The page as the grounding reads it: every element that can be acted on, with the names a
//! person would call it by (its accessible name, placeholder, field name, the text beside it),
//! its kind, and where it sits (its document path, its place in reading order, its line), so
//! that "the Delete beside Bob" can be told from the other Deletes; and every piece of text, in
//! reading order, for answers.

use itinero_shared::observation::{DomNode, Observation};

use crate::agent::validate::{is_checkable, is_choice, takes_text};

/// What an element does when acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Takes typed text (`input_type` says which).
    Field,
    /// A list to choose from (native select, listbox, combobox).
    Choice,
    /// A checkbox, radio button or switch.
    Checkable,
    /// Everything else that can be clicked: buttons, links, tabs, summaries, options.
    Press,
}

/// One element that can be acted on.
#[derive(Debug, Clone)]
pub struct Element<'a> {
    pub node: &'a DomNode,
    pub kind: Kind,
    /// What it is called, best first: the accessible name, then the placeholder, the text
    /// before it, its `name`/`id` attribute with the separators read as spaces.
    pub labels: Vec<String>,
    /// Its options' labels (a select's, a listbox's).
    pub options: Vec<String>,
    /// Its place in the document, one step a segment (`main[0]`, `form[0]`, `input[2]`), from
    /// the fingerprint: the observation's tree leaves plain containers out, the path does not.
    pub path: Vec<String>,
    /// Position in reading order among all nodes.
    pub order: usize,
}

impl Element<'_> {
    pub fn index(&self) -> u32 {
        self.node.index.unwrap_or(0)
    }
    pub fn has_state(&self, s: &str) -> bool {
        self.node.states.iter().any(|x| x == s)
    }
    pub fn is_secret(&self) -> bool {
        self.node.input_type.as_deref() == Some("password")
    }
    pub fn input_type(&self) -> &str {
        self.node
            .input_type
            .as_deref()
            .unwrap_or(if self.node.tag == "textarea" {
                "textarea"
            } else {
                "text"
            })
    }
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.node
            .attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    /// In the page's own chrome around its content (a site header, footer, navigation or
    /// sidebar outside `main`, an article or a dialog): the site search, the newsletter's
    /// email field, the footer's links, which a task on the page is seldom about.
    pub fn in_site_chrome(&self) -> bool {
        for segment in &self.path {
            let tag = segment.split('[').next().unwrap_or("");
            match tag {
                "main" | "article" | "dialog" => return false,
                "header" | "footer" | "nav" | "aside" => return true,
                _ => {}
            }
        }
        false
    }
    /// Submits a form: a submit button, or an input of type submit.
    pub fn submits(&self) -> bool {
        matches!(self.node.input_type.as_deref(), Some("submit" | "image"))
            || (self.node.tag == "button"
                && self.attr("type").is_none_or(|t| t == "submit")
                && self
                    .node
                    .input_type
                    .as_deref()
                    .is_none_or(|t| t == "submit"))
    }
}

/// Text in reading order.
#[derive(Debug, Clone)]
pub struct Text<'a> {
    pub text: &'a str,
    pub node: &'a DomNode,
    pub order: usize,
}

#[derive(Debug, Default)]
pub struct Page<'a> {
    pub elements: Vec<Element<'a>>,
    pub texts: Vec<Text<'a>>,
    /// Every node, in reading order (what the paths point into).
    pub nodes: Vec<&'a DomNode>,
}

impl<'a> Page<'a> {
    pub fn read(obs: &'a Observation) -> Self {
        let mut page = Page::default();
        walk(&obs.root, &mut page, None);
        page
    }

    /// How many ancestors two document paths share: the more, the closer they sit.
    pub fn shared_depth(a: &[String], b: &[String]) -> usize {
        a.iter().zip(b).take_while(|(x, y)| x == y).count()
    }

    /// The texts from reading position `from` on, up to `n` of them.
    pub fn texts_after(&self, from: usize, n: usize) -> impl Iterator<Item = &Text<'a>> {
        self.texts.iter().filter(move |t| t.order >= from).take(n)
    }
}

/// A fingerprint's document path (`html>body>form[1]>button[0]`) as its segments, the form
/// [`Element::path`] has.
pub fn segments(path: &str) -> Vec<String> {
    path.split('>')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether two boxes sit on one line (a table row, a list item): their vertical middles within
/// the taller one's half height.
pub fn same_line(a: &DomNode, b: &DomNode) -> bool {
    let (ma, mb) = (
        a.rect.y + a.rect.height / 2.0,
        b.rect.y + b.rect.height / 2.0,
    );
    let h = a.rect.height.max(b.rect.height).max(1.0);
    (ma - mb).abs() <= h / 2.0
}

fn push_label(labels: &mut Vec<String>, s: Option<&str>) {
    if let Some(s) = s.map(str::trim).filter(|s| !s.is_empty()) {
        if !labels.iter().any(|l| l == s) {
            labels.push(s.to_owned());
        }
    }
}

/// `billing_zip-code` → `billing zip code`.
fn spaced(id: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in id.chars() {
        if c == '_' || c == '-' || c == '.' || c == '[' || c == ']' {
            out.push(' ');
            prev_lower = false;
        } else {
            if c.is_uppercase() && prev_lower {
                out.push(' ');
            }
            prev_lower = c.is_lowercase();
            out.push(c);
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn walk<'a>(node: &'a DomNode, page: &mut Page<'a>, in_choice: Option<usize>) {
    let me = page.nodes.len();
    page.nodes.push(node);
    if let Some(text) = node.text.as_deref().filter(|t| !t.trim().is_empty()) {
        if node.index.is_none() {
            page.texts.push(Text {
                text,
                node,
                order: me,
            });
        }
    }
    let mut in_choice = in_choice;
    if node.index.is_some() {
        let kind = if is_choice(node) && node.tag == "select" {
            Kind::Choice
        } else if takes_text(node) {
            Kind::Field
        } else if is_choice(node) {
            Kind::Choice
        } else if is_checkable(node) {
            Kind::Checkable
        } else {
            Kind::Press
        };
        let mut labels = Vec::new();
        push_label(&mut labels, node.name.as_deref());
        push_label(&mut labels, node.placeholder.as_deref());
        if matches!(kind, Kind::Press) {
            push_label(&mut labels, node.text.as_deref());
            if matches!(node.input_type.as_deref(), Some("submit" | "button")) {
                push_label(&mut labels, node.value.as_deref());
            }
        }
        let unnamed = labels.is_empty();
        if kind != Kind::Press || unnamed {
            // The text just before a field that has no name of its own, on its line.
            if let Some(t) = page.texts.last().filter(|t| same_line(t.node, node)) {
                push_label(&mut labels, Some(t.text));
            }
        }
        for a in ["name", "id", "autocomplete"] {
            let v = node
                .attributes
                .iter()
                .find(|(k, _)| k == a)
                .map(|(_, v)| spaced(v));
            push_label(&mut labels, v.as_deref());
        }
        if kind == Kind::Choice {
            in_choice = Some(page.elements.len());
        }
        page.elements.push(Element {
            node,
            kind,
            labels,
            options: Vec::new(),
            path: node
                .fingerprint
                .as_ref()
                .map(|f| segments(&f.path))
                .unwrap_or_default(),
            order: me,
        });
    }
    if node.tag == "option" || node.role.as_deref() == Some("option") {
        if let Some(owner) = in_choice {
            let label = node
                .name
                .as_deref()
                .or(node.text.as_deref())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .or_else(|| node.children.iter().find_map(|c| c.text.clone()));
            if let Some(label) = label {
                page.elements[owner].options.push(label);
            }
        }
    }
    for c in &node.children {
        walk(c, page, in_choice);
    }
}
