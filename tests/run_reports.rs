//! Run reports with pictures, in real Chromium with the real extension, host and store: a task
//! leaves a JPEG of the page after each step, the panel's History shows them beside the steps
//! (and is itself pictured, `target/test-artifacts/history.png`), `itinero-host runs export`
//! writes them into HTML, Markdown and JSON, and Delete takes them away with the run. Above
//! the runs, the week's statistics (`target/test-artifacts/history-list.png`).

use std::path::PathBuf;
use std::process::Command;

use anyhow::{bail, Context, Result};
use chromiumoxide::page::ScreenshotParams;
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::panel::{click, fill, open, result};
use itinero::harness::{host_binary, Harness, LaunchOptions, PageExt, WAIT};
use itinero_host::store::{Store, FILE_NAME};
use serde_json::Value;

/// `itinero-host` on the harness's data directory; its standard output.
fn host(h: &Harness, args: &[&str]) -> Result<String> {
    let out = Command::new(host_binary()?)
        .args(args)
        .env("ITINERO_DATA_DIR", h.host_data_dir())
        .output()?;
    if !out.status.success() {
        bail!(
            "itinero-host {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8(out.stdout)?)
}

fn is_jpeg(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xff, 0xd8, 0xff]) && bytes.ends_with(&[0xff, 0xd9])
}

