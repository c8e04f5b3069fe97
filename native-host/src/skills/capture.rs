//! Capture: a successful run's steps made into a skill.
//!
//! Only what worked is kept: a failed attempt, a step the guards refused, a wait and a question
//! to the user are how the run got there, not what the task needs. Values typed or chosen that
//! came from the goal become parameters, so the skill runs again with other values; anything
//! else typed stays as it was (a vault reference `{{secret:…}}` included: it is never a
//! parameter and never a secret's value). A parameter's value is templated wherever the run
//! shows it again: in a target's name (the result link for the search), a URL segment and the
//! answer, so a replay with another value looks for the other product.
//!
//! Each step keeps its target's fingerprint (never its index, which means nothing on a later
//! visit), the URL pattern it acts on and what it should lead to (a [`Postcondition`]), which
//! replay checks before it takes the next step.

use itinero_shared::action::{Action, Target};
use itinero_shared::messages::Outcome;
use itinero_shared::records::StepRecord;
use itinero_shared::skills::{Param, Postcondition, Skill, SkillStep, SKILL_FORMAT};
use regex::{Regex, RegexBuilder};
use thiserror::Error;

use super::params::{pieces, Piece};
use super::words;
use crate::store::origin_of;
use crate::url_pattern;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum CaptureError {
    #[error(
        "the run has no step that can be replayed ({steps} steps recorded, none of them an action \
         that worked); only a run that did something on a page can become a skill"
    )]
    NoUsableStep { steps: usize },

    #[error("the run started on {0:?}, which is not a web page; a skill needs a site to work on")]
    NoOrigin(String),
}

/// How many words of the goal a default name takes.
const NAME_WORDS: usize = 6;

/// The skill a run's steps make. `goal` and `start_url` are the run's; the name defaults to
/// the goal's first words and the description to the goal (the caller usually renames it).
pub fn capture(goal: &str, start_url: &str, steps: &[StepRecord]) -> Result<Skill, CaptureError> {
    let kept: Vec<Kept> = steps.iter().filter_map(usable).collect();
    if !kept
        .iter()
        .any(|k| !matches!(k.action, Action::Done { .. }))
    {
        return Err(CaptureError::NoUsableStep { steps: steps.len() });
    }
    let origin = origin_of(start_url)
        .or_else(|| kept.iter().find_map(|k| origin_of(&k.url)))
        .ok_or_else(|| CaptureError::NoOrigin(start_url.to_owned()))?;

    let mut params = Parameters::new(goal);
    let mut out = Vec::with_capacity(kept.len());
    for (i, step) in kept.iter().enumerate() {
        let url = url_pattern::pattern(&step.url);
        let next_url = kept.get(i + 1).map(|k| url_pattern::pattern(&k.url));
        let action = params.templated(&step.action);
        let action = params.templated_target(action);
        let mut expect = Vec::new();
        if let Some(moved_to) = moved_to(step, &url, next_url.as_deref()) {
            expect.push(Postcondition::Url { pattern: moved_to });
        } else if let Action::Type { text, .. } | Action::Select { value: text, .. } = &action {
            // A value is checked only where it was set: after a submit the field is gone.
            expect.push(Postcondition::Value {
                value: text.clone(),
            });
        }
        out.push(SkillStep {
            note: words::action(&action),
            action,
            url,
            expect,
        });
    }
    // A page named after a value (`/product/wool-socks`) is another page for another value.
    for step in &mut out {
        step.url = generalise_url(&step.url, &params.list);
        for e in &mut step.expect {
            if let Postcondition::Url { pattern } = e {
                *pattern = generalise_url(pattern, &params.list);
            }
        }
    }
    // The answer reports what the goal asked for: its values are the parameters' too.
    for step in &mut out {
        if let Action::Done { answer, .. } = &mut step.action {
            *answer = params.replace_values(answer);
            step.note = words::action(&step.action);
        }
    }
    Ok(Skill {
        format: SKILL_FORMAT,
        name: default_name(goal),
        description: goal.trim().to_owned(),
        origin,
        goal: params.template.clone(),
        start_url: start_url.trim().to_owned(),
        params: params.list,
        steps: out,
    })
}

