//! Reading a decision out of whatever the model wrote.
//!
//! In order: a JSON object with an `action` (found by brace matching, so prose or code fences
//! around it do not matter), then a command at the start of a line (`CLICK 4`, `TYPE 3 "socks"`),
//! then plain done-language ("the task is complete"). With constrained decoding only the first
//! ever applies; the others are for models and servers that cannot constrain their output.

use serde_json::{Map, Value};

use super::reply::{ModelReply, VERBS};

/// Which reading succeeded (reported with the step, to see how well a model follows the format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Json,
    Line,
    DoneLanguage,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub reply: ModelReply,
    pub source: Source,
}

/// Why nothing could be read; worded for the model, which is asked again with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreadable(pub String);

pub fn parse(text: &str) -> Result<Parsed, Unreadable> {
    let objects = json_objects(text);
    let mut json_problem = None;
    for object in &objects {
        match serde_json::from_str::<Value>(object) {
            Ok(Value::Object(map)) => match from_object(map) {
                Ok(reply) => {
                    return Ok(Parsed {
                        reply,
                        source: Source::Json,
                    })
                }
                Err(problem) => {
                    json_problem.get_or_insert(problem);
                }
            },
            Ok(_) => {}
            Err(e) => {
                json_problem.get_or_insert(format!("your JSON does not parse ({e})"));
            }
        }
    }
    if let Some(reply) = text.lines().find_map(from_line) {
        return Ok(Parsed {
            reply,
            source: Source::Line,
        });
    }
    if let Some(problem) = json_problem {
        return Err(Unreadable(format!(
            "{problem}. Reply with one JSON object such as {{\"thought\": \"…\", \"action\": \"click\", \"index\": 3}}."
        )));
    }
    if let Some(reply) = done_language(text) {
        return Ok(Parsed {
            reply,
            source: Source::DoneLanguage,
        });
    }
    Err(Unreadable(
        "your reply has no action. Reply with one JSON object such as {\"thought\": \"…\", \"action\": \"click\", \"index\": 3}.".into(),
    ))
}

/// Top-level `{…}` spans of `text`, braces inside JSON strings ignored.
pub(crate) fn json_objects(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut start = 0;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' if depth > 0 => in_string = true,
            b'{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    out
}

/// The verb a model meant, from the names models use for it.
fn verb(name: &str) -> Option<&'static str> {
    let n = name.trim().to_lowercase().replace(['-', ' '], "_");
    let v = match n.as_str() {
        "input" | "fill" | "type_text" | "input_text" | "enter_text" => "type",
        "select_option" | "choose" => "select",
        "uncheck" | "toggle" | "check_box" => "check",
        "press" | "key" | "keypress" | "send_keys" => "press_key",
        "goto" | "go_to" | "go_to_url" | "open" | "open_url" | "visit" => "navigate",
        "go_back" => "back",
        "go_forward" => "forward",
        "finish" | "complete" | "answer" | "stop" => "done",
        "ask" | "ask_human" | "question" => "ask_user",
        "scroll_down" | "scroll_up" => "scroll",
        other => return VERBS.iter().copied().find(|v| *v == other),
    };
    Some(v)
}

/// A number, or a number written as a string (`"4"`, `"[4]"`).
fn index_of(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => s.trim().trim_matches(['[', ']']).parse().ok(),
        _ => None,
    }
}

