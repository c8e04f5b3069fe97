//! A run written out for a person: Markdown, a self-contained HTML page with the pictures
//! inline, or JSON with them in base64. What decided each step and how long it took are in
//! every form; the words are the side panel's (`itinero_shared::words`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use base64::Engine as _;
use chrono::{Local, TimeZone};
use itinero_shared::records::{RunDetail, StepPicture, StepRecord, StepsBy};
use itinero_shared::words;
use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde::Serialize;

/// A run's pictures by step: the JPEG where one was kept.
pub type Pictures = BTreeMap<u32, Vec<u8>>;

/// Where a Markdown report finds its pictures: files beside it (their names by step), sent
/// along with it (an MCP tool's images), or nowhere (printed to the terminal).
pub enum MarkdownPictures<'a> {
    Beside(&'a dyn Fn(u32) -> String),
    /// The steps whose pictures go along.
    Attached(&'a [u32]),
    Nowhere,
}

/// Unix milliseconds in the user's time zone, `2026-11-27 18:25:10`.
pub fn local_time(ms: i64) -> String {
    Local
        .timestamp_millis_opt(ms)
        .single()
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| format!("{ms} ms after 1970"))
}

/// How long the run took, once it ended.
fn took(detail: &RunDetail) -> Option<String> {
    let end = detail.run.finished_at?;
    Some(words::duration(
        u64::try_from(end - detail.run.started_at).unwrap_or(0),
    ))
}

