//! Native-messaging round trip through the real browser: side panel page →
//! Rust/WASM service worker → `itinero-host` → back, timed inside the page with
//! `performance.now()` so DevTools overhead is not counted.
//!
//! Run: `cargo build --release -p itinero-host && cargo bench --bench native_messaging`

use anyhow::{Context, Result};
use itinero::harness::Harness;
use itinero::harness::PageExt;

struct Case {
    name: &'static str,
    payload_bytes: usize,
    warmup: usize,
    samples: usize,
}

const CASES: &[Case] = &[
    Case {
        name: "small message (32 B payload, echoed)",
        payload_bytes: 32,
        warmup: 50,
        samples: 1000,
    },
    Case {
        name: "1 MiB observation-sized message (acknowledged)",
        payload_bytes: 1 << 20,
        warmup: 5,
        samples: 100,
    },
];

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    let version: String = panel.run_js("return navigator.userAgent;").await?;
    println!("native-messaging round trip: panel page → service worker (Rust/WASM) → itinero-host → back");
    println!("browser: {version}");
    for case in CASES {
        let echo = case.payload_bytes < 4096;
        let times: Vec<f64> = panel
            .run_js(&format!(
                r#"
                const port = chrome.runtime.connect({{ name: 'panel' }});
                const payload = 'x'.repeat({bytes});
                const waiting = new Map();
                port.onMessage.addListener((m) => {{
                  if (m.kind === 'host' && waiting.has(m.envelope.id)) {{
                    if (m.envelope.type !== 'Pong') throw new Error(JSON.stringify(m.envelope));
                    waiting.get(m.envelope.id)(); waiting.delete(m.envelope.id);
                  }}
                }});
                const once = (id) => new Promise((resolve) => {{
                  waiting.set(id, resolve);
                  port.postMessage({{ kind: 'to_host', envelope: {{ v: 1, id, type: 'Ping', body: {{ payload, echo: {echo} }} }} }});
                }});
                const times = [];
                for (let i = 0; i < {warmup} + {samples}; i++) {{
                  const t0 = performance.now();
                  await once(i + 1);
                  if (i >= {warmup}) times.push(performance.now() - t0);
                }}
                port.disconnect();
                return times;
                "#,
                bytes = case.payload_bytes,
                warmup = case.warmup,
                samples = case.samples,
            ))
            .await
            .with_context(|| format!("running case {}", case.name))?;
        let mut sorted = times.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        println!(
            "{:<48} n={:<5} p50={:>7.3} ms  p99={:>7.3} ms  max={:>7.3} ms",
            case.name,
            sorted.len(),
            percentile(&sorted, 50.0),
            percentile(&sorted, 99.0),
            sorted[sorted.len() - 1]
        );
    }
    Ok(())
}