fn from_object(mut map: Map<String, Value>) -> Result<ModelReply, String> {
    // `{"action": {"click": {"index": 4}}}` and `{"click": {"index": 4}}`: nested forms.
    if let Some(Value::Object(inner)) = map.get("action").cloned() {
        if inner.len() == 1 {
            let (name, args) = inner.into_iter().next().expect("one entry");
            map.insert("action".into(), Value::String(name));
            if let Value::Object(args) = args {
                map.extend(args);
            }
        }
    }
    if !map.contains_key("action") {
        let named = map
            .iter()
            .find(|(k, v)| v.is_object() && verb(k).is_some())
            .map(|(k, _)| k.clone());
        if let Some(name) = named {
            if let Some(Value::Object(args)) = map.remove(&name) {
                map.extend(args);
            }
            map.insert("action".into(), Value::String(name));
        } else if map.contains_key("answer") {
            map.insert("action".into(), Value::String("done".into()));
        }
    }
    let Some(name) = map.get("action").and_then(Value::as_str).map(str::to_owned) else {
        return Err("your JSON has no \"action\"".into());
    };
    let Some(v) = verb(&name) else {
        return Err(format!(
            "\"{name}\" is not an action; use one of {}",
            VERBS.join(", ")
        ));
    };
    let lower = name.to_lowercase();
    map.insert("action".into(), Value::String(v.into()));
    if lower == "uncheck" {
        map.entry("checked").or_insert(Value::Bool(false));
    }
    if lower.starts_with("scroll_") {
        let dir = lower.trim_start_matches("scroll_").to_owned();
        map.entry("direction").or_insert(Value::String(dir));
    }
    for alias in ["element", "element_index", "element_id", "id", "target"] {
        if !map.contains_key("index") {
            if let Some(i) = map.get(alias).and_then(index_of) {
                map.insert("index".into(), i.into());
            }
        }
    }
    for field in ["index", "subgoal_done"] {
        if let Some(i) = map.get(field).and_then(index_of) {
            map.insert(field.into(), i.into());
        }
    }
    for (alias, field) in [("input", "text"), ("option", "value"), ("query", "text")] {
        if !map.contains_key(field) {
            if let Some(v) = map.get(alias).filter(|v| v.is_string()).cloned() {
                map.insert(field.into(), v);
            }
        }
    }
    // Other fields of the wrong type (e.g. a numeric text) are made strings, not refused.
    for field in [
        "text", "value", "answer", "question", "url", "key", "thought",
    ] {
        if let Some(v) = map.get(field) {
            if !v.is_string() && !v.is_null() {
                let s = v.to_string();
                map.insert(field.into(), Value::String(s));
            }
        }
    }
    serde_json::from_value(Value::Object(map))
        .map_err(|e| format!("your JSON has a field of the wrong type ({e})"))
}

