//! Exports: a Markdown playbook a person reads (and another itinero imports as a hint), the
//! JSON form that imports back exactly, and a Playwright script that replays the skill with no
//! itinero at all, for a CI job or a bug report.
//!
//! The Playwright script finds each element by what it is rather than where it was: its role
//! and accessible name first (`getByRole`), then its id, name attribute, label or text,
//! whichever locator matches exactly one element. It reads `BASE_URL` (another deployment of
//! the site) and `CHROMIUM` from the environment, and a step whose element is gone fails the
//! script naming that step.

use std::fmt::Write as _;

use itinero_shared::action::{Action, Fingerprint, ScrollDirection};
use itinero_shared::skills::{Postcondition, Skill, SkillStep};

use super::params::{instantiate, ParamError};
use super::words;

/// A readable playbook: title, site, goal, parameters with their examples, and the steps in
/// words with what each should lead to. The `Site:` line is what an import keys on.
pub fn to_markdown(skill: &Skill) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", one_line(&skill.name));
    if !skill.description.trim().is_empty() && skill.description.trim() != skill.goal.trim() {
        let _ = writeln!(md, "{}\n", skill.description.trim());
    }
    let _ = writeln!(md, "Site: {}", skill.origin);
    let _ = writeln!(md, "Start at: {}", skill.start_url);
    let _ = writeln!(md, "Goal: {}\n", one_line(&skill.goal));
    md.push_str("## Parameters\n\n");
    if skill.params.is_empty() {
        md.push_str("None: the skill always does the same.\n\n");
    } else {
        for p in &skill.params {
            let _ = writeln!(md, "- `{{{}}}`, e.g. {:?}", p.name, p.example);
        }
        md.push('\n');
    }
    md.push_str("## Steps\n\n");
    let mut page = "";
    for (i, step) in skill.steps.iter().enumerate() {
        let said = if step.note.trim().is_empty() {
            words::action(&step.action)
        } else {
            one_line(&step.note)
        };
        let mut line = format!("{}. ", i + 1);
        if step.url != page {
            let _ = write!(line, "On `{}`: ", step.url);
            page = &step.url;
        }
        line.push_str(&capitalised(&said));
        md.push_str(&line);
        md.push('\n');
        for expect in &step.expect {
            match expect {
                Postcondition::Url { pattern } => {
                    let _ = writeln!(md, "   - Then the page is `{pattern}`.");
                    page = pattern;
                }
                Postcondition::Value { value } => {
                    let _ = writeln!(md, "   - Then the field holds {value:?}.");
                }
                Postcondition::Appeared { fingerprint } => {
                    let _ = writeln!(md, "   - Then {} is shown.", words::element(fingerprint));
                }
            }
        }
    }
    md.push_str(
        "\n_Page addresses are patterns: `*` stands for an id or number, and a query lists its \
         keys only._\n",
    );
    md
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The skill as pretty JSON; `import::from_json` reads it back to the same skill.
pub fn to_json(skill: &Skill) -> String {
    // A Skill is plain data (strings, numbers, vectors): serialising it cannot fail.
    let mut text = serde_json::to_string_pretty(skill).unwrap_or_default();
    text.push('\n');
    text
}

/// A JS string literal. JSON's escaping is valid JS, and `</script>`-style surprises do not
/// matter outside HTML.
fn js(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// A CSS attribute selector `[attr="value"]`, for a locator.
fn css_attr(attr: &str, value: &str) -> String {
    let mut quoted = String::with_capacity(value.len() + 2);
    for c in value.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\a "),
            c => quoted.push(c),
        }
    }
    format!("[{attr}=\"{quoted}\"]")
}

