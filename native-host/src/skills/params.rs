//! Parameters: the `{name}` placeholders a skill's goal, typed texts and expected values hold.
//!
//! One reading of a text serves every job (filling, matching a goal, renaming, checking an
//! import), so they agree on what a placeholder is: `{` letters, digits or `_` `}`. Anything in
//! double braces (`{{secret:bank}}`, a vault reference) is literal text here and is never filled,
//! matched or renamed: secrets are the vault's business, not a parameter's.

use itinero_shared::action::Action;
use itinero_shared::skills::{Param, Postcondition, Skill, SkillStep};
use regex::Regex;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ParamError {
    #[error("no value for parameter {name:?}; give it with --param {name}=VALUE")]
    Missing { name: String },

    #[error("the skill has no parameter {name:?} (it has: {known})")]
    Unknown { name: String, known: String },

    #[error("{name:?} is not a parameter name: use lowercase letters, digits and _ (e.g. query)")]
    BadName { name: String },

    #[error("the skill already has a parameter {name:?}")]
    Taken { name: String },

    #[error("parameter {name:?} is empty; give it a value")]
    Empty { name: String },

    #[error("the value of parameter {name:?} holds a vault reference ({{{{secret:…}}}}); secrets cannot be passed as parameters")]
    SecretInValue { name: String },
}

/// A piece of a templated text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    Param(&'a str),
    /// `{{…}}`, braces included: a vault reference, never touched.
    Verbatim(&'a str),
}

/// Whether `name` can be a parameter's name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Splits `text` into literal text and placeholders. `{{…}}` stays text, and so does a brace
/// that does not close a valid name (`{ not a param }`).
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut literal_from = 0;
    let mut i = 0;
    let bytes = text.as_bytes();
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'{') {
            // A double-braced reference, to its end (or the text's, unclosed).
            let end = text[i..].find("}}").map_or(bytes.len(), |end| i + end + 2);
            if literal_from < i {
                out.push(Piece::Text(&text[literal_from..i]));
            }
            out.push(Piece::Verbatim(&text[i..end]));
            i = end;
            literal_from = i;
            continue;
        }
        let close = text[i + 1..].find('}').map(|end| i + 1 + end);
        match close {
            Some(end) if valid_name(&text[i + 1..end]) => {
                if literal_from < i {
                    out.push(Piece::Text(&text[literal_from..i]));
                }
                out.push(Piece::Param(&text[i + 1..end]));
                i = end + 1;
                literal_from = i;
            }
            _ => i += 1,
        }
    }
    if literal_from < text.len() {
        out.push(Piece::Text(&text[literal_from..]));
    }
    out
}

/// The placeholders `text` uses, in order, repeats included.
pub fn placeholders(text: &str) -> Vec<&str> {
    pieces(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Param(name) => Some(name),
            Piece::Text(_) | Piece::Verbatim(_) => None,
        })
        .collect()
}

/// Rewrites `text`'s placeholders with `f`, which returns the new text for one (a `{name}` to
/// rename it, a value to fill it).
fn rewrite<E>(text: &str, mut f: impl FnMut(&str) -> Result<String, E>) -> Result<String, E> {
    let mut out = String::with_capacity(text.len());
    for piece in pieces(text) {
        match piece {
            Piece::Text(t) | Piece::Verbatim(t) => out.push_str(t),
            Piece::Param(name) => out.push_str(&f(name)?),
        }
    }
    Ok(out)
}

fn value_of<'v>(values: &'v [(String, String)], name: &str) -> Option<&'v str> {
    values
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `text` with each `{name}` replaced by its value; a placeholder without a value is an error
/// naming it. Vault references are left as they are.
pub fn fill(text: &str, values: &[(String, String)]) -> Result<String, ParamError> {
    rewrite(text, |name| {
        value_of(values, name)
            .map(str::to_owned)
            .ok_or_else(|| ParamError::Missing {
                name: name.to_owned(),
            })
    })
}