/// A recorded step worth replaying.
struct Kept {
    action: Action,
    url: String,
    outcome: Option<Outcome>,
}

/// The step if it belongs in a skill: an action that worked, or the successful `done`.
fn usable(step: &StepRecord) -> Option<Kept> {
    if step.strategy == "guard" {
        return None;
    }
    let action: Action = serde_json::from_value(step.action.clone()?).ok()?;
    let outcome: Option<Outcome> = step
        .outcome
        .clone()
        .and_then(|o| serde_json::from_value(o).ok());
    let keep = match &action {
        Action::Wait { .. } | Action::AskUser { .. } => false,
        // A `done` is recorded without an outcome: it ends the run.
        Action::Done { success, .. } => *success,
        _ => outcome.as_ref().is_some_and(Outcome::took_effect),
    };
    keep.then(|| Kept {
        action: without_index(action),
        url: step.url.clone(),
        outcome,
    })
}

/// The action with its target's index cleared: on a later visit only the fingerprint means
/// anything.
fn without_index(mut action: Action) -> Action {
    let clear = |t: &mut Target| t.index = 0;
    match &mut action {
        Action::Click { target }
        | Action::Type { target, .. }
        | Action::Select { target, .. }
        | Action::Check { target, .. }
        | Action::Hover { target } => clear(target),
        Action::Scroll { target, .. } | Action::PressKey { target, .. } => {
            if let Some(t) = target {
                clear(t);
            }
        }
        _ => {}
    }
    action
}

/// The page pattern a step led to, when the page moved: the next kept step was decided on
/// another page, or the step itself reported a navigation or a new tab.
fn moved_to(step: &Kept, here: &str, next: Option<&str>) -> Option<String> {
    if let Some(next) = next.filter(|n| *n != here) {
        return Some(next.to_owned());
    }
    match &step.outcome {
        Some(Outcome::Navigated { url }) | Some(Outcome::OpenedTab { url, .. }) => {
            Some(next.map_or_else(|| url_pattern::pattern(url), str::to_owned))
        }
        _ => None,
    }
}

/// The run's goal's first words, as a title.
fn default_name(goal: &str) -> String {
    let words: Vec<&str> = goal.split_whitespace().take(NAME_WORDS).collect();
    let name = words
        .join(" ")
        .trim_end_matches(|c: char| c.is_ascii_punctuation())
        .to_owned();
    if name.is_empty() {
        "Untitled skill".to_owned()
    } else {
        name
    }
}

/// The parameters found so far and the goal with them in braces.
struct Parameters {
    template: String,
    list: Vec<Param>,
}

impl Parameters {
    fn new(goal: &str) -> Self {
        Self {
            template: goal.trim().to_owned(),
            list: Vec::new(),
        }
    }

    /// The action with a typed or chosen value that came from the goal as a placeholder.
    fn templated(&mut self, action: &Action) -> Action {
        let mut action = action.clone();
        if let Action::Type { target, text, .. }
        | Action::Select {
            target,
            value: text,
            ..
        } = &mut action
        {
            if let Some(name) = self.param_for(text, target) {
                *text = text.replacen(text.trim(), &format!("{{{name}}}"), 1);
            }
        }
        action
    }

    /// The action with its target's name as a placeholder when the name is a parameter's value:
    /// the link "Wool socks" found by searching for "wool socks" is the result for `{query}`,
    /// and replaying with "cotton socks" must look for "Cotton socks".
    fn templated_target(&self, mut action: Action) -> Action {
        let Some(target) = action.target_mut() else {
            return action;
        };
        let fp = &mut target.fingerprint;
        for field in [&mut fp.name, &mut fp.text] {
            let Some(value) = field.as_deref().map(str::trim) else {
                continue;
            };
            if let Some(p) = self
                .list
                .iter()
                .find(|p| !value.is_empty() && p.example.trim().eq_ignore_ascii_case(value))
            {
                *field = Some(format!("{{{}}}", p.name));
            }
        }
        action
    }