/// The ARIA roles Playwright's `getByRole` takes; a page's own `role="…"` outside this list
/// falls back to the other locators.
const ROLES: &[&str] = &[
    "alert",
    "alertdialog",
    "application",
    "article",
    "banner",
    "blockquote",
    "button",
    "caption",
    "cell",
    "checkbox",
    "code",
    "columnheader",
    "combobox",
    "complementary",
    "contentinfo",
    "definition",
    "deletion",
    "dialog",
    "directory",
    "document",
    "emphasis",
    "feed",
    "figure",
    "form",
    "generic",
    "grid",
    "gridcell",
    "group",
    "heading",
    "img",
    "insertion",
    "link",
    "list",
    "listbox",
    "listitem",
    "log",
    "main",
    "marquee",
    "math",
    "menu",
    "menubar",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "meter",
    "navigation",
    "none",
    "note",
    "option",
    "paragraph",
    "presentation",
    "progressbar",
    "radio",
    "radiogroup",
    "region",
    "row",
    "rowgroup",
    "rowheader",
    "scrollbar",
    "search",
    "searchbox",
    "separator",
    "slider",
    "spinbutton",
    "status",
    "strong",
    "subscript",
    "superscript",
    "switch",
    "tab",
    "table",
    "tablist",
    "tabpanel",
    "term",
    "textbox",
    "time",
    "timer",
    "toolbar",
    "tooltip",
    "tree",
    "treegrid",
    "treeitem",
];

