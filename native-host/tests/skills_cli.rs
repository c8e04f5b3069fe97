//! `itinero-host skills …` as a person runs it: the real binary on a store in a temporary data
//! directory (`ITINERO_DATA_DIR`), holding a run the agent recorded.

use std::path::Path;
use std::process::{Command, Output};

use itinero_host::store::{NewRun, Store, FILE_NAME};
use itinero_shared::records::{RunId, RunStatus, StepRecord};
use serde_json::{json, Value};

fn skills(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg("skills")
        .args(args)
        .env("ITINERO_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

fn ok(data: &Path, args: &[&str]) -> String {
    let out = skills(data, args);
    assert!(
        out.status.success(),
        "skills {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn fails(data: &Path, args: &[&str]) -> String {
    let out = skills(data, args);
    assert!(!out.status.success(), "skills {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

fn step(n: u32, url: &str, action: Value, outcome: Option<Value>) -> StepRecord {
    StepRecord {
        n,
        url: url.into(),
        action: Some(action),
        outcome,
        strategy: "llm".into(),
        ..StepRecord::default()
    }
}

/// A successful search-and-add run and a failed one, as the host records them.
fn record_runs(data: &Path) -> (RunId, RunId) {
    let store = Store::open(&data.join(FILE_NAME)).unwrap();
    let shop = "http://127.0.0.1:9/shop";
    let good = store
        .begin_run(&NewRun {
            goal: "Search for wool socks and add them to the cart".into(),
            start_url: format!("{shop}/"),
            ..NewRun::default()
        })
        .unwrap();
    let search = json!({"index": 2, "fingerprint": {"tag": "input", "role": "searchbox",
        "name": "Search products", "name_attr": "q", "path": "html>body>header>form>input[0]"}});
    let link =
        json!({"index": 14, "fingerprint": {"tag": "a", "role": "link", "name": "Wool socks"}});
    let add = json!({"index": 9, "fingerprint": {"tag": "button", "role": "button", "name": "Add to cart"}});
    let steps = [
        step(
            1,
            &format!("{shop}/"),
            json!({"kind": "type", "target": search, "text": "wool socks", "submit": true}),
            Some(json!({"kind": "navigated", "url": format!("{shop}/search?q=wool+socks")})),
        ),
        step(
            2,
            &format!("{shop}/search?q=wool+socks"),
            json!({"kind": "click", "target": link}),
            Some(json!({"kind": "target_detached"})),
        ),
        step(
            3,
            &format!("{shop}/search?q=wool+socks"),
            json!({"kind": "wait", "ms": 300}),
            Some(json!({"kind": "done"})),
        ),
        step(
            4,
            &format!("{shop}/search?q=wool+socks"),
            json!({"kind": "click", "target": link}),
            Some(json!({"kind": "navigated", "url": format!("{shop}/product/wool-socks")})),
        ),
        step(
            5,
            &format!("{shop}/product/wool-socks"),
            json!({"kind": "click", "target": add}),
            Some(json!({"kind": "navigated", "url": format!("{shop}/cart")})),
        ),
        step(
            6,
            &format!("{shop}/cart"),
            json!({"kind": "done", "answer": "wool socks are in the cart"}),
            None,
        ),
    ];
    for s in &steps {
        store.record_step(good, s).unwrap();
    }
    store
        .finish_run(
            good,
            RunStatus::Succeeded,
            Some("wool socks are in the cart"),
        )
        .unwrap();
    let bad = store
        .begin_run(&NewRun {
            goal: "Pay".into(),
            start_url: format!("{shop}/cart"),
            ..NewRun::default()
        })
        .unwrap();
    store.finish_run(bad, RunStatus::Failed, None).unwrap();
    (good, bad)
}

#[test]
fn a_run_is_captured_listed_shown_exported_deleted_and_imported_again() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let (good, bad) = record_runs(dir);

    assert!(ok(dir, &["list"]).starts_with("no skills yet"));
    let saved = ok(dir, &["capture", &good.to_string(), "--name", "Add socks"]);
    assert!(saved.contains("saved skill \"Add socks\""), "{saved}");
    assert!(saved.contains("4 steps"), "{saved}");
    assert!(
        saved.contains("{search_products} (e.g. \"wool socks\")"),
        "{saved}"
    );

    let list = ok(dir, &["list"]);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(lines[1].starts_with("Add socks"), "{list}");
    assert!(lines[1].contains("never"), "{list}");
    assert!(
        lines[1].ends_with("Search for {search_products} and add them to the cart"),
        "{list}"
    );
    assert!(ok(dir, &["list", "SOCKS"]).contains("Add socks"));
    assert!(ok(dir, &["list", "hats"]).starts_with("no skill matches"));
    let listed: Value = serde_json::from_str(&ok(dir, &["list", "--json"])).unwrap();
    assert_eq!(listed[0]["steps"], 4);

    let shown = ok(dir, &["show", "add SOCKS"]);
    assert!(
        shown.contains(&format!("captured from run {good}")),
        "{shown}"
    );
    assert!(shown.contains("Site: http://127.0.0.1:9"), "{shown}");
    // The result link found by the searched value is named by the parameter too.
    assert!(
        shown.contains("2. Click link \"{search_products}\""),
        "{shown}"
    );
    assert!(shown.contains("/shop/product/*"), "{shown}");

    // JSON out, delete, JSON in: the same skill.
    let json_file = dir.join("skill.json");
    ok(
        dir,
        &[
            "export",
            "Add socks",
            "--format",
            "json",
            "-o",
            json_file.to_str().unwrap(),
        ],
    );
    let exported = std::fs::read_to_string(&json_file).unwrap();
    assert_eq!(ok(dir, &["show", "Add socks", "--json"]), exported);
    assert!(fails(dir, &["import", json_file.to_str().unwrap()]).contains("already a skill named"));
    assert!(ok(dir, &["delete", "Add socks"]).contains("deleted skill \"Add socks\""));
    assert!(fails(dir, &["show", "Add socks"]).contains("there is no skill named \"Add socks\""));
    let imported = ok(dir, &["import", json_file.to_str().unwrap()]);
    assert!(
        imported.contains("imported skill \"Add socks\""),
        "{imported}"
    );
    assert_eq!(
        ok(dir, &["export", "Add socks", "--format", "json"]),
        exported
    );
    ok(
        dir,
        &[
            "import",
            json_file.to_str().unwrap(),
            "--name",
            "Add socks again",
        ],
    );
    assert_eq!(ok(dir, &["list"]).lines().count(), 3);

    // The Playwright script needs its parameter, by name.
    let err = fails(dir, &["export", "Add socks", "--format", "playwright"]);
    assert!(
        err.contains("no value for parameter \"search_products\""),
        "{err}"
    );
    assert!(err.contains("--param search_products="), "{err}");
    let err = fails(
        dir,
        &[
            "export",
            "Add socks",
            "--format",
            "playwright",
            "--param",
            "query=x",
        ],
    );
    assert!(err.contains("no parameter \"query\""), "{err}");
    let script = ok(
        dir,
        &[
            "export",
            "Add socks",
            "--format",
            "playwright",
            "--param",
            "search_products=hiking socks",
        ],
    );
    assert!(
        script.contains(r#"await el.fill("hiking socks");"#),
        "{script}"
    );
    assert!(fails(dir, &["export", "Add socks", "--param", "a=b"])
        .contains("--param is for --format playwright"));

    // Runs that cannot be skills, and files that are not.
    assert!(fails(dir, &["capture", &bad.to_string(), "--name", "Pay"]).contains("ended failed"));
    assert!(fails(dir, &["capture", "999", "--name", "X"]).contains("there is no run 999"));
    let missing = dir.join("missing.json");
    assert!(fails(dir, &["import", missing.to_str().unwrap()]).contains("cannot read"));
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{\"name\": \"x\"").unwrap();
    assert!(fails(dir, &["import", broken.to_str().unwrap()]).contains("not a skill's JSON"));
    assert!(fails(dir, &["delete", "nothing"]).contains("no skill named"));
}

#[test]
fn a_markdown_playbook_is_kept_as_a_hint_for_its_site() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let file = dir.join("coffee.md");
    std::fs::write(
        &file,
        "# Ordering coffee\n\nSite: https://cafe.example\n\n1. Choose the size before the milk.\n",
    )
    .unwrap();
    let out = ok(dir, &["import", file.to_str().unwrap()]);
    assert!(
        out.contains("kept playbook \"Ordering coffee\" as a hint for https://cafe.example"),
        "{out}"
    );
    let store = Store::open(&dir.join(FILE_NAME)).unwrap();
    let lessons = store.lessons_for("https://cafe.example/menu", 10).unwrap();
    assert_eq!(lessons.len(), 1);
    assert_eq!(lessons[0].source, "playbook");
    assert!(lessons[0].text.contains("Choose the size before the milk."));
    assert!(store.list_skills(None).unwrap().is_empty());

    let no_site = dir.join("tips.md");
    std::fs::write(&no_site, "# Tips\nBe quick.\n").unwrap();
    assert!(fails(dir, &["import", no_site.to_str().unwrap()]).contains("no `Site:` line"));
}