/// One argument: a quoted string (with its closing quote), or the next word.
fn take_arg(rest: &str) -> Option<(String, &str)> {
    let rest = rest.trim_start();
    let first = rest.chars().next()?;
    if matches!(first, '"' | '\'' | '“' | '`') {
        let close = match first {
            '“' => '”',
            c => c,
        };
        let body = &rest[first.len_utf8()..];
        let end = body.find(close)?;
        return Some((body[..end].to_owned(), &body[end + close.len_utf8()..]));
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some((rest[..end].to_owned(), &rest[end..]))
}

/// `CLICK 4`, `TYPE 3 "socks" SUBMIT`, `DONE: 12.99 €`, … at the start of a line.
fn from_line(line: &str) -> Option<ModelReply> {
    let mut s = line
        .trim()
        .trim_start_matches(['-', '*', '>', '`', ' '])
        .trim();
    for prefix in ["action:", "next action:", "command:"] {
        if s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix) {
            s = s[prefix.len()..].trim();
        }
    }
    let s = s.trim_end_matches('`').trim();
    let word_end = s
        .find(|c: char| c.is_whitespace() || c == ':')
        .unwrap_or(s.len());
    let word = &s[..word_end];
    // Commands are written in capitals or as a bare verb; prose ("Click the button") needs its arguments to match.
    let v = verb(word)?;
    let rest = s[word_end..].trim_start_matches(':').trim();
    let mut reply = ModelReply {
        action: v.into(),
        ..Default::default()
    };
    let index = |r: &str| -> Option<(u32, String)> {
        let (a, more) = take_arg(r)?;
        Some((
            a.trim_matches(['[', ']', ',']).parse().ok()?,
            more.to_owned(),
        ))
    };
    match v {
        "click" | "hover" => {
            let (i, more) = index(rest)?;
            if !more.trim().is_empty() {
                return None;
            }
            reply.index = Some(i);
        }
        "check" => {
            let (i, more) = index(rest)?;
            if !more.trim().is_empty() {
                return None;
            }
            reply.index = Some(i);
            reply.checked = Some(!word.eq_ignore_ascii_case("uncheck"));
        }
        "type" | "select" => {
            let (i, more) = index(rest)?;
            let (text, submit) = if more.trim_start().starts_with(['"', '\'', '“', '`']) {
                let (text, after) = take_arg(&more)?;
                let after = after.trim();
                let submit = ["submit", "enter"]
                    .iter()
                    .any(|w| after.eq_ignore_ascii_case(w));
                if !after.is_empty() && !submit {
                    return None;
                }
                (text, submit)
            } else {
                // Unquoted: the rest of the line is the text.
                let text = more.trim();
                if text.is_empty() {
                    return None;
                }
                (text.to_owned(), false)
            };
            reply.index = Some(i);
            if v == "type" {
                reply.text = Some(text);
                reply.submit = Some(submit);
            } else {
                reply.value = Some(text);
            }
        }
        "scroll" => {
            let lower = word.to_lowercase();
            let (dir, more) = if let Some(d) = lower.strip_prefix("scroll_") {
                (d.to_owned(), rest.to_owned())
            } else {
                let (d, more) = take_arg(rest)?;
                (d.to_lowercase(), more.to_owned())
            };
            if !["up", "down", "left", "right"].contains(&dir.as_str()) {
                return None;
            }
            reply.direction = Some(dir);
            if let Some((i, _)) = index(&more) {
                reply.index = Some(i);
            }
        }
        "press_key" => {
            let (combo, more) = take_arg(rest)?;
            if !more.trim().is_empty() {
                return None;
            }
            let mut parts: Vec<&str> = combo.split('+').collect();
            let key = parts.pop()?.to_owned();
            reply.modifiers = parts.iter().map(|m| m.to_lowercase()).collect();
            reply.key = Some(key);
        }
        "navigate" => {
            let (url, more) = take_arg(rest)?;
            if !more.trim().is_empty() || !url.contains('.') && !url.contains("://") {
                return None;
            }
            reply.url = Some(url);
        }
        "back" | "forward" => {
            if !rest.trim_end_matches('.').is_empty() {
                return None;
            }
        }
        "wait" => {
            if !rest.is_empty() {
                let (ms, more) = take_arg(rest)?;
                let ms = ms.trim_end_matches("ms").parse().ok()?;
                if !more.trim().is_empty() {
                    return None;
                }
                reply.ms = Some(ms);
            }
        }
        "done" => {
            // `DONE` must be the command itself, in capitals or followed by a colon: "Done reading
            // the page, now…" is prose.
            let is_command =
                word.chars().all(|c| !c.is_lowercase()) || s[word_end..].starts_with(':');
            if !is_command {
                return None;
            }
            reply.answer = Some(rest.trim_matches(['"', '\'']).to_owned());
        }
        "ask_user" => {
            if rest.is_empty()
                || !(word.chars().all(|c| !c.is_lowercase()) || s[word_end..].starts_with(':'))
            {
                return None;
            }
            reply.question = Some(rest.to_owned());
        }
        _ => return None,
    }
    Some(reply)
}