/// The parameter values a typed goal gives a skill whose goal is `template`, or `None` when the
/// goal is not an instance of it. Literal parts match ignoring case and runs of whitespace;
/// each placeholder takes a non-empty value, and one used twice must take the same value twice.
pub fn match_goal(template: &str, goal: &str) -> Option<Vec<(String, String)>> {
    let parts = pieces(template.trim());
    let mut pattern = String::from(r"(?is)^\s*");
    let mut names = Vec::new();
    for piece in &parts {
        match piece {
            Piece::Text(t) | Piece::Verbatim(t) => {
                let words: Vec<String> = t.split_whitespace().map(regex::escape).collect();
                // Spacing at a literal's ends keeps its meaning: "for {q}" needs a space.
                if words.is_empty() {
                    pattern.push_str(r"\s+");
                    continue;
                }
                if t.starts_with(char::is_whitespace) {
                    pattern.push_str(r"\s+");
                }
                pattern.push_str(&words.join(r"\s+"));
                if t.ends_with(char::is_whitespace) {
                    pattern.push_str(r"\s+");
                }
            }
            Piece::Param(name) => {
                pattern.push_str(r"(.+?)");
                names.push(*name);
            }
        }
    }
    pattern.push_str(r"\s*$");
    let re = Regex::new(&pattern).ok()?;
    let caps = re.captures(goal)?;
    let mut values: Vec<(String, String)> = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let value = caps.get(i + 1)?.as_str().trim();
        if value.is_empty() {
            return None;
        }
        match value_of(&values, name) {
            Some(seen) if seen.to_lowercase() != value.to_lowercase() => return None,
            Some(_) => {}
            None => values.push(((*name).to_owned(), value.to_owned())),
        }
    }
    Some(values)
}

/// Checks `values` against the skill's parameters: every value names a parameter, every
/// parameter has a non-empty value, and no value smuggles in a vault reference.
pub fn check_values(skill: &Skill, values: &[(String, String)]) -> Result<(), ParamError> {
    for (name, value) in values {
        if !skill.params.iter().any(|p| &p.name == name) {
            return Err(ParamError::Unknown {
                name: name.clone(),
                known: known(&skill.params),
            });
        }
        if value.trim().is_empty() {
            return Err(ParamError::Empty { name: name.clone() });
        }
        if value.contains("{{secret:") {
            return Err(ParamError::SecretInValue { name: name.clone() });
        }
    }
    if let Some(missing) = skill
        .params
        .iter()
        .find(|p| value_of(values, &p.name).is_none())
    {
        return Err(ParamError::Missing {
            name: missing.name.clone(),
        });
    }
    Ok(())
}

