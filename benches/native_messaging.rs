//! Native-messaging round trip through the real browser: side panel page →
//! Rust/WASM service worker → `itinero-host` → back, timed inside the page with
//! `performance.now()` so DevTools overhead is not counted.
//!
//! Run: `cargo build --release -p itinero-host && cargo bench --bench native_messaging`

use anyhow::{Context, Result};
use itinero::harness::stats::{percentile, sorted};
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

/// The host's own share of the 1 MiB case: frame decode + envelope decode in this process.
fn host_decode_only(payload_bytes: usize, samples: usize) -> Vec<f64> {
    use itinero_shared::codec::{Direction, FrameDecoder};
    use itinero_shared::envelope::Envelope;
    use itinero_shared::messages::Ping;
    use itinero_shared::{encode_frame, ToHost};
    let env = Envelope::new(
        1,
        ToHost::Ping(Ping {
            payload: "x".repeat(payload_bytes),
            echo: false,
        }),
    );
    let frame = encode_frame(&env.to_json(), Direction::ToHost).expect("fits");
    (0..samples)
        .map(|_| {
            let t0 = std::time::Instant::now();
            let mut dec = FrameDecoder::new(Direction::ToHost);
            for chunk in frame.chunks(64 * 1024) {
                dec.push(chunk);
            }
            let payload = dec.next_frame().unwrap().unwrap();
            let decoded = Envelope::<ToHost>::from_json(&payload).unwrap();
            std::hint::black_box(decoded);
            t0.elapsed().as_secs_f64() * 1000.0
        })
        .collect()
}

/// One line per case: sample count, p50, p99 and max.
fn report(name: &str, samples: Vec<f64>) {
    let sorted = sorted(samples);
    println!(
        "{:<48} n={:<5} p50={:>7.3} ms  p99={:>7.3} ms  max={:>7.3} ms",
        name,
        sorted.len(),
        percentile(&sorted, 50.0),
        percentile(&sorted, 99.0),
        sorted[sorted.len() - 1]
    );
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
        report(case.name, times);
    }
    report(
        "host-side decode of the 1 MiB frame (in process)",
        host_decode_only(1 << 20, 100),
    );
    Ok(())
}