/// Locators for a target, best first: role and accessible name, then the test id, the id, the
/// name attribute, the label, the text. The script takes the first that finds exactly one
/// element.
fn locators(fp: &Fingerprint) -> Vec<String> {
    let mut out = Vec::new();
    let nonempty = |o: &Option<String>| {
        o.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    if let (Some(role), Some(name)) = (fp.role.as_deref(), nonempty(&fp.name)) {
        if ROLES.contains(&role) {
            out.push(format!(
                "page.getByRole({}, {{ name: {}, exact: true }})",
                js(role),
                js(&name)
            ));
        }
    }
    if let Some(test_id) = nonempty(&fp.test_id) {
        out.push(format!("page.getByTestId({})", js(&test_id)));
    }
    if let Some(id) = nonempty(&fp.id) {
        out.push(format!("page.locator({})", js(&css_attr("id", &id))));
    }
    if let Some(name) = nonempty(&fp.name_attr) {
        let tag = if fp.tag.chars().all(|c| c.is_ascii_alphanumeric()) {
            fp.tag.as_str()
        } else {
            ""
        };
        out.push(format!(
            "page.locator({})",
            js(&format!("{tag}{}", css_attr("name", &name)))
        ));
    }
    if let Some(label) = nonempty(&fp.aria_label) {
        out.push(format!(
            "page.getByLabel({}, {{ exact: true }})",
            js(&label)
        ));
    }
    if let Some(text) = nonempty(&fp.text).or_else(|| nonempty(&fp.name)) {
        out.push(format!("page.getByText({}, {{ exact: true }})", js(&text)));
    }
    out
}

/// The JS that finds a step's target into `el`.
fn find(fp: &Fingerprint) -> String {
    let candidates: Vec<String> = locators(fp)
        .into_iter()
        .map(|l| format!("() => {l}"))
        .collect();
    format!(
        "const el = await find(page, [{}], {});\n",
        candidates.join(", "),
        js(&words::element(fp))
    )
}

/// The body of one step: find the target, act, then check what should hold.
fn step_body(step: &SkillStep) -> String {
    let mut body = String::new();
    if let Some(target) = step.action.target() {
        body.push_str(&find(&target.fingerprint));
    }
    match &step.action {
        Action::Click { .. } => body.push_str("await el.click();\n"),
        Action::Type {
            text,
            submit,
            clear,
            ..
        } => {
            if *clear {
                let _ = writeln!(body, "await el.fill({});", js(text));
            } else {
                let _ = writeln!(body, "await el.pressSequentially({});", js(text));
            }
            if *submit {
                body.push_str("await el.press('Enter');\n");
            }
        }
        Action::Select { value, .. } => {
            let _ = writeln!(body, "await el.selectOption({});", js(value));
        }
        Action::Check { checked, .. } => {
            body.push_str(if *checked {
                "await el.check();\n"
            } else {
                "await el.uncheck();\n"
            });
        }
        Action::Hover { .. } => body.push_str("await el.hover();\n"),
        Action::Scroll { target, pages, .. } => match step.action.scroll_direction() {
            // Only a scroll with a target has no direction: it brings the target into view.
            None => body.push_str("await el.scrollIntoViewIfNeeded();\n"),
            Some(direction) => {
                if target.is_some() {
                    body.push_str("await el.hover();\n");
                }
                let (dx, dy) = match direction {
                    ScrollDirection::Up => (0.0, -pages),
                    ScrollDirection::Down => (0.0, *pages),
                    ScrollDirection::Left => (-pages, 0.0),
                    ScrollDirection::Right => (*pages, 0.0),
                };
                let _ = writeln!(
                    body,
                    "{{ const v = page.viewportSize() || {{ width: 1280, height: 720 }};\n  \
                     await page.mouse.wheel({dx} * v.width, {dy} * v.height); }}"
                );
            }
        },
        Action::PressKey {
            key,
            modifiers,
            target,
        } => {
            let combo = js(&words::key_combo(key, modifiers));
            if target.is_some() {
                let _ = writeln!(body, "await el.press({combo});");
            } else {
                let _ = writeln!(body, "await page.keyboard.press({combo});");
            }
        }
        Action::Navigate { url } => {
            let _ = writeln!(body, "await page.goto(at({}));", js(url));
        }
        Action::Back => body.push_str("await page.goBack();\n"),
        Action::Forward => body.push_str("await page.goForward();\n"),
        Action::Wait { ms } => {
            let _ = writeln!(body, "await page.waitForTimeout({ms});");
        }
        Action::Done { answer, success } => {
            if *success {
                let _ = writeln!(body, "console.log('done: ' + {});", js(answer));
            } else {
                let _ = writeln!(
                    body,
                    "throw new Error('the skill gives up here: ' + {});",
                    js(answer)
                );
            }
        }
        Action::AskUser { question } => {
            let _ = writeln!(
                body,
                "throw new Error('this step asks the user, which a script cannot: ' + {});",
                js(question)
            );
        }
    }
    for expect in &step.expect {
        match expect {
            Postcondition::Url { pattern } => {
                let _ = writeln!(
                    body,
                    "await page.waitForURL(urlRegExp({}), {{ timeout: TIMEOUT }});",
                    js(pattern)
                );
            }
            Postcondition::Value { value } => {
                // Only a field has a value to read; other targets (contenteditable) are not checked.
                let field = step
                    .action
                    .target()
                    .is_some_and(|t| matches!(t.fingerprint.tag.as_str(), "input" | "textarea"));
                if field && matches!(step.action, Action::Type { .. }) {
                    let _ = writeln!(body, "await expectValue(el, {});", js(value));
                }
            }
            Postcondition::Appeared { fingerprint } => {
                let candidates: Vec<String> = locators(fingerprint)
                    .into_iter()
                    .map(|l| format!("() => {l}"))
                    .collect();
                let _ = writeln!(
                    body,
                    "await find(page, [{}], {});",
                    candidates.join(", "),
                    js(&words::element(fingerprint))
                );
            }
        }
    }
    body
}

/// The script's fixed part: launching Chromium, finding targets, matching URL patterns.
const PRELUDE: &str = r#"
const TIMEOUT = Number(process.env.STEP_TIMEOUT_MS || 15000);
// Replays on another deployment of the site: BASE_URL=http://localhost:8080 node skill.js
const BASE_URL = (process.env.BASE_URL || SKILL_ORIGIN).replace(/\/+$/, '');

/** A URL of the skill's site, moved to BASE_URL. */
function at(url) {
  return url.startsWith(SKILL_ORIGIN) ? BASE_URL + url.slice(SKILL_ORIGIN.length) : url;
}

function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** itinero's URL pattern as a RegExp: `*` is one path segment, `?a&b` lists the query's keys. */
function urlRegExp(pattern) {
  const moved = at(pattern);
  const q = moved.indexOf('?');
  const path = q < 0 ? moved : moved.slice(0, q);
  const keys = q < 0 ? [] : moved.slice(q + 1).split('&').filter(Boolean);
  const body = path.split('*').map(escapeRe).join('[^/?#]+');
  const query = keys.length
    ? '\\?' + keys.map((k) => `(?=(?:[^#]*&)?${escapeRe(encodeURIComponent(k))}(?:[=&#]|$))`).join('') + '[^#]*'
    : '';
  return new RegExp('^' + body + query + '(?:#.*)?$');
}

/** The first locator that finds exactly one element, tried until TIMEOUT. */
async function find(page, candidates, what) {
  const deadline = Date.now() + TIMEOUT;
  for (;;) {
    for (const make of candidates) {
      const locator = make();
      // A page that is still replacing itself can fail a count: try again.
      const count = await locator.count().catch(() => 0);
      if (count === 1) return locator;
    }
    if (Date.now() > deadline) {
      throw new Error(`cannot find ${what} on ${page.url()} (no locator matched exactly one element)`);
    }
    await page.waitForTimeout(100);
  }
}

async function expectValue(el, want) {
  const got = await el.inputValue();
  if (got !== want) throw new Error(`the field holds ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
}

async function step(n, what, body) {
  try {
    await body();
  } catch (e) {
    e.message = `step ${n} (${what}): ${e.message}`;
    throw e;
  }
}

function executable() {
  const path = process.env.CHROMIUM || process.env.ITINERO_CHROMIUM;
  if (path) return path;
  if (require('fs').existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  throw new Error('set CHROMIUM to the path of a Chromium or Chrome binary');
}
"#;

/// A standalone Node script (`playwright-core`, Chromium from `CHROMIUM` or
/// `ITINERO_CHROMIUM`) that replays the skill with `values` for its parameters and exits
/// non-zero, saying which step failed, when one does.
pub fn to_playwright(skill: &Skill, values: &[(String, String)]) -> Result<String, ParamError> {
    let steps = instantiate(skill, values)?;
    let mut js_text = String::new();
    let _ = writeln!(js_text, "#!/usr/bin/env node");
    let _ = writeln!(
        js_text,
        "// {} — exported from itinero. Replays the skill in Chromium with Playwright.",
        one_line(&skill.name)
    );
    let _ = writeln!(js_text, "// Goal: {}", one_line(&skill.goal));
    if !values.is_empty() {
        let list: Vec<String> = values.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        let _ = writeln!(js_text, "// Parameters: {}", one_line(&list.join(", ")));
    }
    let _ = writeln!(
        js_text,
        "// Run: npm install playwright-core && CHROMIUM=/usr/bin/chromium node <this file>\n"
    );
    js_text.push_str("'use strict';\nconst { chromium } = require('playwright-core');\n\n");
    let _ = writeln!(js_text, "const SKILL_NAME = {};", js(&skill.name));
    let _ = writeln!(
        js_text,
        "const SKILL_ORIGIN = {};",
        js(skill.origin.trim_end_matches('/'))
    );
    let _ = writeln!(js_text, "const START_URL = {};", js(&skill.start_url));
    js_text.push_str(PRELUDE);
    js_text.push_str("\nasync function replay(page) {\n  await page.goto(at(START_URL));\n");
    for (i, step) in steps.iter().enumerate() {
        // Said again from the filled action: a note quoted the placeholder, not the value.
        let what = words::action(&step.action);
        let _ = writeln!(
            js_text,
            "  await step({}, {}, async () => {{",
            i + 1,
            js(&what)
        );
        for line in step_body(step).lines() {
            let _ = writeln!(js_text, "    {line}");
        }
        js_text.push_str("  });\n");
    }
    js_text.push_str(
        r#"}

(async () => {
  const browser = await chromium.launch({
    executablePath: executable(),
    headless: !process.env.HEADED,
    // Chromium refuses to start as root with its sandbox on (containers, CI).
    args: process.getuid && process.getuid() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(TIMEOUT);
    await replay(page);
    console.log(`skill ${JSON.stringify(SKILL_NAME)} replayed`);
  } finally {
    await browser.close();
  }
})().catch((e) => {
  console.error(`skill ${JSON.stringify(SKILL_NAME)} failed: ${e && e.message ? e.message : e}`);
  process.exitCode = 1;
});
"#,
    );
    Ok(js_text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::import::{from_json, from_markdown};
    use crate::skills::test_support::shop_skill;

    fn kv(k: &str, v: &str) -> Vec<(String, String)> {
        vec![(k.to_owned(), v.to_owned())]
    }

    #[test]
    fn the_playbook_reads_as_steps_with_what_each_leads_to() {
        let md = to_markdown(&shop_skill());
        let expected = "\
# Add to cart

Search for wool socks and add them to the cart

Site: https://shop.example
Start at: https://shop.example/shop/
Goal: Search for {query} and add them to the cart

## Parameters

- `{query}`, e.g. \"wool socks\"

## Steps

1. On `https://shop.example/shop/`: Type \"{query}\" into searchbox \"Search products\" and submit
   - Then the page is `https://shop.example/shop/search?q`.
2. Click link \"Wool socks\"
   - Then the page is `https://shop.example/shop/product/*`.
3. Select \"M\" in combobox \"Size\"
   - Then the field holds \"M\".
4. Click button \"Add to cart\"
   - Then the page is `https://shop.example/shop/cart`.
5. Finish, answering \"Added {query} to the cart\"
";
        assert!(md.starts_with(expected), "{md}");
        // It imports back as a hint for its site.
        let playbook = from_markdown(&md).unwrap();
        assert_eq!(playbook.origin, "https://shop.example");
        assert_eq!(playbook.title, "Add to cart");
        assert_eq!(playbook.text, md.trim());
    }

    #[test]
    fn json_round_trips_exactly() {
        let mut skill = shop_skill();
        // Values JSON and JS must escape, and a vault reference.
        skill.steps[0].note = "quote \" backslash \\ newline \n tab \t emoji 🧦".into();
        skill.description = "{{secret:shop.example/user}} </script>".into();
        let text = to_json(&skill);
        assert!(text.contains("\n  \"name\": \"Add to cart\""), "{text}");
        assert_eq!(from_json(&text).unwrap(), skill);
        assert_eq!(to_json(&from_json(&text).unwrap()), text);
    }

    #[test]
    fn the_playwright_script_replays_each_step_with_role_locators() {
        let script = to_playwright(
            &shop_skill(),
            &kv("query", "hiking \"socks\" \\ 'n' </script>"),
        )
        .unwrap();
        assert!(script.starts_with("#!/usr/bin/env node\n"), "{script}");
        // Strict mode only holds when its directive is the first statement.
        let first = script
            .lines()
            .skip(1)
            .find(|l| !l.trim().is_empty() && !l.starts_with("//"));
        assert_eq!(first, Some("'use strict';"), "{script}");
        assert!(script.contains("const { chromium } = require('playwright-core');"));
        assert!(script.contains("process.env.CHROMIUM || process.env.ITINERO_CHROMIUM"));
        assert!(script.contains("process.env.BASE_URL || SKILL_ORIGIN"));
        assert!(script.contains("const SKILL_ORIGIN = \"https://shop.example\";"));
        assert!(script.contains("const START_URL = \"https://shop.example/shop/\";"));
        for expected in [
            // Step 1: fill and submit, the value escaped as a JS string.
            r#"const el = await find(page, [() => page.getByRole("searchbox", { name: "Search products", exact: true }), () => page.locator("input[name=\"q\"]"), () => page.getByText("Search products", { exact: true })], "searchbox \"Search products\"");"#,
            r#"await el.fill("hiking \"socks\" \\ 'n' </script>");"#,
            "await el.press('Enter');",
            r#"await page.waitForURL(urlRegExp("https://shop.example/shop/search?q"), { timeout: TIMEOUT });"#,
            // Step 2.
            r#"page.getByRole("link", { name: "Wool socks", exact: true })"#,
            "await el.click();",
            r#"urlRegExp("https://shop.example/shop/product/*")"#,
            // Step 3: by role, id or name attribute.
            r#"() => page.locator("[id=\"size\"]"), () => page.locator("select[name=\"size\"]")"#,
            r#"await el.selectOption("M");"#,
            // Step 4: the test id is the first fallback.
            r#"() => page.getByRole("button", { name: "Add to cart", exact: true }), () => page.getByTestId("add")"#,
            // Step 5: the answer, filled.
            r#"console.log('done: ' + "Added hiking \"socks\" \\ 'n' </script> to the cart");"#,
            "process.exitCode = 1;",
        ] {
            assert!(
                script.contains(expected),
                "missing {expected}\nin\n{script}"
            );
        }
        let steps: Vec<&str> = script
            .lines()
            .filter(|l| l.trim_start().starts_with("await step("))
            .collect();
        assert_eq!(steps.len(), 5, "{script}");
        assert!(
            steps[0].contains(r#"await step(1, "type \"hiking \\\"socks\\\""#),
            "{}",
            steps[0]
        );
    }

    #[test]
    fn the_playwright_script_needs_every_parameter() {
        let err = to_playwright(&shop_skill(), &[]).unwrap_err();
        assert_eq!(
            err,
            ParamError::Missing {
                name: "query".into()
            }
        );
        assert!(matches!(
            to_playwright(
                &shop_skill(),
                &[("query".into(), "x".into()), ("size".into(), "M".into())]
            ),
            Err(ParamError::Unknown { .. })
        ));
    }

    #[test]
    fn other_actions_become_playwright_calls() {
        let mut skill = shop_skill();
        let fp = |role: &str, name: &str| Fingerprint {
            tag: "input".into(),
            role: Some(role.into()),
            name: Some(name.into()),
            ..Fingerprint::default()
        };
        let target = |f| itinero_shared::action::Target {
            index: 0,
            fingerprint: f,
        };
        let step = |action| SkillStep {
            action,
            url: "https://shop.example/x".into(),
            expect: vec![],
            note: String::new(),
        };
        skill.steps = vec![
            step(Action::Check {
                target: target(fp("checkbox", "Gift wrap")),
                checked: false,
            }),
            step(Action::Hover {
                target: target(fp("custom-role", "Menu")),
            }),
            step(Action::PressKey {
                key: "a".into(),
                modifiers: vec![itinero_shared::action::Modifier::Control],
                target: None,
            }),
            step(Action::Navigate {
                url: "https://shop.example/shop/cart".into(),
            }),
            step(Action::Scroll {
                target: None,
                direction: Some(ScrollDirection::Down),
                pages: 0.5,
            }),
            step(Action::Back),
        ];
        let script = to_playwright(&skill, &kv("query", "x")).unwrap();
        for expected in [
            "await el.uncheck();",
            // An unknown role is not given to getByRole, which would throw.
            r#"const el = await find(page, [() => page.getByText("Menu", { exact: true })], "custom-role \"Menu\"");"#,
            "await el.hover();",
            r#"await page.keyboard.press("Control+a");"#,
            r#"await page.goto(at("https://shop.example/shop/cart"));"#,
            "await page.mouse.wheel(0 * v.width, 0.5 * v.height);",
            "await page.goBack();",
            r#"await step(1, "uncheck checkbox \"Gift wrap\"", async () => {"#,
        ] {
            assert!(
                script.contains(expected),
                "missing {expected}\nin\n{script}"
            );
        }
    }
}