/// "The task is complete: …" and the like, when nothing else was found.
fn done_language(text: &str) -> Option<ModelReply> {
    const PHRASES: &[&str] = &[
        "task is complete",
        "task is done",
        "task has been completed",
        "goal is complete",
        "goal has been achieved",
        "goal is achieved",
        "i have completed",
        "i've completed",
        "the task is finished",
    ];
    let lower = text.to_lowercase();
    if !PHRASES.iter().any(|p| lower.contains(p)) {
        return None;
    }
    let answer: String = text.trim().chars().take(500).collect();
    Some(ModelReply {
        action: "done".into(),
        answer: Some(answer),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> ModelReply {
        let p = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(p.source, Source::Json, "{text}");
        p.reply
    }

    fn line(text: &str) -> ModelReply {
        let p = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(p.source, Source::Line, "{text}");
        p.reply
    }

    #[test]
    fn json_amid_prose_and_fences() {
        let r = json("Sure! Here is my next step:\n```json\n{\"thought\": \"the {search} box\", \"action\": \"type\", \"index\": 3, \"text\": \"wool socks\", \"submit\": true}\n```\nLet me know.");
        assert_eq!(r.action, "type");
        assert_eq!(r.index, Some(3));
        assert_eq!(r.text.as_deref(), Some("wool socks"));
        assert_eq!(r.submit, Some(true));
        assert_eq!(
            r.thought.as_deref(),
            Some("the {search} box"),
            "braces in strings are text"
        );
    }

    #[test]
    fn json_variants_models_write() {
        assert_eq!(
            json(r#"{"action": {"click": {"index": 4}}}"#).index,
            Some(4)
        );
        assert_eq!(json(r#"{"click": {"element": "7"}}"#).index, Some(7));
        let r = json(r#"{"action": "Click", "element_index": "[12]"}"#);
        assert_eq!((r.action.as_str(), r.index), ("click", Some(12)));
        let r = json(r#"{"action": "scroll_down"}"#);
        assert_eq!(
            (r.action.as_str(), r.direction.as_deref()),
            ("scroll", Some("down"))
        );
        let r = json(r#"{"answer": "12.99 EUR"}"#);
        assert_eq!(
            (r.action.as_str(), r.answer.as_deref()),
            ("done", Some("12.99 EUR"))
        );
        let r = json(r#"{"action": "uncheck", "index": 2}"#);
        assert_eq!((r.action.as_str(), r.checked), ("check", Some(false)));
        let r = json(r#"{"action": "type", "index": 1, "text": 42}"#);
        assert_eq!(r.text.as_deref(), Some("42"));
        // The first object that is an action wins over earlier non-actions.
        let r = json(r#"{"note": 1} then {"action": "back"}"#);
        assert_eq!(r.action, "back");
    }

    #[test]
    fn json_problems_are_explained() {
        let e = parse(r#"{"action": "teleport", "index": 1}"#).unwrap_err();
        assert!(e.0.contains("\"teleport\" is not an action"), "{e}");
        let e = parse(r#"{"thought": "hmm"}"#).unwrap_err();
        assert!(e.0.contains("no \"action\""), "{e}");
        let e = parse(r#"{"action": "click", "index": -3}"#).unwrap_err();
        assert!(e.0.contains("wrong type"), "{e}");
        let e = parse("I am not sure what to do.").unwrap_err();
        assert!(e.0.contains("no action"), "{e}");
    }

    #[test]
    fn line_commands() {
        assert_eq!(line("CLICK 4").index, Some(4));
        assert_eq!(line("Action: click [12]").index, Some(12));
        let r = line("I will search now.\nTYPE 3 \"wool socks\" SUBMIT");
        assert_eq!(
            (r.index, r.text.as_deref(), r.submit),
            (Some(3), Some("wool socks"), Some(true))
        );
        let r = line("TYPE 3 wool socks");
        assert_eq!(r.text.as_deref(), Some("wool socks"));
        let r = line("SELECT 5 'Large'");
        assert_eq!(
            (r.action.as_str(), r.value.as_deref()),
            ("select", Some("Large"))
        );
        let r = line("PRESS Control+Enter");
        assert_eq!(
            (r.key.as_deref(), r.modifiers.clone()),
            (Some("Enter"), vec!["control".to_owned()])
        );
        let r = line("SCROLL DOWN");
        assert_eq!(r.direction.as_deref(), Some("down"));
        assert_eq!(
            line("NAVIGATE https://shop.example/cart").url.as_deref(),
            Some("https://shop.example/cart")
        );
        assert_eq!(line("BACK").action, "back");
        assert_eq!(line("WAIT 500ms").ms, Some(500));
        let r = line("DONE: The cheapest is 12.99 EUR");
        assert_eq!(r.answer.as_deref(), Some("The cheapest is 12.99 EUR"));
        assert_eq!(line("UNCHECK 9").checked, Some(false));
        assert_eq!(
            line("ASK: Which size?").question.as_deref(),
            Some("Which size?")
        );
    }

    #[test]
    fn prose_is_not_a_command() {
        for text in [
            "Click the blue button to continue.",
            "Back to the list, I see three items.",
            "Done reading the page, now the price.",
            "Type your name in the box",
        ] {
            assert!(
                parse(text).is_err(),
                "{text:?} was read as {:?}",
                parse(text)
            );
        }
    }

    #[test]
    fn done_language_last() {
        let p = parse("The task is complete. The price is 12.99 EUR.").unwrap();
        assert_eq!(p.source, Source::DoneLanguage);
        assert_eq!(p.reply.action, "done");
        assert!(p.reply.answer.unwrap().contains("12.99 EUR"));
    }
}