    /// The parameter `text` stands for: one already found with this value, or a new one when
    /// the goal (outside its placeholders) says the value as a word or words of its own.
    fn param_for(&mut self, text: &str, target: &Target) -> Option<String> {
        let value = text.trim();
        if value.is_empty() || value.contains("{{") || !pieces(value).iter().all(is_text) {
            return None;
        }
        if let Some(p) = self
            .list
            .iter()
            .find(|p| p.example.to_lowercase() == value.to_lowercase())
        {
            return Some(p.name.clone());
        }
        let re = word_regex(value)?;
        if !literal_parts(&self.template).any(|t| re.is_match(t)) {
            return None;
        }
        let name = self.fresh_name(target);
        self.template = replace_in_literals(&self.template, &re, &format!("{{{name}}}"));
        self.list.push(Param {
            name: name.clone(),
            example: value.to_owned(),
        });
        Some(name)
    }

    /// A readable name from the field (its accessible name first, as a person reads the form),
    /// unique among the skill's parameters.
    fn fresh_name(&self, target: &Target) -> String {
        let fp = &target.fingerprint;
        let base = [&fp.name, &fp.aria_label, &fp.name_attr, &fp.id]
            .into_iter()
            .flatten()
            .map(|s| slug(s))
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| "value".to_owned());
        let taken = |n: &str| self.list.iter().any(|p| p.name == n);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|i| format!("{base}_{i}"))
            .find(|n| !taken(n))
            .unwrap_or(base)
    }

    /// `text` with every parameter's value (as a word of its own) replaced by its placeholder.
    fn replace_values(&self, text: &str) -> String {
        let mut out = text.to_owned();
        let mut by_length: Vec<&Param> = self.list.iter().collect();
        // Longer values first, so "wool socks" wins over "socks".
        by_length.sort_by_key(|p| std::cmp::Reverse(p.example.len()));
        for p in by_length {
            if let Some(re) = word_regex(&p.example) {
                out = replace_in_literals(&out, &re, &format!("{{{}}}", p.name));
            }
        }
        out
    }
}

fn is_text(piece: &Piece<'_>) -> bool {
    matches!(piece, Piece::Text(_))
}

/// A parameter name from a field's label: `Search products` → `search_products`; empty when
/// the label has no letters or digits.
fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.trim().chars().flat_map(char::to_lowercase) {
        if out.len() >= 32 {
            break;
        }
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    match out.chars().next() {
        Some(c) if c.is_ascii_digit() => format!("field_{out}"),
        _ => out.to_owned(),
    }
}

/// Matches `value` ignoring case, only as a word or words of its own ("a" must not match
/// inside "add"). Group 1 is the value.
fn word_regex(value: &str) -> Option<Regex> {
    RegexBuilder::new(&format!(r"(?:^|\W)({})(?:$|\W)", regex::escape(value)))
        .case_insensitive(true)
        .build()
        .ok()
}

fn literal_parts(text: &str) -> impl Iterator<Item = &str> {
    pieces(text).into_iter().filter_map(|p| match p {
        Piece::Text(t) => Some(t),
        Piece::Param(_) | Piece::Verbatim(_) => None,
    })
}

/// `text` with the value `re` finds replaced in its literal parts; placeholders and vault
/// references are left as they are.
fn replace_in_literals(text: &str, re: &Regex, placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Param(name) => {
                out.push('{');
                out.push_str(name);
                out.push('}');
            }
            Piece::Verbatim(t) => out.push_str(t),
            Piece::Text(t) => out.push_str(&replace_words(t, re, placeholder)),
        }
    }
    out
}

fn replace_words(text: &str, re: &Regex, placeholder: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    // The boundary after one match can be the boundary before the next ("socks, socks"), so
    // each search starts where the value ended.
    while let Some(value) = re.captures_at(text, from).and_then(|c| c.get(1)) {
        out.push_str(&text[from..value.start()]);
        out.push_str(placeholder);
        from = value.end();
    }
    out.push_str(&text[from..]);
    out
}