fn known(params: &[Param]) -> String {
    if params.is_empty() {
        "none".to_owned()
    } else {
        params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Applies `f` to every templated text of a step: the action's typed text, chosen value, URL
/// and answer, the expected values, and the note.
fn map_step<E>(
    step: &SkillStep,
    f: &mut impl FnMut(&str) -> Result<String, E>,
) -> Result<SkillStep, E> {
    let mut step = step.clone();
    match &mut step.action {
        Action::Type { text, .. } => *text = f(text)?,
        Action::Select { value, .. } => *value = f(value)?,
        Action::Navigate { url } => *url = f(url)?,
        Action::Done { answer, .. } => *answer = f(answer)?,
        Action::AskUser { question } => *question = f(question)?,
        _ => {}
    }
    if let Some(target) = step.action.target_mut() {
        let fp = &mut target.fingerprint;
        for field in [&mut fp.name, &mut fp.text].into_iter().flatten() {
            *field = f(field)?;
        }
    }
    for expect in &mut step.expect {
        if let Postcondition::Value { value } = expect {
            *value = f(value)?;
        }
    }
    step.note = f(&step.note)?;
    Ok(step)
}

/// The skill's steps with `values` filled in, ready to replay. Every parameter needs a value
/// and every value a parameter (a misspelt `--param` is an error, not ignored).
pub fn instantiate(
    skill: &Skill,
    values: &[(String, String)],
) -> Result<Vec<SkillStep>, ParamError> {
    check_values(skill, values)?;
    let mut filler = |text: &str| fill(text, values);
    skill
        .steps
        .iter()
        .map(|step| map_step(step, &mut filler))
        .collect()
}

/// Every templated text of the skill rewritten by `f` (goal and steps).
fn rewrite_skill(
    skill: &mut Skill,
    f: &mut impl FnMut(&str) -> Result<String, ParamError>,
) -> Result<(), ParamError> {
    let goal = f(&skill.goal)?;
    let steps = skill
        .steps
        .iter()
        .map(|step| map_step(step, f))
        .collect::<Result<Vec<_>, _>>()?;
    skill.goal = goal;
    skill.steps = steps;
    Ok(())
}

/// Renames parameter `old` to `new` everywhere it is used.
pub fn rename_param(skill: &mut Skill, old: &str, new: &str) -> Result<(), ParamError> {
    if !valid_name(new) {
        return Err(ParamError::BadName {
            name: new.to_owned(),
        });
    }
    if !skill.params.iter().any(|p| p.name == old) {
        return Err(ParamError::Unknown {
            name: old.to_owned(),
            known: known(&skill.params),
        });
    }
    if old == new {
        return Ok(());
    }
    if skill.params.iter().any(|p| p.name == new) {
        return Err(ParamError::Taken {
            name: new.to_owned(),
        });
    }
    rewrite_skill(skill, &mut |text| {
        rewrite(text, |name| {
            Ok(format!("{{{}}}", if name == old { new } else { name }))
        })
    })?;
    for p in &mut skill.params {
        if p.name == old {
            p.name = new.to_owned();
        }
    }
    Ok(())
}

/// Makes parameter `name` a fixed value again: its example goes back wherever it was used.
pub fn unparameterise(skill: &mut Skill, name: &str) -> Result<(), ParamError> {
    let Some(param) = skill.params.iter().find(|p| p.name == name).cloned() else {
        return Err(ParamError::Unknown {
            name: name.to_owned(),
            known: known(&skill.params),
        });
    };
    rewrite_skill(skill, &mut |text| {
        rewrite(text, |n| {
            Ok(if n == name {
                param.example.clone()
            } else {
                format!("{{{n}}}")
            })
        })
    })?;
    skill.params.retain(|p| p.name != name);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::action::{Fingerprint, Target};
    use itinero_shared::skills::SKILL_FORMAT;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn search_skill() -> Skill {
        let target = Target {
            index: 0,
            fingerprint: Fingerprint {
                tag: "input".into(),
                role: Some("searchbox".into()),
                name: Some("Search products".into()),
                name_attr: Some("q".into()),
                ..Fingerprint::default()
            },
        };
        Skill {
            format: SKILL_FORMAT,
            name: "Find a product".into(),
            description: "Search for wool socks in size {{secret:none}}".into(),
            origin: "https://shop.example".into(),
            goal: "Search for {query} and tell me the price of {query}".into(),
            start_url: "https://shop.example/".into(),
            params: vec![Param {
                name: "query".into(),
                example: "wool socks".into(),
            }],
            steps: vec![
                SkillStep {
                    action: Action::Type {
                        target,
                        text: "{query}".into(),
                        submit: false,
                        clear: true,
                    },
                    url: "https://shop.example/".into(),
                    expect: vec![Postcondition::Value {
                        value: "{query}".into(),
                    }],
                    note: "type \"{query}\" into searchbox \"Search products\"".into(),
                },
                SkillStep {
                    action: Action::Done {
                        answer: "{query} cost 12 EUR, login {{secret:shop}}".into(),
                        success: true,
                    },
                    url: "https://shop.example/search?q".into(),
                    expect: vec![],
                    note: String::new(),
                },
            ],
        }
    }

    #[test]
    fn pieces_tell_placeholders_from_text_and_vault_references() {
        assert_eq!(
            pieces("a {q} {{secret:bank}} {Not} {} {x_1}"),
            [
                Piece::Text("a "),
                Piece::Param("q"),
                Piece::Text(" "),
                Piece::Verbatim("{{secret:bank}}"),
                Piece::Text(" {Not} {} "),
                Piece::Param("x_1"),
            ]
        );
        assert_eq!(placeholders("{a}{b}{a}"), ["a", "b", "a"]);
        assert!(placeholders("{{secret:{q}}}").is_empty());
        assert_eq!(pieces(""), []);
        // An unclosed reference is text to the end.
        assert_eq!(
            pieces("x {{secret: {q}"),
            [Piece::Text("x "), Piece::Verbatim("{{secret: {q}")]
        );
    }

    #[test]
    fn fill_replaces_placeholders_and_names_a_missing_one() {
        let values = kv(&[("q", "wool socks"), ("size", "M")]);
        assert_eq!(
            fill("{q} in {size}, {{secret:shop}}", &values).unwrap(),
            "wool socks in M, {{secret:shop}}"
        );
        // A value is inserted as it is, never read again for placeholders.
        assert_eq!(fill("{q}", &kv(&[("q", "{size}")])).unwrap(), "{size}");
        let err = fill("{q} {colour}", &values).unwrap_err();
        assert_eq!(
            err,
            ParamError::Missing {
                name: "colour".into()
            }
        );
        assert!(err.to_string().contains("--param colour="), "{err}");
    }

    #[test]
    fn a_goal_matches_its_template_ignoring_case_and_spacing() {
        let t = "Search for {query} and add it to the cart";
        assert_eq!(
            match_goal(t, "  search FOR   Merino  Socks and add it to the CART "),
            Some(kv(&[("query", "Merino  Socks")]))
        );
        assert_eq!(match_goal(t, "Search for  and add it to the cart"), None);
        assert_eq!(match_goal(t, "Search for socks and buy it"), None);
        assert_eq!(
            match_goal(t, "Search forsocks and add it to the cart"),
            None
        );
        // Two parameters, the last one taking the rest.
        assert_eq!(
            match_goal("Send {amount} to {who}", "send 5 EUR to Bob Smith"),
            Some(kv(&[("amount", "5 EUR"), ("who", "Bob Smith")]))
        );
        // A parameter used twice takes one value.
        let twice = "Compare {item} with last year's {item}";
        assert_eq!(
            match_goal(twice, "compare tea with last year's Tea"),
            Some(kv(&[("item", "tea")]))
        );
        assert_eq!(
            match_goal(twice, "compare tea with last year's coffee"),
            None
        );
        // Regex characters in the template are literal.
        assert_eq!(
            match_goal("Price of {x} (in EUR)?", "price of socks (in eur)?"),
            Some(kv(&[("x", "socks")]))
        );
        assert_eq!(
            match_goal("Price of {x} (in EUR)?", "price of socks in eur"),
            None
        );
        // A template without parameters matches its own text only.
        assert_eq!(match_goal("Open the cart", "open  the cart"), Some(vec![]));
        assert_eq!(match_goal("Open the cart", "open the cart now"), None);
    }

    #[test]
    fn instantiate_fills_texts_expectations_and_notes_and_checks_values() {
        let skill = search_skill();
        let steps = instantiate(&skill, &kv(&[("query", "hiking socks")])).unwrap();
        match &steps[0].action {
            Action::Type { text, .. } => assert_eq!(text, "hiking socks"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            steps[0].expect,
            [Postcondition::Value {
                value: "hiking socks".into()
            }]
        );
        assert_eq!(
            steps[0].note,
            "type \"hiking socks\" into searchbox \"Search products\""
        );
        match &steps[1].action {
            Action::Done { answer, .. } => {
                assert_eq!(answer, "hiking socks cost 12 EUR, login {{secret:shop}}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            instantiate(&skill, &[]).unwrap_err(),
            ParamError::Missing {
                name: "query".into()
            }
        );
        let err = instantiate(&skill, &kv(&[("query", "x"), ("qeury", "y")])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the skill has no parameter \"qeury\" (it has: query)"
        );
        assert_eq!(
            instantiate(&skill, &kv(&[("query", " ")])).unwrap_err(),
            ParamError::Empty {
                name: "query".into()
            }
        );
        assert_eq!(
            instantiate(&skill, &kv(&[("query", "{{secret:bank}}")])).unwrap_err(),
            ParamError::SecretInValue {
                name: "query".into()
            }
        );
    }

    #[test]
    fn renaming_a_parameter_renames_every_use() {
        let mut skill = search_skill();
        rename_param(&mut skill, "query", "product").unwrap();
        assert_eq!(
            skill.goal,
            "Search for {product} and tell me the price of {product}"
        );
        assert_eq!(skill.params[0].name, "product");
        assert_eq!(skill.params[0].example, "wool socks");
        assert_eq!(
            skill.steps[0].expect,
            [Postcondition::Value {
                value: "{product}".into()
            }]
        );
        assert!(skill.steps[0].note.contains("{product}"));
        match &skill.steps[1].action {
            Action::Done { answer, .. } => {
                assert_eq!(answer, "{product} cost 12 EUR, login {{secret:shop}}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            rename_param(&mut skill, "query", "x"),
            Err(ParamError::Unknown { .. })
        ));
        assert!(matches!(
            rename_param(&mut skill, "product", "Bad Name"),
            Err(ParamError::BadName { .. })
        ));
        skill.params.push(Param {
            name: "size".into(),
            example: "M".into(),
        });
        assert_eq!(
            rename_param(&mut skill, "product", "size"),
            Err(ParamError::Taken {
                name: "size".into()
            })
        );
        rename_param(&mut skill, "product", "product").unwrap();
    }

    #[test]
    fn unparameterising_puts_the_example_back() {
        let mut skill = search_skill();
        unparameterise(&mut skill, "query").unwrap();
        assert!(skill.params.is_empty());
        assert_eq!(
            skill.goal,
            "Search for wool socks and tell me the price of wool socks"
        );
        match &skill.steps[0].action {
            Action::Type { text, .. } => assert_eq!(text, "wool socks"),
            other => panic!("{other:?}"),
        }
        // The skill now runs without values, and the vault reference is still a reference.
        let steps = instantiate(&skill, &[]).unwrap();
        match &steps[1].action {
            Action::Done { answer, .. } => assert!(answer.ends_with("{{secret:shop}}")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            unparameterise(&mut skill, "query"),
            Err(ParamError::Unknown { .. })
        ));
    }
}