/// `grounding 3 · model 1`: who decided the run's steps, most first.
pub fn deciders(steps: &[StepRecord]) -> String {
    let mut by = StepsBy::default();
    for step in steps {
        by.count(&step.strategy, 1);
    }
    let mut parts = [
        ("the action cache", by.cache),
        ("a skill", by.skill),
        ("grounding", by.grounding),
        ("the model", by.model),
        ("sign-in, you or the guards", by.other),
    ];
    parts.sort_by_key(|part| std::cmp::Reverse(part.1));
    parts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(who, n)| format!("{who} {n}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn model(detail: &RunDetail) -> String {
    [detail.run.backend.as_str(), detail.run.model.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn action(step: &StepRecord) -> &str {
    if step.action_summary.is_empty() {
        "(no action)"
    } else {
        &step.action_summary
    }
}

fn picture_of(detail: &RunDetail, n: u32) -> Option<&StepPicture> {
    detail.pictures.iter().find(|p| p.n == n)
}

/// The run's facts, one per line, for every form.
fn facts(detail: &RunDetail) -> Vec<(&'static str, String)> {
    let run = &detail.run;
    let mut facts = vec![
        ("Status", words::status_label(run.status).to_owned()),
        ("Started", local_time(run.started_at)),
    ];
    if let Some(took) = took(detail) {
        facts.push(("Took", took));
    }
    facts.push(("Steps", words::steps(run.steps)));
    let deciders = deciders(&detail.steps);
    if !deciders.is_empty() {
        facts.push(("Decided by", deciders));
    }
    let model = model(detail);
    if !model.is_empty() {
        facts.push(("Model", model));
    }
    facts.push(("Started at", run.start_url.clone()));
    facts
}

/// The report in Markdown.
pub fn markdown(detail: &RunDetail, pictures: MarkdownPictures<'_>) -> String {
    let run = &detail.run;
    let mut out = format!("# Run {}: {}\n\n", run.id, run.goal);
    for (name, value) in facts(detail) {
        let _ = writeln!(out, "- **{name}:** {value}");
    }
    if let Some(answer) = run.answer.as_deref().filter(|a| !a.is_empty()) {
        let _ = write!(out, "\n**Answer:** {answer}\n");
    }
    out.push_str("\n## Steps\n");
    if detail.steps.is_empty() {
        out.push_str("\nNo step was recorded.\n");
    }
    for step in &detail.steps {
        let _ = write!(
            out,
            "\n### {}. {} ({})\n\n",
            step.n,
            action(step),
            words::strategy(&step.strategy)
        );
        if !step.outcome_text.is_empty() {
            let _ = writeln!(out, "{}\n", step.outcome_text);
        }
        if !step.thought.is_empty() {
            let _ = writeln!(out, "> {}\n", step.thought.replace('\n', "\n> "));
        }
        let timings = words::timings(step);
        if !timings.is_empty() {
            let _ = writeln!(out, "*{timings}* · on {}\n", step.url);
        } else {
            let _ = writeln!(out, "on {}\n", step.url);
        }
        match (picture_of(detail, step.n), &pictures) {
            (Some(p), MarkdownPictures::Beside(name)) if p.is_kept() => {
                let _ = writeln!(out, "![The page after step {}]({})", step.n, name(step.n));
            }
            (Some(p), MarkdownPictures::Attached(steps)) if p.is_kept() => {
                if steps.contains(&step.n) {
                    let _ = writeln!(out, "*The page after this step is attached.*");
                } else {
                    let _ = writeln!(out, "*A picture of the page after this step is kept.*");
                }
            }
            (Some(p), MarkdownPictures::Nowhere) if p.is_kept() => {
                let _ = writeln!(
                    out,
                    "*A picture of the page after this step is kept ({} KB); export to a file to see it.*",
                    p.bytes.div_ceil(1024)
                );
            }
            (Some(p), _) => {
                let why = p.withheld.as_deref().unwrap_or("none was taken");
                let _ = writeln!(out, "*No picture: {why}.*");
            }
            (None, _) => {}
        }
    }
    out
}

const STYLE: &str = "
body { font: 15px/1.45 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.4rem; margin-bottom: .3rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; color: #444; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
.answer { background: #eef6ee; border-left: 4px solid #1a7f37; padding: .5rem .8rem; }
ol.steps { list-style: none; padding: 0; }
ol.steps > li { border-top: 1px solid #d8d8dc; padding: 1rem 0; }
.head { font-weight: 600; }
.badge { display: inline-block; font-size: .8rem; font-weight: 500; padding: 0 .45rem; border-radius: 1rem; background: #e8ecf8; color: #2457d6; margin-left: .4rem; }
.status { background: #eee; color: #333; }
.thought { font-style: italic; color: #6e6e73; }
.meta { color: #6e6e73; font-size: .85rem; overflow-wrap: anywhere; }
img { display: block; max-width: 100%; margin-top: .6rem; border: 1px solid #d8d8dc; border-radius: 4px; }
";

/// The report as one HTML page, its pictures inline.
pub fn html_page(detail: &RunDetail, pictures: &Pictures) -> String {
    let run = &detail.run;
    let page: Markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "itinero run " (run.id.0) ": " (run.goal) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (run.goal) }
                dl {
                    @for (name, value) in facts(detail) {
                        dt { (name) } dd { (value) }
                    }
                }
                @if let Some(answer) = run.answer.as_deref().filter(|a| !a.is_empty()) {
                    p.answer { strong { "Answer: " } (answer) }
                }
                h2 { "Steps" }
                @if detail.steps.is_empty() {
                    p { "No step was recorded." }
                }
                ol.steps {
                    @for step in &detail.steps {
                        li id={ "step-" (step.n) } {
                            div.head {
                                (step.n) ". " (action(step))
                                span.badge title="What decided this step" { (words::strategy(&step.strategy)) }
                            }
                            @if !step.outcome_text.is_empty() { p { (step.outcome_text) } }
                            @if !step.thought.is_empty() { p.thought { (step.thought) } }
                            p.meta {
                                (words::timings(step))
                                @if !words::timings(step).is_empty() { " · " }
                                "on " (step.url)
                            }
                            @match (picture_of(detail, step.n), pictures.get(&step.n)) {
                                (_, Some(jpeg)) => {
                                    img alt={ "The page after step " (step.n) }
                                        src={ "data:image/jpeg;base64," (base64::engine::general_purpose::STANDARD.encode(jpeg)) };
                                }
                                (Some(p), None) => {
                                    p.meta { "No picture: " (p.withheld.as_deref().unwrap_or("none was taken")) "." }
                                }
                                (None, None) => {}
                            }
                        }
                    }
                }
                p.meta { "Written by itinero-host." }
            }
        }
    };
    page.into_string()
}

/// A step's picture in the JSON report.
#[derive(Serialize)]
struct JsonPicture<'a> {
    n: u32,
    bytes: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    withheld: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jpeg_base64: Option<String>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    run: &'a itinero_shared::records::RunSummary,
    steps: &'a [StepRecord],
    pictures: Vec<JsonPicture<'a>>,
}

/// The report as JSON: the run and its steps as the store keeps them, the pictures in base64.
pub fn json(detail: &RunDetail, pictures: &Pictures) -> serde_json::Result<String> {
    let report = JsonReport {
        run: &detail.run,
        steps: &detail.steps,
        pictures: detail
            .pictures
            .iter()
            .map(|p| JsonPicture {
                n: p.n,
                bytes: p.bytes,
                withheld: p.withheld.as_deref(),
                jpeg_base64: pictures
                    .get(&p.n)
                    .map(|jpeg| base64::engine::general_purpose::STANDARD.encode(jpeg)),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::records::{RunId, RunStatus, RunSummary};

    fn detail() -> RunDetail {
        RunDetail {
            run: RunSummary {
                id: RunId(7),
                goal: "Buy <b>socks</b>".into(),
                start_url: "http://shop.test/".into(),
                origin: Some("http://shop.test".into()),
                tab_id: Some(1),
                backend: "builtin".into(),
                model: "smollm2".into(),
                started_at: 1_700_000_000_000,
                finished_at: Some(1_700_000_004_500),
                status: RunStatus::Succeeded,
                answer: Some("12.99 EUR".into()),
                steps: 2,
            },
            steps: vec![
                StepRecord {
                    n: 1,
                    url: "http://shop.test/".into(),
                    action_summary: "click [4] \"Socks\"".into(),
                    outcome_text: "navigated".into(),
                    strategy: "grounded".into(),
                    decide_ms: Some(12),
                    ..Default::default()
                },
                StepRecord {
                    n: 2,
                    url: "http://shop.test/login".into(),
                    strategy: "sign-in".into(),
                    outcome_text: "signed in".into(),
                    ..Default::default()
                },
            ],
            pictures: vec![
                StepPicture {
                    n: 1,
                    bytes: 4,
                    withheld: None,
                },
                StepPicture {
                    n: 2,
                    bytes: 0,
                    withheld: Some("a saved secret was typed in this step".into()),
                },
            ],
        }
    }

    fn pictures() -> Pictures {
        BTreeMap::from([(1, b"\xff\xd8\xff\xe0".to_vec())])
    }

    #[test]
    fn html_holds_every_step_its_decider_and_the_picture_inline_escaped() {
        let page = html_page(&detail(), &pictures());
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(
            page.contains("Buy &lt;b&gt;socks&lt;/b&gt;"),
            "escaped goal"
        );
        assert!(!page.contains("<b>socks"));
        assert!(page.contains("click [4] &quot;Socks&quot;"));
        assert!(page.contains("grounded"));
        assert!(page.contains("data:image/jpeg;base64,/9j/4A=="));
        assert!(page.contains("No picture: a saved secret was typed in this step."));
        assert!(page.contains("12.99 EUR"));
        assert!(page.contains("4.5 s"));
    }

    #[test]
    fn markdown_links_pictures_beside_it_or_says_where_they_are() {
        let name = |n: u32| format!("run-7-pictures/step-{n}.jpg");
        let md = markdown(&detail(), MarkdownPictures::Beside(&name));
        assert!(md.starts_with("# Run 7: Buy <b>socks</b>\n"));
        assert!(md.contains("![The page after step 1](run-7-pictures/step-1.jpg)"));
        assert!(md.contains("*No picture: a saved secret was typed in this step.*"));
        assert!(md.contains("- **Decided by:** grounding 1 · sign-in, you or the guards 1"));
        let md = markdown(&detail(), MarkdownPictures::Nowhere);
        assert!(md.contains("export to a file to see it"));
    }

    #[test]
    fn json_carries_the_pictures_in_base64_and_the_reasons_for_the_missing() {
        let text = json(&detail(), &pictures()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["run"]["id"], 7);
        assert_eq!(v["steps"].as_array().unwrap().len(), 2);
        assert_eq!(v["pictures"][0]["jpeg_base64"], "/9j/4A==");
        assert!(v["pictures"][1].get("jpeg_base64").is_none());
        assert_eq!(
            v["pictures"][1]["withheld"],
            "a saved secret was typed in this step"
        );
    }
}
