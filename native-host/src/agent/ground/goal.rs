//! A goal read for what it asks, before any page is seen: the values to put in fields, the
//! things to press, the boxes to tick, what to search for and the question to answer, in the
//! order the goal gives them. Which element each names is the page's to say (`mod.rs`).

use std::sync::LazyLock;

use regex::Regex;

use super::words;

/// A case-insensitive regex, compiled once.
macro_rules! re {
    ($s:expr) => {{
        static R: LazyLock<Regex> = LazyLock::new(|| Regex::new(concat!("(?i)", $s)).unwrap());
        &*R
    }};
}

/// One thing the goal asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Want {
    /// A value for a field: typed into a text field, or chosen in a list or among radio buttons.
    /// Without a field, the page must show the one it belongs in.
    Assign {
        field: Option<String>,
        value: String,
    },
    /// "username alice": a field's name and its value in one phrase, told apart by the names
    /// of the fields on the page.
    Pair {
        text: String,
    },
    /// An option to choose, in whatever list or group offers it (or a control of that name).
    Choose {
        option: String,
    },
    /// Boxes to tick (or untick); with `only`, every other box is left unticked.
    Tick {
        items: Vec<String>,
        on: bool,
        only: bool,
    },
    /// A control to press or a link to follow; with `near`, the one beside that entity (a row's
    /// button, a message's reply), with `ordinal` the n-th of its kind.
    Click {
        target: String,
        ordinal: Option<usize>,
        near: Option<String>,
    },
    /// The form being filled is sent, by its own button (named `label` where the goal names it).
    Submit {
        label: Option<String>,
    },
    Search {
        query: String,
    },
    Answer(Question),
    /// "Invite Chloe Varga", "Select Omar Ruiz": a verb that is no other reading's (or a
    /// choice the page may not offer as an option), done by the control the verb names beside
    /// the object, as a row's own button is. Where the page has no control of the verb's name,
    /// it is the model's, as an unknown part is.
    Act {
        verb: String,
        object: String,
    },
    /// "Archive all the emails from Dana Lee": every row that names `near` ticked (and no
    /// other), then the control `verb` names pressed for them together.
    Every {
        verb: String,
        near: String,
    },
    /// A part of the goal this reading does not understand: only a model can take it on.
    Unknown {
        text: String,
    },
}

impl Want {
    /// Whether this puts a value in a form: such a want may be for a field the next page
    /// shows (a two-step sign-in), so the wants after it are tried meanwhile.
    pub fn fills_form(&self) -> bool {
        match self {
            Want::Assign { .. } | Want::Pair { .. } | Want::Tick { .. } | Want::Choose { .. } => {
                true
            }
            Want::Act { verb, .. } => is_choosing(verb),
            _ => false,
        }
    }
}

/// Verbs that choose among what a page offers before they press anything.
pub(super) fn is_choosing(verb: &str) -> bool {
    matches!(verb.to_lowercase().as_str(), "select" | "choose" | "pick")
}

/// A value the goal wants read off the page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Question {
    /// What the value belongs to ("wool socks"); for a question about the extreme of a list,
    /// what kind of thing the list holds ("item", "scarf").
    pub entity: String,
    pub kind: AnswerKind,
    /// The entity's property asked for by its name ("phone number", "city"): a table's
    /// column or a label on the page says which value it is.
    pub attribute: Option<String>,
    /// "the cheapest item": the one of the list with the least (or most) of the kind.
    pub extreme: Option<Extreme>,
    /// "these socks", "this jacket", "it": what the page in view is about, never searched for.
    pub here: bool,
    /// "Which hats does the shop sell?": every thing of the kind the page shows, by name.
    pub list: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnswerKind {
    Price,
    Count,
    Date,
    Time,
    Name,
    #[default]
    Any,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extreme {
    Least,
    Most,
}

/// The goal's wants, in order.
pub fn read(goal: &str) -> Vec<Want> {
    // "May 2, 2027": the comma is the date's, not a list's.
    let goal = re!(r"\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?),\s+(\d{4})\b")
        .replace_all(goal, "$1 $2");
    // "Select every message from X and archive them" → "archive every message from X".
    let goal = re!(r"\b(?:select|tick|check)\s+((?:all|every|each)\s+(?:of\s+)?(?:the\s+|my\s+)?(?:\w+\s+)?(?:from|by)\s+.+?)\s+and\s+(\w+(?:\s+as\s+\w+)?)\s+them\b")
        .replace_all(&goal, "$2 $1");
    let (text, quoted) = protect_quotes(&goal);
    // "$1,250.50": the commas are the number's thousands (a quoted value keeps its own).
    let text = thousands(&text);
    let mut wants = Vec::new();
    for (sentence, asks) in sentences(&text) {
        if asks || is_question(&sentence) {
            if let Some(q) = question(&sentence) {
                wants.push(Want::Answer(restore_question(q, &quoted)));
                continue;
            }
        }
        // "Find the phone number of Rosa Dubois.": a question put as an order.
        if re!(r"^(?:find|look\s+up|get|show\s+me)\b").is_match(&sentence)
            && clauses(&sentence).len() == 1
        {
            if let Some(q) = attribute_question(sentence.trim().trim_end_matches('?')) {
                wants.push(Want::Answer(restore_question(q, &quoted)));
                continue;
            }
        }
        let sentence = steps_of_summary(&sentence);
        let mut found_thing: Option<String> = None;
        for clause in clauses(&sentence) {
            // "In the help page, …": where the goal happens, not a step of it.
            if re!(r"^(?:in|on|at|from)\s+(?:the\s+|my\s+)?[\w\s]+?(?:page|site|section|tab|screen|list|app|inbox|form)$").is_match(clause.trim()) {
                continue;
            }
            // "Find X in the list and open it": X is what to open.
            if let Some(m) =
                re!(r"^(?:find|locate|look\s+for)\s+(.+?)(?:\s+(?:in|on)\s+the\s+\w+)?$")
                    .captures(clause.trim())
            {
                found_thing = Some(m[1].to_owned());
                continue;
            }
            if let Some(thing) = found_thing.take() {
                if re!(r"^(?:open|click|select|follow)\s+(?:it|that|them)$").is_match(clause.trim())
                {
                    wants.push(restore(click_of(&thing), &quoted));
                    continue;
                }
                // "… and click Invite for them": the control beside what was found.
                if let Some(m) = re!(r"^(?:click|press|tap|hit|use)\s+(?:the\s+)?(.+?)\s+(?:button\s+)?(?:for|next\s+to|beside|by)\s+(?:it|that|them|him|her)$").captures(clause.trim()) {
                    wants.push(restore(
                        Want::Click {
                            target: strip_role(&m[1]),
                            ordinal: None,
                            near: Some(entity_of(&thing)),
                        },
                        &quoted,
                    ));
                    continue;
                }
                wants.push(Want::Unknown {
                    text: unquote(&thing, &quoted),
                });
            }
            let read = clause_wants(&clause);
            if read.is_empty() {
                wants.push(match verb_and_object(&clause) {
                    Some(act) => restore(act, &quoted),
                    None => Want::Unknown {
                        text: unquote(&clause, &quoted),
                    },
                });
            }
            for want in read {
                wants.push(restore(want, &quoted));
            }
        }
        if let Some(thing) = found_thing {
            wants.push(Want::Unknown {
                text: unquote(&thing, &quoted),
            });
        }
    }
    wants
}

/// A number's thousands separators taken out ("1,250.50" → "1250.50"), where the commas sit
/// every three digits, so that the goal's lists are not split at them.
fn thousands(goal: &str) -> String {
    re!(r"\b\d{1,3}(?:,\d{3})+\b")
        .replace_all(goal, |c: &regex::Captures| c[0].replace(',', ""))
        .into_owned()
}

/// Quoted values stand in the text as `⟦n⟧` while it is split, so their own commas and "and"s
/// stay theirs.
fn protect_quotes(goal: &str) -> (String, Vec<String>) {
    static QUOTED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""([^"]+)"|“([^”]+)”|(?:^|\s)'([^']+)'"#).unwrap());
    let mut quoted = Vec::new();
    let text = QUOTED
        .replace_all(goal, |c: &regex::Captures| {
            let inner = c.get(1).or(c.get(2)).or(c.get(3)).unwrap().as_str();
            let lead = if c.get(3).is_some() && c[0].starts_with(char::is_whitespace) {
                " "
            } else {
                ""
            };
            quoted.push(inner.to_owned());
            format!("{lead}⟦{}⟧", quoted.len() - 1)
        })
        .into_owned();
    (text, quoted)
}

fn unquote(s: &str, quoted: &[String]) -> String {
    static MARK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"⟦(\d+)⟧").unwrap());
    MARK.replace_all(s, |c: &regex::Captures| {
        c[1].parse::<usize>()
            .ok()
            .and_then(|i| quoted.get(i))
            .cloned()
            .unwrap_or_default()
    })
    .trim()
    .to_owned()
}