/// `wool socks` → `wool-socks`: how a value usually appears in a URL.
fn url_slug(value: &str) -> String {
    value
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The URL pattern with path segments that hold a parameter's value as `*`.
fn generalise_url(pattern: &str, params: &[Param]) -> String {
    let slugs: Vec<String> = params
        .iter()
        .map(|p| url_slug(&p.example))
        .filter(|s| !s.is_empty())
        .collect();
    if slugs.is_empty() {
        return pattern.to_owned();
    }
    let (path, query) = match pattern.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (pattern, None),
    };
    // Keep `scheme://host` whole: only the segments after it are looked at.
    let start = path.find("://").map_or(0, |i| i + 3);
    let (origin, rest) =
        path.split_at(start + path[start..].find('/').unwrap_or(path.len() - start));
    let rest: Vec<String> = rest
        .split('/')
        .map(|seg| {
            let lower = seg.to_lowercase();
            if slugs.iter().any(|s| lower.contains(s.as_str())) {
                "*".to_owned()
            } else {
                seg.to_owned()
            }
        })
        .collect();
    let mut out = format!("{origin}{}", rest.join("/"));
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::action::Fingerprint;
    use serde_json::{json, Value};

    const SHOP: &str = "https://shop.example";

    fn target(index: u32, fp: Value) -> Value {
        json!({"index": index, "fingerprint": fp})
    }

    fn search_box() -> Value {
        json!({"tag": "input", "role": "searchbox", "name": "Search products",
               "name_attr": "q", "path": "html>body>header>form>input[0]"})
    }

    fn step(
        n: u32,
        url: &str,
        strategy: &str,
        action: Value,
        outcome: Option<Value>,
    ) -> StepRecord {
        StepRecord {
            n,
            url: url.to_owned(),
            dom_hash: Some(format!("h{n}")),
            action: Some(action),
            action_summary: format!("step {n}"),
            outcome,
            strategy: strategy.to_owned(),
            ..StepRecord::default()
        }
    }

    /// A search-then-add-to-cart run as the agent records it: a click covered by an overlay,
    /// a wait while recovering, a refused action, a question to the user, then success.
    fn shopping_run() -> Vec<StepRecord> {
        let home = format!("{SHOP}/shop/");
        let results = format!("{SHOP}/shop/search?q=wool+socks");
        let product = format!("{SHOP}/shop/product/1042");
        let product_link = json!({"tag": "a", "role": "link", "name": "Wool socks",
                                  "path": "html>body>main>ul>li[0]>h2>a"});
        vec![
            step(
                1,
                &home,
                "llm",
                json!({"kind": "type", "target": target(3, search_box()),
                        "text": "Wool Socks", "submit": true}),
                Some(json!({"kind": "navigated", "url": results})),
            ),
            step(
                2,
                &results,
                "llm",
                json!({"kind": "click", "target": target(12, product_link.clone())}),
                Some(json!({"kind": "target_occluded", "by": "div#newsletter"})),
            ),
            step(
                3,
                &results,
                "recovery",
                json!({"kind": "wait", "ms": 500}),
                Some(json!({"kind": "done"})),
            ),
            step(
                4,
                &results,
                "recovery",
                json!({"kind": "click", "target": target(12, product_link)}),
                Some(json!({"kind": "navigated", "url": product})),
            ),
            step(
                5,
                &product,
                "guard",
                json!({"kind": "click", "target": target(9, json!({"tag": "button",
                        "role": "button", "name": "Buy now"}))}),
                None,
            ),
            step(
                6,
                &product,
                "llm",
                json!({"kind": "ask_user", "question": "Which size?"}),
                None,
            ),
            step(
                7,
                &product,
                "llm",
                json!({"kind": "select", "target": target(5, json!({"tag": "select",
                        "role": "combobox", "name": "Size", "name_attr": "size", "id": "size"})),
                        "value": "M"}),
                Some(json!({"kind": "done"})),
            ),
            step(
                8,
                &product,
                "llm",
                json!({"kind": "click", "target": target(6, json!({"tag": "button",
                        "role": "button", "name": "Add to cart",
                        "path": "html>body>main>article>form>button[0]"}))}),
                Some(json!({"kind": "navigated", "url": format!("{SHOP}/shop/cart")})),
            ),
            step(
                9,
                &format!("{SHOP}/shop/cart"),
                "llm",
                json!({"kind": "done", "answer": "Added wool socks (size M) to the cart: wool socks, 12.90 EUR"}),
                None,
            ),
        ]
    }

    #[test]
    fn a_shopping_run_becomes_a_skill_of_the_steps_that_worked() {
        let goal = "Search for wool socks and add them to the cart";
        let skill = capture(goal, &format!("{SHOP}/shop/"), &shopping_run()).unwrap();
        assert_eq!(skill.format, SKILL_FORMAT);
        assert_eq!(skill.origin, SHOP);
        assert_eq!(skill.start_url, format!("{SHOP}/shop/"));
        assert_eq!(skill.name, "Search for wool socks and add");
        assert_eq!(skill.description, goal);
        assert_eq!(
            skill.goal,
            "Search for {search_products} and add them to the cart"
        );
        assert_eq!(
            skill.params,
            [Param {
                name: "search_products".into(),
                example: "Wool Socks".into()
            }]
        );
        let notes: Vec<&str> = skill.steps.iter().map(|s| s.note.as_str()).collect();
        assert_eq!(
            notes,
            [
                "type \"{search_products}\" into searchbox \"Search products\" and submit",
                // The result found by the value is the parameter's too.
                "click link \"{search_products}\"",
                "select \"M\" in combobox \"Size\"",
                "click button \"Add to cart\"",
                "finish, answering \"Added {search_products} (size M) to the cart: {search_products}, 12.90 EUR\"",
            ]
        );
        let urls: Vec<&str> = skill.steps.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://shop.example/shop/",
                "https://shop.example/shop/search?q",
                "https://shop.example/shop/product/*",
                "https://shop.example/shop/product/*",
                "https://shop.example/shop/cart",
            ]
        );
        let url = |p: &str| Postcondition::Url { pattern: p.into() };
        assert_eq!(
            skill.steps[0].expect,
            [url("https://shop.example/shop/search?q")]
        );
        assert_eq!(
            skill.steps[1].expect,
            [url("https://shop.example/shop/product/*")]
        );
        // Chosen on a page that stayed: the value is what to check.
        assert_eq!(
            skill.steps[2].expect,
            [Postcondition::Value { value: "M".into() }]
        );
        assert_eq!(
            skill.steps[3].expect,
            [url("https://shop.example/shop/cart")]
        );
        assert!(skill.steps[4].expect.is_empty());
        // Indices are gone; fingerprints stay.
        for s in &skill.steps {
            if let Some(t) = s.action.target() {
                assert_eq!(t.index, 0);
                assert!(!t.fingerprint.tag.is_empty());
            }
        }
        match &skill.steps[0].action {
            Action::Type {
                target,
                text,
                submit,
                ..
            } => {
                assert_eq!(text, "{search_products}");
                assert!(submit);
                assert_eq!(target.fingerprint.name_attr.as_deref(), Some("q"));
                assert_eq!(target.fingerprint.path, "html>body>header>form>input[0]");
            }
            other => panic!("{other:?}"),
        }
        // The skill is proposed for a goal of the same shape.
        assert_eq!(
            crate::skills::match_goal(
                &skill.goal,
                "search for hiking socks and add them to the cart"
            ),
            Some(vec![(
                "search_products".to_owned(),
                "hiking socks".to_owned()
            )])
        );
    }

    #[test]
    fn a_value_not_in_the_goal_stays_and_a_vault_reference_is_never_a_parameter() {
        let login = format!("{SHOP}/login");
        let field = |name: &str| json!({"tag": "input", "role": "textbox", "name": name});
        let steps = vec![
            step(
                1,
                &login,
                "llm",
                json!({"kind": "type", "target": target(1, field("Username")), "text": "alice"}),
                Some(json!({"kind": "done"})),
            ),
            step(
                2,
                &login,
                "llm",
                json!({"kind": "type", "target": target(2, field("Password")),
                        "text": "{{secret:shop.example/password}}", "submit": true}),
                Some(json!({"kind": "navigated", "url": format!("{SHOP}/account")})),
            ),
        ];
        let skill = capture("Sign in to the shop as alice", &login, &steps).unwrap();
        // "alice" is in the goal: a parameter named after the field.
        assert_eq!(skill.goal, "Sign in to the shop as {username}");
        assert_eq!(skill.params[0].name, "username");
        match &skill.steps[1].action {
            Action::Type { text, .. } => assert_eq!(text, "{{secret:shop.example/password}}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(skill.params.len(), 1);
        // No `done` was recorded: the skill still has its steps, and no done step.
        assert_eq!(skill.steps.len(), 2);
    }

    #[test]
    fn parameter_names_are_unique_and_a_repeated_value_reuses_its_parameter() {
        let page = format!("{SHOP}/compare");
        let unnamed = json!({"tag": "input", "name_attr": "item"});
        let steps = vec![
            step(
                1,
                &page,
                "llm",
                json!({"kind": "type", "target": target(1, unnamed.clone()), "text": "tea"}),
                Some(json!({"kind": "done"})),
            ),
            step(
                2,
                &page,
                "llm",
                json!({"kind": "type", "target": target(2, unnamed.clone()), "text": "coffee"}),
                Some(json!({"kind": "done"})),
            ),
            step(
                3,
                &page,
                "llm",
                json!({"kind": "type", "target": target(3, json!({"tag": "input"})), "text": "TEA"}),
                Some(json!({"kind": "done"})),
            ),
            // "a" is in the goal only inside words: not a parameter.
            step(
                4,
                &page,
                "llm",
                json!({"kind": "type", "target": target(4, json!({"tag": "input"})), "text": "a"}),
                Some(json!({"kind": "done"})),
            ),
        ];
        let skill = capture("Compare tea with coffee", &page, &steps).unwrap();
        assert_eq!(skill.goal, "Compare {item} with {item_2}");
        let names: Vec<(&str, &str)> = skill
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.example.as_str()))
            .collect();
        assert_eq!(names, [("item", "tea"), ("item_2", "coffee")]);
        let texts: Vec<String> = skill
            .steps
            .iter()
            .filter_map(|s| match &s.action {
                Action::Type { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(texts, ["{item}", "{item_2}", "{item}", "a"]);
    }

    #[test]
    fn a_run_with_nothing_that_worked_is_a_clear_error() {
        let page = format!("{SHOP}/");
        let steps = vec![
            step(
                1,
                &page,
                "llm",
                json!({"kind": "click", "target": target(1, json!({"tag": "button"}))}),
                Some(json!({"kind": "failed", "reason": "no such element"})),
            ),
            step(
                2,
                &page,
                "llm",
                json!({"kind": "wait", "ms": 100}),
                Some(json!({"kind": "done"})),
            ),
            step(
                3,
                &page,
                "llm",
                json!({"kind": "done", "answer": "gave up", "success": true}),
                None,
            ),
        ];
        let err = capture("Do something", &page, &steps).unwrap_err();
        assert_eq!(err, CaptureError::NoUsableStep { steps: 3 });
        assert!(err.to_string().contains("3 steps recorded"), "{err}");
        assert_eq!(
            capture("x", "about:blank", &[]).unwrap_err(),
            CaptureError::NoUsableStep { steps: 0 }
        );
        let ok = step(
            1,
            "about:blank",
            "llm",
            json!({"kind": "scroll", "direction": "down"}),
            Some(json!({"kind": "done"})),
        );
        assert_eq!(
            capture("x", "about:blank", &[ok]).unwrap_err(),
            CaptureError::NoOrigin("about:blank".into())
        );
    }

    #[test]
    fn slugs_are_readable_parameter_names() {
        assert_eq!(slug("Search products"), "search_products");
        assert_eq!(slug("  E-mail address: "), "e_mail_address");
        assert_eq!(slug("2nd line"), "field_2nd_line");
        assert_eq!(slug("—"), "");
        assert!(slug(&"word ".repeat(20)).len() <= 33);
        let fp = Fingerprint {
            tag: "input".into(),
            name: Some("—".into()),
            name_attr: Some("q".into()),
            ..Fingerprint::default()
        };
        let params = Parameters::new("g");
        assert_eq!(
            params.fresh_name(&Target {
                index: 0,
                fingerprint: fp
            }),
            "q"
        );
    }
}