fn artifacts() -> Result<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_keeps_a_picture_after_each_step_and_its_report_shows_them() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"[
          {"reply": "{\"thought\": \"Search for them.\", \"action\": \"type\", \"index\": {{input 'search products'}}, \"text\": \"wool socks\", \"submit\": true}"},
          {"reply": "{\"thought\": \"Open them.\", \"action\": \"click\", \"index\": {{a 'Wool socks'}}}"},
          {"reply": "{\"thought\": \"The price is listed.\", \"action\": \"done\", \"answer\": \"Wool socks cost 12.99 EUR.\"}"}
        ]"#,
    )?;
    // The model decides every step, so the run searches, opens a product and answers.
    let mut options = LaunchOptions::scripted(&script);
    options
        .host_env
        .push(("ITINERO_GROUNDING".into(), "off".into()));
    let h = Harness::start_full(options, shop.router()).await?;
    let panel = h.connected_panel().await?;
    let tab = h.chromium.open(&h.fixture_url("shop/")).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    // The shop's tab stays in view, as beside a real side panel: the goal is sent with the
    // panel behind it.
    tab.bring_to_front().await?;
    fill(&panel, "#goal", "What do wool socks cost?").await?;
    click(&panel, "#run").await?;
    let (heading, text) = result(&panel, WAIT).await?;
    assert_eq!(heading, "Done", "{text}");

    // The store: a JPEG after every step, none withheld.
    let store = Store::open(&h.host_data_dir().join(FILE_NAME))?;
    let run = store
        .recent_runs(1)?
        .first()
        .context("no run stored")?
        .clone();
    let detail = store.run_detail(run.id)?.context("the run is gone")?;
    assert!(!detail.steps.is_empty());
    let steps: Vec<u32> = detail.steps.iter().map(|s| s.n).collect();
    let recorded: Vec<u32> = detail.pictures.iter().map(|p| p.n).collect();
    assert_eq!(
        recorded, steps,
        "a picture, or why none, per step: {:?}",
        detail.pictures
    );
    assert_eq!(steps, [1, 2, 3]);
    // The first picture is taken when it comes and the last always; the scripted model answers
    // at once, so the step between may come sooner than Chromium takes pictures (two a second).
    let mut kept = Vec::new();
    for p in &detail.pictures {
        if !p.is_kept() {
            assert_eq!(p.n, 2, "step {} has no picture: {:?}", p.n, p.withheld);
            assert_eq!(
                p.withheld.as_deref(),
                Some("the step came sooner than the browser takes pictures (two a second)")
            );
            continue;
        }
        let jpeg = store
            .picture(run.id, p.n)?
            .context("a listed picture is missing")?;
        assert!(is_jpeg(&jpeg), "step {}'s picture is not a JPEG", p.n);
        assert_eq!(jpeg.len() as u32, p.bytes);
        kept.push(p.n);
    }
    // Each picture is of the page after its step: the results, then the product.
    let results = store.picture(run.id, 1)?.unwrap_or_default();
    let product = store.picture(run.id, 3)?.unwrap_or_default();
    assert_ne!(
        results, product,
        "the pages after the search and after the click look alike"
    );

    // The panel's History shows each picture beside its step.
    panel.bring_to_front().await?;
    open(&panel, "history").await?;
    panel
        .wait_for(
            "document.querySelector('#runs li[data-run-id] button') ?? \
             (document.getElementById('history-status').textContent !== 'Loading…' && \
              document.getElementById('history-refresh').click(), null)",
            WAIT,
        )
        .await?;
    // Above the runs, the week's statistics: one task, decided by the model at every step.
    let week = panel
        .wait_for(
            "document.querySelector('#stats-rows li') && \
             [document.querySelectorAll('#stats-rows li').length, \
              document.querySelector('#stats-rows li .bar').getAttribute('aria-label'), \
              document.querySelector('#stats-rows li .meta').textContent, \
              [...document.querySelectorAll('#stats-site option')].map(o => o.value)]",
            WAIT,
        )
        .await
        .context("the History page never showed the statistics")?;
    let (rows, bar, figures, sites): (u32, String, String, Vec<String>) =
        serde_json::from_value(week)?;
    assert_eq!(rows, 1);
    assert_eq!(bar, "steps: model 100%");
    assert!(
        figures.starts_with("1 task · 100% done · 3.0 model calls a task"),
        "{figures}"
    );
    let origin = run.origin.clone().context("the run has no origin")?;
    assert_eq!(sites, ["".to_owned(), origin.clone()]);
    let png = panel
        .screenshot(ScreenshotParams::builder().build())
        .await?;
    std::fs::write(artifacts()?.join("history-list.png"), &png)?;
    panel
        .find_element("#runs li[data-run-id] button")
        .await?
        .click()
        .await?;
    let shown = panel
        .wait_for(
            &format!(
                "(() => {{ const imgs = [...document.querySelectorAll('#run-steps li img.shot')]; \
                 return imgs.length === {} && imgs.every(i => i.complete && i.naturalWidth > 100) && \
                 imgs.map(i => [i.closest('li').dataset.step, i.naturalWidth, i.naturalHeight, i.alt]); }})()",
                kept.len()
            ),
            WAIT,
        )
        .await
        .with_context(|| "the History page never showed every step's picture")?;
    let shown: Vec<(String, u32, u32, String)> = serde_json::from_value(shown)?;
    for ((step, width, height, alt), n) in shown.iter().zip(&kept) {
        assert_eq!(step, &n.to_string());
        assert!(*width >= 400 && *height >= 300, "{width}x{height}");
        assert_eq!(alt, &format!("The page after step {n}"));
    }
    let png = panel
        .screenshot(ScreenshotParams::builder().full_page(true).build())
        .await?;
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    let picture = artifacts()?.join("history.png");
    std::fs::write(&picture, &png)?;

    // The reports.
    let id = run.id.to_string();
    let out = tempfile::tempdir()?;
    let export_to = |format: &str, file: &std::path::Path| {
        let file = file.to_str().context("a temp path that is not UTF-8")?;
        host(&h, &["runs", "export", &id, "--format", format, "-o", file])
    };
    let html = out.path().join("run.html");
    export_to("html", &html)?;
    let page = std::fs::read_to_string(&html)?;
    assert_eq!(
        page.matches("src=\"data:image/jpeg;base64,").count(),
        kept.len(),
        "every picture inline"
    );
    let answer = run.answer.clone().context("the run has no answer")?;
    for said in ["What do wool socks cost?", answer.as_str()] {
        assert!(
            page.contains(said),
            "{said:?} is not in the report:\n{}",
            &page[..page.len().min(3000)]
        );
    }
    for step in &detail.steps {
        let action = step
            .action_summary
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        assert!(
            page.contains(&format!("id=\"step-{}\"", step.n)),
            "step {}",
            step.n
        );
        assert!(page.contains(&action), "{action:?} is not in the report");
    }
    let md = out.path().join("run.md");
    export_to("md", &md)?;
    let text = std::fs::read_to_string(&md)?;
    for n in &kept {
        let file = out.path().join(format!("run-pictures/step-{n}.jpg"));
        assert!(
            text.contains(&format!("(run-pictures/step-{n}.jpg)")),
            "{text}"
        );
        assert!(is_jpeg(&std::fs::read(&file)?), "{}", file.display());
    }
    let json: Value =
        serde_json::from_str(&host(&h, &["runs", "export", &id, "--format", "json"])?)?;
    assert_eq!(json["pictures"].as_array().map(Vec::len), Some(steps.len()));
    let inline = json["pictures"].as_array().into_iter().flatten();
    assert_eq!(
        inline.filter(|p| p["jpeg_base64"].is_string()).count(),
        kept.len()
    );
    assert!(json["pictures"][0]["jpeg_base64"]
        .as_str()
        .is_some_and(|b| b.starts_with("/9j/")));
    let listed = host(&h, &["runs", "list"])?;
    assert!(
        listed.contains("What do wool socks cost?") && listed.contains("Succeeded"),
        "{listed}"
    );
    let on_site = host(&h, &["runs", "list", "--site", &format!("{origin}/")])?;
    assert!(on_site.contains("What do wool socks cost?"), "{on_site}");
    let elsewhere = host(&h, &["runs", "list", "--site", "https://elsewhere.example"])?;
    assert_eq!(elsewhere.trim(), "no runs on https://elsewhere.example");

    // Delete takes the pictures with the run.
    panel.find_element("#run-delete").await?.click().await?;
    panel
        .wait_for(
            "document.getElementById('history-status').textContent === 'Run deleted.'",
            WAIT,
        )
        .await?;
    assert!(store.pictures(run.id)?.is_empty());
    assert_eq!(store.picture(run.id, steps[0])?, None);
    Ok(())
}