/// "Buy the mug: add it to the cart, open the cart, …": the steps after the colon, their "it"
/// the thing the summary names. A colon not followed by a verb (a field's value, a list) stays.
fn steps_of_summary(sentence: &str) -> String {
    let Some((head, steps)) = sentence.split_once(": ") else {
        return sentence.to_owned();
    };
    let first = |s: &str| s.split_whitespace().next().unwrap_or("").to_lowercase();
    let (head_verb, step_verb) = (first(head), first(steps));
    if !VERBS.contains(&head_verb.as_str()) || !VERBS.contains(&step_verb.as_str()) {
        return sentence.to_owned();
    }
    let object = head.trim()[head_verb.len()..].trim();
    if object.is_empty() {
        return steps.to_owned();
    }
    let topic = entity_of(object);
    re!(r"\b(?:it|them)\b")
        .replace_all(steps, regex::NoExpand(&format!("the {topic}")))
        .into_owned()
}

/// An imperative no reading claims, "Invite Chloe Varga": its verb and what it is done to.
fn verb_and_object(clause: &str) -> Option<Want> {
    let c = without_lead_words(clause.trim());
    let m = re!(r"^([a-z]+)\s+(.+)$").captures(c.trim())?;
    let verb = m[1].to_owned();
    // Not an imperative: a sentence about someone, or a question the reading did not take.
    let not_verbs = [
        "i", "we", "you", "it", "they", "he", "she", "the", "a", "an", "my", "this", "that",
        "there", "what", "which", "how", "when", "who", "where", "why", "is", "are", "do", "does",
        "can", "could", "would", "should", "will", "if", "in", "on", "at", "to", "for",
    ];
    // Verbs that put values in place have readings of their own; one that none took is
    // not a control to press.
    let valued = [
        "type", "enter", "write", "input", "put", "fill", "set", "change", "update", "make",
        "sign", "log", "search", "look", "tell", "report", "give", "find", "read", "rate", "sort",
        "turn", "switch", "enable", "disable", "tick", "check", "untick", "uncheck", "move",
        "drag", "slide", "adjust",
    ];
    let lower = verb.to_lowercase();
    if not_verbs.contains(&lower.as_str()) || valued.contains(&lower.as_str()) {
        return None;
    }
    // "Add Tariq Keller to the team": the team is where, not whom.
    let object =
        re!(r"\s+(?:to|into|from|on|in|onto)\s+(?:the|my|our|this|your)\s+\w+$").replace(&m[2], "");
    let object = entity_of(&object);
    // "Ask the shop when it ships", "say what people think": what is said, not an entity.
    let reported = re!(r"\b(?:when|what|whether|if|how|why|where|who|which|that)\b");
    if object.is_empty() || reported.is_match(&object) || object.split_whitespace().count() > 5 {
        return None;
    }
    Some(Want::Act { verb, object })
}

fn restore(want: Want, quoted: &[String]) -> Want {
    let u = |s: &str| unquote(s, quoted);
    match want {
        Want::Assign { field, value } => Want::Assign {
            field: field.map(|f| u(&f)),
            value: u(&value),
        },
        Want::Pair { text } => Want::Pair { text: u(&text) },
        Want::Choose { option } => Want::Choose { option: u(&option) },
        Want::Tick { items, on, only } => Want::Tick {
            items: items.iter().map(|i| u(i)).collect(),
            on,
            only,
        },
        Want::Click {
            target,
            ordinal,
            near,
        } => Want::Click {
            target: u(&target),
            ordinal,
            near: near.map(|n| u(&n)),
        },
        Want::Submit { label } => Want::Submit { label },
        Want::Search { query } => Want::Search { query: u(&query) },
        Want::Answer(q) => Want::Answer(restore_question(q, quoted)),
        Want::Act { verb, object } => Want::Act {
            verb,
            object: u(&object),
        },
        Want::Every { verb, near } => Want::Every {
            verb,
            near: u(&near),
        },
        Want::Unknown { text } => Want::Unknown { text: u(&text) },
    }
}

fn restore_question(q: Question, quoted: &[String]) -> Question {
    Question {
        entity: unquote(&q.entity, quoted),
        attribute: q.attribute.map(|a| unquote(&a, quoted)),
        ..q
    }
}

/// Sentences, each with whether it ended in a question mark. A full stop inside a value (an
/// address, a price) is not an end: only one followed by a space or the end is.
fn sentences(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let ends =
            matches!(c, '.' | '!' | '?' | ';') && chars.peek().is_none_or(|n| n.is_whitespace());
        if ends {
            let s = current.trim().to_owned();
            if !s.is_empty() {
                out.push((s, c == '?'));
            }
            current.clear();
        } else {
            current.push(c);
        }
    }
    let s = current.trim().to_owned();
    if !s.is_empty() {
        out.push((s, false));
    }
    out
}

/// Verbs that start a new clause after "and", "then" or a comma.
const VERBS: &[&str] = &[
    "type",
    "enter",
    "write",
    "input",
    "put",
    "fill",
    "set",
    "change",
    "choose",
    "select",
    "pick",
    "tick",
    "check",
    "untick",
    "uncheck",
    "clear",
    "click",
    "press",
    "tap",
    "hit",
    "open",
    "follow",
    "go",
    "visit",
    "view",
    "show",
    "expand",
    "collapse",
    "search",
    "submit",
    "send",
    "save",
    "confirm",
    "sign",
    "log",
    "delete",
    "remove",
    "archive",
    "reply",
    "forward",
    "add",
    "dismiss",
    "close",
    "accept",
    "decline",
    "edit",
    "scroll",
    "use",
    "tell",
    "report",
    "give",
    "what",
    "which",
    "how",
    "when",
    "who",
    "switch",
    "turn",
    "enable",
    "disable",
    "mark",
    "buy",
    "download",
    "apply",
    "register",
    "subscribe",
    "book",
    "approve",
    "reject",
    "find",
    "read",
    "proceed",
    "continue",
    "place",
    "move",
    "drag",
    "slide",
    "adjust",
];

fn clauses(sentence: &str) -> Vec<String> {
    static JOIN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\s*,\s*(?:and\s+)?(?:then\s+)?|\s+and\s+(?:then\s+)?|\s+then\s+").unwrap()
    });
    let mut out: Vec<String> = Vec::new();
    let mut last = 0;
    let mut current = String::new();
    for m in JOIN.find_iter(sentence) {
        let next_word = sentence[m.end()..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_lowercase();
        let piece = &sentence[last..m.start()];
        current.push_str(piece);
        let ends_list = m.as_str().contains("then")
            || matches!(
                next_word.as_str(),
                "click" | "press" | "save" | "submit" | "hit" | "tap" | "send" | "apply"
            );
        if VERBS.contains(&next_word.as_str()) && (ends_list || !list_verb_open(&current)) {
            out.push(std::mem::take(&mut current));
        } else {
            current.push_str(m.as_str());
        }
        last = m.end();
    }
    current.push_str(&sentence[last..]);
    out.push(current);
    out.into_iter()
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// A clause whose list runs on: "tick A, B and C" must not be cut at "C" even when C is a verb.
fn list_verb_open(clause: &str) -> bool {
    let first = clause
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_lowercase();
    matches!(first.as_str(), "tick" | "untick" | "uncheck")
}

/// Words that say what kind of control a phrase names, not which.
const ROLE_WORDS: &[&str] = &[
    "button",
    "link",
    "tab",
    "icon",
    "menu item",
    "item",
    "entry",
    "option",
    "checkbox",
    "check box",
    "section",
    "heading",
    "field",
    "box",
    "input",
    "radio button",
    "radio",
    "toggle",
    "switch",
    "slider",
    "dropdown",
    "drop down",
    "list",
    "menu",
    "page",
    "screen",
];

/// "the Save button" → "Save".
fn strip_role(phrase: &str) -> String {
    let mut p = phrase.trim().trim_end_matches(['.', '!']).trim().to_owned();
    for lead in ["the ", "a ", "an ", "on the ", "on "] {
        if p.to_lowercase().starts_with(lead) && p.len() > lead.len() {
            p = p[lead.len()..].to_owned();
        }
    }
    for role in ROLE_WORDS {
        let lower = p.to_lowercase();
        let suffix = format!(" {role}");
        if lower.ends_with(&suffix) && p.len() > suffix.len() {
            p.truncate(p.len() - suffix.len());
            break;
        }
    }
    p.trim().to_owned()
}

/// The entity an object phrase is about: "the message from Bob Ray" → "Bob Ray".
pub(super) fn entity_of(object: &str) -> String {
    let r = re!(r"\b(?:from|by|for|of|about|titled|named|called|with the subject)\s+(.+)$");
    let e = match r.captures(object) {
        Some(c) => strip_role(&c[1]),
        None => strip_role(object),
    };
    // "Bob's message" is Bob; "the Quarterly report message" is the Quarterly report.
    let e = re!(r"(?:'s|’s)\s+\w+$").replace(&e, "").into_owned();
    // "the project Apollo" is Apollo.
    let e = re!(
        r"^(?:project|task|event|contact|user|account|ticket|playlist|board|team|post)\s+(\S.*)$"
    )
    .replace(&e, "$1")
    .into_owned();
    re!(r"\s+(?:message|email|mail|row|entry|item|record|post|comment|file|product|article|invoice|project|task|event|contact|user|account|ticket|playlist|board)$")
        .replace(&e, "")
        .trim()
        .to_owned()
}

/// A list of items: "A, B and C" → [A, B, C].
fn items(list: &str) -> Vec<String> {
    re!(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s+or\s+")
        .split(list)
        .map(strip_role)
        .filter(|s| !s.is_empty())
        .collect()
}

/// "the name to Ana and the city to Lyon" → one value a field, by `pattern` (field and value
/// in that order, or value first with `value_first`); a piece that is no pair continues the
/// value before it ("Dark blue and green").
fn assignments(list: &str, pattern: &str, value_first: bool) -> Vec<Want> {
    let Ok(pair) = Regex::new(&format!("(?i){pattern}")) else {
        return Vec::new();
    };
    let mut out: Vec<Want> = Vec::new();
    for piece in re!(r"\s*,\s*(?:and\s+)?|\s+and\s+").split(list) {
        let piece = re!(r"^(?:with|also|then)\s+").replace(piece.trim(), "");
        match pair.captures(piece.trim()) {
            Some(c) => {
                let (field, value) = if value_first {
                    (c[2].to_owned(), c[1].to_owned())
                } else {
                    (c[1].to_owned(), c[2].to_owned())
                };
                // "set the travelling to to Lublin": the first "to" is the field's own word. A
                // value written as one ("set the status to To do") keeps its capital.
                let (field, value) = match value.trim().strip_prefix("to ") {
                    Some(rest) if !value_first => (format!("{field} to"), rest.to_owned()),
                    _ => (field, value),
                };
                out.push(Want::Assign {
                    field: Some(strip_role(&field)),
                    value: value.trim().to_owned(),
                });
            }
            None => match out.last_mut() {
                Some(Want::Assign { value, .. }) => {
                    value.push_str(" and ");
                    value.push_str(piece.trim());
                }
                _ => return Vec::new(),
            },
        }
    }
    out
}

/// "username alice and password ⟦0⟧" → pairs, each told apart on the page.
fn pairs(list: &str) -> Vec<Want> {
    items(list)
        .into_iter()
        .map(|text| {
            // A colon between digits is a time's ("3:30 pm"), not a label's.
            let labelled = re!(r"^(.*?[^\d\s])\s*:\s*(.+)$")
                .captures(&text)
                .or_else(|| re!(r"^(.+?)\s*(?:=|\bis\b|\bas\b|\bof\b)\s*(.+)$").captures(&text));
            if let Some(c) = labelled {
                Want::Assign {
                    field: Some(strip_role(&c[1])),
                    value: c[2].trim().to_owned(),
                }
            } else {
                Want::Pair { text }
            }
        })
        .collect()
}

fn clause_wants(clause: &str) -> Vec<Want> {
    let c = clause
        .trim()
        .trim_start_matches(|ch: char| !ch.is_alphanumeric() && ch != '⟦');
    let c = without_lead_words(c);
    let c = c.trim();
    [every_wants, value_wants, choice_wants, action_wants]
        .iter()
        .map(|read| read(c))
        .find(|wants| !wants.is_empty())
        .unwrap_or_default()
}

/// "Please now open …" → "open …": words before a clause's verb that ask nothing of the page.
fn without_lead_words(c: &str) -> std::borrow::Cow<'_, str> {
    re!(r"^(?:please\s+|now\s+|also\s+|first\s+|finally\s+|next\s+)+").replace(c, "")
}

/// Values to put in place: sign-in credentials, a search, fields to fill or set, switches,
/// a rating, a sort order. Empty when the clause is none of these.
fn value_wants(c: &str) -> Vec<Want> {
    // Signing in: the credentials, then the form's button.
    if let Some(m) = re!(r"^(?:sign|log)\s*(?:in|on)(?:\s+to\s+(?:the\s+)?\S+)?(.*)$").captures(c) {
        let mut rest = m[1].trim().to_owned();
        let mut out = Vec::new();
        if let Some(a) = re!(r"^as\s+(\S+)\s*(.*)$").captures(&rest.clone()) {
            out.push(Want::Assign {
                field: Some("username".into()),
                value: a[1].to_owned(),
            });
            rest = a[2].to_owned();
        }
        let rest = re!(r"^(?:with|using)\s+(?:the\s+)?(?:credentials\s+)?").replace(&rest, "");
        if !rest.trim().is_empty() {
            let rest = re!(r"\b(?:with|using)\s+").replace_all(&rest, "and ");
            out.extend(pairs(&rest));
        }
        out.push(Want::Submit {
            label: Some("sign in".into()),
        });
        return out;
    }
    if let Some(m) = re!(r"^(?:search|look)\s+(?:for\s+|up\s+)?(.+?)(?:\s+(?:in|on|using)\s+the\s+search(?:\s+\w+)?)?$").captures(c) {
        return vec![Want::Search {
            query: m[1].trim().to_owned(),
        }];
    }
    if let Some(m) = re!(r"^(?:fill\s+(?:in|out)|fill|complete)\s+(.*?)\bwith\s+(.+)$").captures(c)
    {
        let what = strip_role(&m[1]);
        let list = items(&m[2]);
        if list.len() == 1 && !what.is_empty() && !words::contains("form details", &what) {
            return vec![Want::Assign {
                field: Some(what),
                value: m[2].trim().to_owned(),
            }];
        }
        return pairs(&m[2]);
    }
    if let Some(m) = re!(r"^(?:type|enter|write|input|put|insert|use)\s+(.+)$").captures(c) {
        let assigns = assignments(
            &m[1],
            r"^(.+?)\s+(?:in|into|as|for|under|inside)\s+(?:the\s+|my\s+)?(.+?)$",
            true,
        );
        if !assigns.is_empty() {
            return assigns;
        }
    }
    if let Some(m) = re!(r"^(?:rate|give)\s+(?:it\s+|this\s+|(?:the|your|my)\s+\w+\s+)?(\d+)\s+(?:out\s+of\s+\d+\s+)?stars?$").captures(c) {
        return vec![Want::Choose {
            option: format!("{} stars", &m[1]),
        }];
    }
    if let Some(m) = re!(r"^(?:turn|switch)\s+(on|off)\s+(.+)$").captures(c) {
        return vec![Want::Tick {
            items: items(&m[2]),
            on: m[1].eq_ignore_ascii_case("on"),
            only: false,
        }];
    }
    if let Some(m) = re!(r"^(?:turn|switch)\s+(.+?)\s+(on|off)$").captures(c) {
        return vec![Want::Tick {
            items: items(&m[1]),
            on: m[2].eq_ignore_ascii_case("on"),
            only: false,
        }];
    }
    if let Some(m) = re!(r"^(enable|disable|activate|deactivate)\s+(.+)$").captures(c) {
        return vec![Want::Tick {
            items: items(&m[2]),
            on: matches!(m[1].to_lowercase().as_str(), "enable" | "activate"),
            only: false,
        }];
    }
    if let Some(m) = re!(r"^sort\s+(?:the\s+\w+\s+|it\s+|them\s+)?by\s+(.+)$").captures(c) {
        return vec![click_of(&m[1])];
    }
    if let Some(m) = re!(r"^(?:type|enter|write|input|put|insert|give|use|fill\s+in|fill\s+out|provide)\s+(?:in\s+)?(.+)$").captures(c) {
        return pairs(&m[1]);
    }
    if let Some(m) = re!(r"^(?:set|change|update|make|move|drag|slide|adjust)\s+(.+)$").captures(c)
    {
        let assigns = assignments(
            &m[1],
            r"^(?:the\s+|my\s+|your\s+)?(.+?)\s+(?:to|as|=|:)\s+(.+)$",
            false,
        );
        if !assigns.is_empty() {
            return assigns;
        }
    }
    // "Make it 3 children": a count of the thing.
    if let Some(m) = re!(r"^make\s+it\s+(\d+)\s+(.+)$").captures(c) {
        return vec![Want::Assign {
            field: Some(strip_role(&m[2])),
            value: m[1].to_owned(),
        }];
    }
    // "Make the meeting time 11 pm": the field's name and its value, told apart by the page.
    if let Some(m) = re!(r"^make\s+(?:the\s+|my\s+)(.+)$").captures(c) {
        return pairs(&m[1]);
    }
    Vec::new()
}

/// Options and boxes, a checkout, a confirmation and the form's submission. Empty when the
/// clause is none of these.
fn choice_wants(c: &str) -> Vec<Want> {
    if let Some(m) = re!(r"^check\s*out\b(?:\s+with\s+(.+))?$").captures(c) {
        let mut out = vec![Want::Click {
            target: "checkout".into(),
            ordinal: None,
            near: None,
        }];
        if let Some(list) = m.get(1) {
            out.extend(pairs(list.as_str()));
        }
        return out;
    }
    if let Some(m) = re!(r"^confirm\s+(?:with|by\s+clicking|by\s+pressing)\s+(.+)$").captures(c) {
        return vec![click_of(&m[1])];
    }
    if let Some(m) = re!(r"^(?:untick|uncheck|deselect|clear)\s+(?:the\s+)?(?:boxes\s+|checkboxes\s+)?(?:for\s+)?(.+)$").captures(c) {
        return vec![Want::Tick {
            items: items(&m[1]),
            on: false,
            only: false,
        }];
    }
    if let Some(m) = re!(r"^(?:tick|check|mark)\s+(?:only\s+)?(?:the\s+)?(?:boxes\s+|checkboxes\s+)?(?:for\s+)?(.+?)(\s*,?\s*(?:and\s+|but\s+)?(?:nothing\s+else|no\s+others?|only|none\s+of\s+the\s+others))?$").captures(c) {
        let only = m.get(2).is_some() || re!(r"^(?:tick|check|mark)\s+only\b").is_match(c);
        return vec![Want::Tick {
            items: items(&m[1]),
            on: true,
            only,
        }];
    }
    // A menu is opened before its item can be chosen.
    if let Some(m) =
        re!(r"^(?:choose|select|pick)\s+(.+?)\s+(?:from|in|under)\s+(?:the\s+)?(.+?)\s+menu$")
            .captures(c)
    {
        return vec![click_of(&m[2]), click_of(&m[1])];
    }
    if let Some(m) = re!(
        r"^(?:choose|select|pick|opt\s+for)\s+(.+?)\s+(?:as|for|in|from|under)\s+(?:the\s+)?(.+)$"
    )
    .captures(c)
    {
        return vec![Want::Assign {
            field: Some(strip_role(&m[2])),
            value: strip_role(&m[1]),
        }];
    }
    if let Some(m) = re!(r"^(choose|select|pick)\s+(.+)$").captures(c) {
        return vec![Want::Act {
            verb: m[1].to_owned(),
            object: strip_role(&m[2]),
        }];
    }
    if let Some(m) = re!(r"^opt\s+for\s+(.+)$").captures(c) {
        return vec![Want::Choose {
            option: strip_role(&m[1]),
        }];
    }
    if let Some(m) =
        re!(r"^(submit|send|save|confirm|post|place|apply)\b(?:\s+(?:it|them|this|(?:the|my)\s+(\w+)))?$")
            .captures(c)
    {
        let verb = m[1].to_lowercase();
        let label = match m.get(2) {
            Some(object) => format!("{verb} {}", object.as_str()),
            None => verb.clone(),
        };
        return vec![Want::Submit {
            label: (verb != "submit").then_some(label),
        }];
    }
    Vec::new()
}

/// "Archive all the emails from X", "Mark every message from X as read": the rows of X, all
/// of them, and one control for them together. Read ahead of the other readings, whose
/// "mark … as read" is a box to tick.
fn every_wants(c: &str) -> Vec<Want> {
    if let Some(m) = re!(r"^(archive|delete|remove|trash|mark|star|flag|restore|mute|move|select)\s+(?:all|every|each)\s+(?:of\s+)?(?:the\s+|my\s+)?(?:\w+\s+)?(?:from|by)\s+(.+?)(?:\s+(as\s+\w+))?$").captures(c) {
        let verb = match m.get(3) {
            Some(r#as) => format!("{} {}", &m[1], r#as.as_str()),
            None => m[1].to_owned(),
        };
        return vec![Want::Every {
            verb: verb.to_lowercase(),
            near: entity_of(&m[2]),
        }];
    }
    Vec::new()
}

/// Controls to press: adding to a cart, inbox actions, a row's action, clicks and opens.
/// Empty when the clause is none of these.
fn action_wants(c: &str) -> Vec<Want> {
    if let Some(m) = re!(r"^add\s+(?:the\s+|a\s+|an\s+|one\s+)?(.+?)\s+to\s+(?:the\s+|my\s+)?(cart|basket|bag|wishlist|favou?rites)$").captures(c) {
        return vec![Want::Click {
            target: format!("add to {}", &m[2]),
            ordinal: None,
            near: Some(strip_role(&m[1])),
        }];
    }
    if let Some(m) = re!(r"^forward\s+(.+?)\s+to\s+(\S+@\S+)$").captures(c) {
        return vec![
            Want::Click {
                target: "forward".into(),
                ordinal: None,
                near: Some(entity_of(&m[1])),
            },
            Want::Assign {
                field: Some("to".into()),
                value: m[2].to_owned(),
            },
            Want::Submit {
                label: Some("send".into()),
            },
        ];
    }
    if let Some(m) =
        re!(r"^reply\s+(?:to\s+)?(.+?)\s+(?:with|saying|and say|and write)\s+(.+)$").captures(c)
    {
        return vec![
            Want::Click {
                target: "reply".into(),
                ordinal: None,
                near: Some(entity_of(&m[1])),
            },
            Want::Assign {
                field: None,
                value: m[2].trim().to_owned(),
            },
            Want::Submit {
                label: Some("send".into()),
            },
        ];
    }
    if let Some(m) = re!(r"^(delete|remove|archive|reply\s+to|reply|forward|edit|approve|reject|decline|cancel|download|star|restore|duplicate|rename|pin|unpin|mute|buy)\s+(.+)$").captures(c) {
        let verb = re!(r"\s+to$").replace(&m[1].to_lowercase(), "").into_owned();
        return vec![Want::Click {
            target: verb,
            ordinal: None,
            near: Some(entity_of(&m[2])),
        }];
    }
    if let Some(m) = re!(r"^(?:click|press|tap|hit|push|activate|open|follow|go\s+to|visit|view|show|expand|collapse|switch\s+to|navigate\s+to|dismiss|close|accept|proceed\s+to|continue\s+to|scroll\s+to)\s+(?:on\s+)?(.+)$").captures(c) {
        let verb = c.split_whitespace().next().unwrap_or("").to_lowercase();
        let phrase = m[1].trim();
        let mut want = click_of(phrase);
        if matches!(verb.as_str(), "dismiss" | "close" | "accept") {
            if let Want::Click { target, near, .. } = &mut want {
                if near.is_none() {
                    *near = Some(target.clone());
                    *target = verb;
                }
            }
        }
        return vec![want];
    }
    Vec::new()
}

/// "the third result" → ordinal 3 of "result"; "Edit in the row for Bob" → Edit near Bob.
fn click_of(phrase: &str) -> Want {
    let phrase = re!(r"\s+(?:in|on|from)\s+the\s+(?:dialog|popup|pop-up|window|modal|menu|toolbar|page|list)(?:\s+box)?$").replace(phrase.trim(), "");
    let phrase = re!(r"\s+(?:there|inside it|inside|for them|for it)$").replace(&phrase, "");
    let phrase =
        re!(r"\s+to\s+(?:sort|open|see|show|view|filter|start|continue)\b.*$").replace(&phrase, "");
    let phrase = re!(r"^(?:me\s+)?(?:the\s+)?(?:link|page|button|tab)\s+(?:to|for)\s+(?:the\s+)?")
        .replace(&phrase, "");
    let phrase =
        re!(r"^(?:me\s+)?(?:the\s+)?\w+\s+(?:titled|named|called)\s+").replace(&phrase, "");
    let phrase = re!(r"^me\s+").replace(&phrase, "");
    // "the article “Budget 2026”": the quoted name is the link's.
    let phrase = re!(r"^(?:the\s+)?(?:article|message|email|mail|file|document|product|item|post|story|video|thread|issue|ticket|folder|page|link|entry|record|report)\s+(⟦\d+⟧)$").replace(&phrase, "$1");
    let mut target = phrase.trim().to_owned();
    let mut near = None;
    // "budget.xlsx in the Contracts folder": the folder is opened first where it is closed.
    if let Some(c) = re!(r"^(.+?)\s+(?:in|inside|under|within)\s+(?:the\s+|my\s+)?(.+?)\s+(?:folder|directory|section|group|category|panel|card|tab)$").captures(&target.clone()) {
        return Want::Click {
            target: strip_role(&c[1]),
            ordinal: None,
            near: Some(strip_role(&c[2])),
        };
    }
    if let Some(c) = re!(r"^(.+?)\s+(?:in the row (?:for|of|with)|in the (?:line|entry|card|item) (?:for|of)|next to|beside|for|of|from|by)\s+(.+)$").captures(&target.clone()) {
        target = c[1].to_owned();
        near = Some(strip_role(&c[2]));
    }
    let mut ordinal = None;
    let stripped = strip_role(&target);
    let mut parts = stripped.splitn(2, ' ');
    if let (Some(first), Some(rest)) = (parts.next(), parts.next()) {
        if let Some(n) = words::ordinal(first) {
            ordinal = Some(n);
            target = rest.to_owned();
        }
    }
    Want::Click {
        target: strip_role(&target),
        ordinal,
        near,
    }
}

fn is_question(sentence: &str) -> bool {
    re!(r"^(?:what|which|how|when|who|whom|where|is|are|does|do|tell me|find out|report|give me|read|look up|list)\b").is_match(sentence.trim())
}

/// The value a question sentence asks for. "The price of the order in total" is the total:
/// what the page labels so.
fn question(sentence: &str) -> Option<Question> {
    let s = sentence.trim().trim_end_matches(['?', '.']).trim();
    if let Some(q) = list_question(s) {
        return Some(q);
    }
    let Some(c) = re!(r"^(.+?)\s+(?:in\s+total|altogether|overall|in\s+all)$").captures(s) else {
        return question_of(s).map(deictic);
    };
    let mut q = question_of(&c[1])?;
    if q.kind == AnswerKind::Price {
        q.entity = "total".into();
    }
    Some(q)
}

/// "What do these socks cost?", "How much is it?": the entity is the page's own.
fn deictic(mut q: Question) -> Question {
    let entity = q.entity.trim().to_owned();
    if let Some(c) = re!(r"^(?:this|these|that|those)\s+(.+)$").captures(&entity) {
        q.entity = c[1].to_owned();
        q.here = true;
    } else if re!(r"^(?:it|this|that|they|them|these|those)$").is_match(&entity) {
        q.entity = String::new();
        q.here = true;
    }
    q
}

/// "Which hats does the shop sell?", "What scarves are there?", "List the hats": every
/// thing of a kind, named by a plural.
fn list_question(s: &str) -> Option<Question> {
    let c =
        re!(r"^(?:which|what)\s+(?:kinds?\s+of\s+)?([a-z]+s)\s+(?:does|do|did|can|are|is|will)\b")
            .captures(s)
            .or_else(|| {
                re!(r"^list\s+(?:all\s+)?(?:of\s+)?(?:the\s+|your\s+)?([a-z]+s)\b").captures(s)
            })?;
    let kind = c[1].to_lowercase();
    // "What does …", "Which is …": a plural only where it names the things.
    if matches!(
        kind.as_str(),
        "is" | "was" | "has" | "does" | "this" | "its" | "us" | "yes"
    ) {
        return None;
    }
    Some(Question {
        entity: kind,
        kind: AnswerKind::Name,
        list: true,
        ..Default::default()
    })
}

/// "Which product is the cheapest?", "What does the most expensive item cost?": the least
/// or most of a list's prices, and what kind of thing the list holds ("item" for any).
fn extreme_question(s: &str) -> Option<Question> {
    let least = re!(
        r"\b(?:cheapest|least\s+expensive|lowest[-\s]priced|lowest\s+price|costs?\s+(?:the\s+)?least)\b"
    );
    let most = re!(
        r"\b(?:most\s+expensive|priciest|dearest|highest[-\s]priced|highest\s+price|costs?\s+(?:the\s+)?most)\b"
    );
    let extreme = if least.is_match(s) {
        Extreme::Least
    } else if most.is_match(s) {
        Extreme::Most
    } else {
        return None;
    };
    let after = re!(
        r"(?:cheapest|least\s+expensive|most\s+expensive|priciest|dearest|lowest[-\s]priced|highest[-\s]priced)\s+([a-z][a-z\s-]*?)(?:\s+(?:cost|costs|on|in|here|of|available|listed|sold|is|are|for|you|they|we|that)\b.*)?$"
    );
    let before = re!(
        r"^(?:which|what)\s+(?:one\s+of\s+the\s+)?([a-z][a-z\s-]*?)\s+(?:is|are|costs?|has|have|sells?)\b"
    );
    let thing = after
        .captures(s)
        .or_else(|| before.captures(s))
        .map_or_else(|| "item".to_owned(), |c| c[1].trim().to_owned());
    let thing = if thing.is_empty() || thing == "one" {
        "item".to_owned()
    } else {
        thing
    };
    Some(Question {
        entity: entity_of(&thing),
        kind: AnswerKind::Price,
        extreme: Some(extreme),
        ..Question::default()
    })
}

/// "What is Nadia Lindqvist's phone number?", "Which city is Priya Varga in?", "the email of
/// Ana Ruiz": an entity's property by its name, where the name is no kind of value this
/// reading knows (a price, a date, a count are read by their form instead).
fn attribute_question(s: &str) -> Option<Question> {
    let asks =
        r"(?:what\s+is|what's|whats|what\s+are|find|tell\s+me|give\s+me|look\s+up|show\s+me)";
    let possessive =
        Regex::new(&format!(r"(?i)^{asks}\s+(?:the\s+)?(.+?)(?:'s|’s)\s+(.+)$")).ok()?;
    let of = Regex::new(&format!(r"(?i)^{asks}\s+the\s+(.+?)\s+(?:of|for)\s+(.+)$")).ok()?;
    let placed = re!(
        r"^(?:which|what)\s+(.+?)\s+(?:is|does|do|did|was)\s+(.+?)\s+(?:(?:work|works|live|lives|belong|belongs|sit|sits|come|comes|based|located)\s+)?(?:in|from|at|on|for|with|under)$"
    );
    let (entity, attribute) = if let Some(c) = possessive.captures(s) {
        (c[1].to_owned(), c[2].to_owned())
    } else if let Some(c) = placed.captures(s) {
        (c[2].to_owned(), c[1].to_owned())
    } else if let Some(c) = of.captures(s) {
        (c[2].to_owned(), c[1].to_owned())
    } else {
        return None;
    };
    let attribute = strip_role(&attribute);
    let last = attribute
        .split_whitespace()
        .last()
        .unwrap_or("")
        .to_lowercase();
    let valued = [
        "price", "cost", "total", "subtotal", "amount", "fee", "balance", "count", "quantity",
        "stock", "date", "deadline", "day", "time", "name", "author", "sender", "owner",
        "assignee",
    ];
    if valued.contains(&last.as_str()) || attribute.is_empty() {
        return None;
    }
    let entity = entity_of(&entity);
    (!entity.is_empty()).then_some(Question {
        entity,
        attribute: Some(attribute),
        ..Question::default()
    })
}

fn question_of(s: &str) -> Option<Question> {
    if let Some(q) = extreme_question(s).or_else(|| attribute_question(s)) {
        return Some(q);
    }
    let kind_of = |k: &str| match k.to_lowercase().as_str() {
        "price" | "cost" | "total" | "subtotal" | "amount" | "fee" | "balance" => AnswerKind::Price,
        "count" | "number" | "quantity" | "stock" | "how many" => AnswerKind::Count,
        "date" | "due date" | "deadline" | "day" => AnswerKind::Date,
        "time" => AnswerKind::Time,
        "name" | "author" | "sender" | "owner" | "assignee" | "contact" => AnswerKind::Name,
        _ => AnswerKind::Any,
    };
    let q = |entity: &str, kind| {
        Some(Question {
            entity: entity_of(
                &re!(r"^(?:one\s+|a\s+pair\s+of\s+|a\s+)").replace(entity.trim(), ""),
            ),
            kind,
            ..Question::default()
        })
    };
    if let Some(c) = re!(r"(?:what|how\s+much)\s+(?:does|do|did|is|are|will)\s+(?:a\s+|the\s+)?(.+?)\s+(?:cost|costs|sell\s+for|go\s+for)$").captures(s) {
        return q(&c[1], AnswerKind::Price);
    }
    if let Some(c) =
        re!(r"how\s+much\s+(?:is|are|does|do)\s+(?:a\s+|the\s+)?(.+?)(?:\s+cost)?$").captures(s)
    {
        return q(&c[1], AnswerKind::Price);
    }
    if let Some(c) = re!(r"\b(price|cost|total|subtotal|amount|fee|balance|count|number|quantity|stock|due date|deadline|date|time|name|author|sender|owner|assignee|status|rating|email|phone)\b[^?]*?\b(?:of|for|on|in)\s+(?:the\s+)?(.+)$").captures(s) {
        return q(&c[2], kind_of(&c[1]));
    }
    if let Some(c) = re!(r"how\s+many\s+(.+?)\s+(?:are|is|does|do|did|have|has|were|was)\s+(?:there\s+)?(?:left\s+)?(?:in|at|for|on|of)?\s*(?:the\s+|stock\s+)?(.*?)(?:\s+have|\s+in\s+stock|\s+left)?$").captures(s) {
        let place = c[2].trim().to_lowercase();
        let generic = ["", "stock", "store", "total", "inventory", "warehouse", "all"];
        let entity = if generic.contains(&place.as_str()) { &c[1] } else { &c[2] };
        return q(entity, AnswerKind::Count);
    }
    if let Some(c) = re!(r"how\s+many\s+(.+)$").captures(s) {
        return q(&c[1], AnswerKind::Count);
    }
    if let Some(c) = re!(r"^when\s+(?:is|was|does|did|will|do)\s+(?:the\s+)?(.+?)(?:\s+(?:due|start|end|happen|ship|open|close|expire|arrive|take place))?$").captures(s) {
        return q(&c[1], AnswerKind::Date);
    }
    if let Some(c) =
        re!(r"^who\s+(?:sent|wrote|owns|is|created|posted|made|assigned)\s+(?:the\s+)?(.+)$")
            .captures(s)
    {
        return q(&c[1], AnswerKind::Name);
    }
    if let Some(c) = re!(r"^(?:what|which)\s+(?:is|are|was)\s+(?:the\s+)?(.+)$").captures(s) {
        // "What is the order total?": the last word says what kind of value it is.
        let last = c[1].split_whitespace().last().unwrap_or("").to_owned();
        return q(&c[1], kind_of(&last));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(field: &str, value: &str) -> Want {
        Want::Assign {
            field: Some(field.into()),
            value: value.into(),
        }
    }

    #[test]
    fn sign_in_reads_as_credentials_then_the_button() {
        assert_eq!(
            read("Sign in as alice with password \"pa ss, and more\""),
            vec![
                assign("username", "alice"),
                Want::Pair {
                    text: "password pa ss, and more".into()
                },
                Want::Submit {
                    label: Some("sign in".into())
                }
            ]
        );
    }

    #[test]
    fn values_go_into_named_fields_and_clauses_split_at_verbs() {
        assert_eq!(
            read("Type 42 into the Quantity field, set Colour to Dark blue and press Save"),
            vec![
                assign("Quantity", "42"),
                assign("Colour", "Dark blue"),
                Want::Click {
                    target: "Save".into(),
                    ordinal: None,
                    near: None
                }
            ]
        );
        assert_eq!(
            read("Fill in the form with name: Ana Ruiz, email: ana@example.org and submit it."),
            vec![
                assign("name", "Ana Ruiz"),
                assign("email", "ana@example.org"),
                Want::Submit { label: None }
            ]
        );
    }

    #[test]
    fn a_menu_item_is_chosen_by_opening_the_menu_first_and_a_page_is_its_link() {
        let click = |t: &str| Want::Click {
            target: t.into(),
            ordinal: None,
            near: None,
        };
        assert_eq!(
            read("Choose Download from the Options menu."),
            vec![click("Options"), click("Download")]
        );
        assert_eq!(
            read("Open the Notifications page."),
            vec![click("Notifications")]
        );
    }

    #[test]
    fn switches_turned_on_and_off_are_two_wants() {
        let tick = |item: &str, on: bool| Want::Tick {
            items: vec![item.into()],
            on,
            only: false,
        };
        let apply = Want::Click {
            target: "Apply".into(),
            ordinal: None,
            near: None,
        };
        for goal in [
            "Turn on Sound effects and turn off Public profile, then click Apply.",
            "Enable Sound effects, disable Public profile and press Apply.",
        ] {
            assert_eq!(
                read(goal),
                vec![
                    tick("Sound effects", true),
                    tick("Public profile", false),
                    apply.clone()
                ],
                "{goal}"
            );
        }
    }

    #[test]
    fn ticks_keep_their_list_and_know_when_nothing_else_is_wanted() {
        assert_eq!(
            read("Tick Red, Green and Blue and nothing else, then click Apply"),
            vec![
                Want::Tick {
                    items: vec!["Red".into(), "Green".into(), "Blue".into()],
                    on: true,
                    only: true
                },
                Want::Click {
                    target: "Apply".into(),
                    ordinal: None,
                    near: None
                }
            ]
        );
    }

    #[test]
    fn rows_ordinals_and_messages_name_what_they_are_near() {
        assert_eq!(
            read("Open the third result"),
            vec![Want::Click {
                target: "result".into(),
                ordinal: Some(3),
                near: None
            }]
        );
        assert_eq!(
            read("Delete the message from Bob Ray"),
            vec![Want::Click {
                target: "delete".into(),
                ordinal: None,
                near: Some("Bob Ray".into())
            }]
        );
        assert_eq!(
            read("Add the blue hat to the cart"),
            vec![Want::Click {
                target: "add to cart".into(),
                ordinal: None,
                near: Some("blue hat".into())
            }]
        );
    }

    #[test]
    fn questions_name_their_entity_and_the_kind_of_value() {
        let ask = |e: &str, kind| {
            vec![Want::Answer(Question {
                entity: e.into(),
                kind,
                ..Question::default()
            })]
        };
        assert_eq!(
            read("What do wool socks cost?"),
            ask("wool socks", AnswerKind::Price)
        );
        assert_eq!(
            read("How much is the cheapest scarf?"),
            vec![Want::Answer(Question {
                entity: "scarf".into(),
                kind: AnswerKind::Price,
                extreme: Some(Extreme::Least),
                ..Question::default()
            })]
        );
        assert_eq!(
            read("What is the due date of invoice 1042?"),
            ask("invoice 1042", AnswerKind::Date)
        );
        assert_eq!(
            read("How many Blue mugs are in stock?"),
            ask("Blue mugs", AnswerKind::Count)
        );
    }

    #[test]
    fn a_verb_no_reading_knows_is_done_by_the_control_of_its_name() {
        let act = |verb: &str, object: &str| Want::Act {
            verb: verb.into(),
            object: object.into(),
        };
        assert_eq!(
            read("Invite Viktor Ruiz."),
            vec![act("Invite", "Viktor Ruiz")]
        );
        assert_eq!(
            read("Select Chloe Iqbal."),
            vec![act("Select", "Chloe Iqbal")]
        );
        assert_eq!(
            read("Add Tariq Keller to the team."),
            vec![act("Add", "Tariq Keller")]
        );
        assert_eq!(
            read("Find Omar Okafor in the list and click Invite for them."),
            vec![Want::Click {
                target: "Invite".into(),
                ordinal: None,
                near: Some("Omar Okafor".into())
            }]
        );
        // Not imperatives, or not done to an entity: left to the model as parts the reading
        // does not know.
        for goal in [
            "I want something warm.",
            "Ask the shop when order 1001 ships.",
            "Say what people think.",
        ] {
            assert!(
                matches!(read(goal).as_slice(), [Want::Unknown { .. }]),
                "{goal}: {:?}",
                read(goal)
            );
        }
    }

    #[test]
    fn a_summary_before_a_colon_names_what_its_steps_call_it() {
        let wants = read(
            "Buy the water bottle: add it to the cart, open the cart, press Checkout, enter \
             name \"Lena Haddad\" and city Leeds, and place the order.",
        );
        assert_eq!(
            wants,
            vec![
                Want::Click {
                    target: "add to cart".into(),
                    ordinal: None,
                    near: Some("water bottle".into())
                },
                Want::Click {
                    target: "cart".into(),
                    ordinal: None,
                    near: None
                },
                Want::Click {
                    target: "Checkout".into(),
                    ordinal: None,
                    near: None
                },
                Want::Pair {
                    text: "name Lena Haddad".into()
                },
                Want::Pair {
                    text: "city Leeds".into()
                },
                Want::Submit {
                    label: Some("place order".into())
                },
            ]
        );
        // A colon before a value is no summary.
        assert_eq!(
            steps_of_summary("Set the title to: Weekly report"),
            "Set the title to: Weekly report"
        );
    }

    #[test]
    fn a_folder_named_around_a_file_and_a_quoted_title_are_where_and_what_to_open() {
        assert_eq!(
            read("Open budget.xlsx in the Contracts folder."),
            vec![Want::Click {
                target: "budget.xlsx".into(),
                ordinal: None,
                near: Some("Contracts".into())
            }]
        );
        assert_eq!(
            read("Open the article \"Server upgrade 47\"."),
            vec![Want::Click {
                target: "Server upgrade 47".into(),
                ordinal: None,
                near: None
            }]
        );
    }

    #[test]
    fn a_field_whose_name_ends_in_to_and_a_total_asked_in_other_words() {
        assert_eq!(
            read("Set the travelling to to Lublin and click Find trains."),
            vec![
                assign("travelling to", "Lublin"),
                Want::Click {
                    target: "Find trains".into(),
                    ordinal: None,
                    near: None
                }
            ]
        );
        assert_eq!(
            read("Set the status to To do."),
            vec![assign("status", "To do")]
        );
        assert_eq!(
            read("What is the price of the order in total?"),
            vec![Want::Answer(Question {
                entity: "total".into(),
                kind: AnswerKind::Price,
                ..Question::default()
            })]
        );
        assert_eq!(
            read("How many items are in the cart altogether?"),
            vec![Want::Answer(Question {
                entity: "cart".into(),
                kind: AnswerKind::Count,
                ..Question::default()
            })]
        );
    }

    #[test]
    fn a_property_by_its_name_and_the_extreme_of_a_list_are_questions() {
        let about = |e: &str, a: &str| {
            vec![Want::Answer(Question {
                entity: e.into(),
                attribute: Some(a.into()),
                ..Question::default()
            })]
        };
        assert_eq!(
            read("What is Nadia Lindqvist's phone number?"),
            about("Nadia Lindqvist", "phone number")
        );
        assert_eq!(
            read("Which city is Priya Varga in?"),
            about("Priya Varga", "city")
        );
        assert_eq!(
            read("What office city does Marek Dubois work from?"),
            about("Marek Dubois", "office city")
        );
        assert_eq!(
            read("Find the phone number of Rosa Dubois."),
            about("Rosa Dubois", "phone number")
        );
        // A kind of value this reading knows is read by its form, as before.
        assert_eq!(
            read("What is the price of the desk lamp?"),
            vec![Want::Answer(Question {
                entity: "desk lamp".into(),
                kind: AnswerKind::Price,
                ..Question::default()
            })]
        );
        // "Find X and …" is still a thing to find, not a question.
        assert!(!matches!(
            read("Find Omar Okafor in the list and click Invite for them").first(),
            Some(Want::Answer(_))
        ));
        let extreme = |e: &str, x| {
            vec![Want::Answer(Question {
                entity: e.into(),
                kind: AnswerKind::Price,
                extreme: Some(x),
                ..Question::default()
            })]
        };
        assert_eq!(
            read("Which item costs the least?"),
            extreme("item", Extreme::Least)
        );
        assert_eq!(
            read("Which product is the most expensive?"),
            extreme("product", Extreme::Most)
        );
    }

    #[test]
    fn values_set_by_moving_making_and_applying() {
        assert_eq!(
            read("Move the volume slider to 80, then press Save."),
            vec![
                assign("volume", "80"),
                Want::Click {
                    target: "Save".into(),
                    ordinal: None,
                    near: None
                }
            ]
        );
        assert_eq!(
            read("Change brightness to 90 and apply."),
            vec![
                assign("brightness", "90"),
                Want::Submit {
                    label: Some("apply".into())
                }
            ]
        );
        assert_eq!(read("Make it 3 children")[0], assign("children", "3"));
        // A time's colon is not a label's, and a date's comma is not a list's.
        assert_eq!(
            read("Make the reminder time 3:30 pm")[0],
            Want::Pair {
                text: "reminder time 3:30 pm".into()
            }
        );
        assert_eq!(
            read("Enter May 2, 2027 as the departure date")[0],
            assign("departure date", "May 2 2027")
        );
        assert_eq!(
            read("Remove the project Granite."),
            vec![Want::Click {
                target: "remove".into(),
                ordinal: None,
                near: Some("Granite".into())
            }]
        );
    }

    #[test]
    fn every_row_of_one_sender_and_amounts_with_their_thousands() {
        let every = |verb: &str| Want::Every {
            verb: verb.into(),
            near: "Dana Lee".into(),
        };
        assert_eq!(
            read("Archive all the emails from Dana Lee."),
            vec![every("archive")]
        );
        assert_eq!(
            read("Select every message from Dana Lee and delete them."),
            vec![every("delete")]
        );
        assert_eq!(
            read("Mark all the messages from Dana Lee as read."),
            vec![every("mark as read")]
        );
        assert_eq!(
            read("Set the amount to $1,250.50, then click Send.")[0],
            assign("amount", "$1250.50")
        );
        assert_eq!(
            read("Enter 1,250 dollars as the budget")[0],
            assign("budget", "1250 dollars")
        );
        // A quoted value keeps its commas.
        assert_eq!(
            read("Type \"1,000\" into the search box")[0],
            Want::Assign {
                field: Some("search".into()),
                value: "1,000".into()
            }
        );
    }

    #[test]
    fn the_page_s_own_thing_and_every_thing_of_a_kind_are_questions() {
        let q = |g: &str| match &read(g)[..] {
            [Want::Answer(q)] => q.clone(),
            other => panic!("{g}: {other:?}"),
        };
        let socks = q("What do these socks cost?");
        assert_eq!((socks.entity.as_str(), socks.here), ("socks", true));
        let it = q("How much is it?");
        assert_eq!((it.entity.as_str(), it.here), ("", true));
        assert!(!q("What do wool socks cost?").here);
        for g in [
            "Which hats does the shop sell?",
            "What scarves are there?",
            "List the hats.",
        ] {
            let list = q(g);
            assert!(list.list, "{g}");
            assert!(list.entity.ends_with('s'), "{g}: {list:?}");
        }
        assert!(!q("Which city is Priya Varga in?").list);
    }
}
