//! Action-cache lookup latency with 100 000 cached actions in a real SQLite file (WAL), as a
//! task's step does it: the key from the goal, URL and page (`agent::cache::key`), then the
//! store's lookup. Hits and misses are timed separately; each lookup is one index probe, so the
//! figures should barely move with the table's size (the 1 000-entry run is the reference).
//!
//! Run: `cargo bench --bench action_cache`

use std::time::Instant;

use anyhow::Result;
use itinero::harness::stats::{percentile, sorted};
use itinero_host::agent::cache;
use itinero_host::store::{CacheEntry, CacheKey, Store};
use serde_json::json;

const LOOKUPS: usize = 20_000;
const BATCH: usize = 5_000;

/// The `i`th cached step: 1 000 goals × 100 pages each, on 20 sites.
fn entry(i: usize) -> (String, String, String) {
    let goal = format!("Add product {} to my cart, then check out", i / 100);
    let url = format!(
        "https://shop{}.test/shop/product/{}?ref=home",
        i % 20,
        i % 100
    );
    let page = format!("{:016x}", (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (goal, url, page)
}

fn fill(store: &Store, n: usize) -> Result<()> {
    let action = json!({"kind": "click", "target": {"index": 4, "fingerprint": {
        "tag": "button", "role": "button", "name": "Add to cart", "path": "html>body>main[0]>form[0]>button[0]"}}});
    let mut batch: Vec<(CacheKey, CacheEntry)> = Vec::with_capacity(BATCH);
    for i in 0..n {
        let (goal, url, page) = entry(i);
        batch.push((
            cache::key(&goal, &url, &page),
            CacheEntry {
                action: action.clone(),
                decide_ms: 1200,
                hits: 0,
            },
        ));
        if batch.len() == BATCH || i + 1 == n {
            store.cache_put(&batch)?;
            batch.clear();
        }
    }
    Ok(())
}

/// Microseconds per lookup of `LOOKUPS` keys, hits (`hit`) or keys never stored.
fn time(store: &Store, n: usize, hit: bool) -> Result<Vec<f64>> {
    let mut times = Vec::with_capacity(LOOKUPS);
    for j in 0..LOOKUPS {
        // A stride co-prime with n visits the entries in a scattered order.
        let i = (j * 7919) % n;
        let (goal, url, mut page) = entry(i);
        if !hit {
            page.push('x');
        }
        let t = Instant::now();
        let found = store.cache_lookup(&cache::key(&goal, &url, &page))?;
        times.push(t.elapsed().as_secs_f64() * 1e6);
        assert_eq!(found.is_some(), hit, "entry {i}");
    }
    Ok(sorted(times))
}

fn main() -> Result<()> {
    let dir = tempfile::tempdir()?;
    println!("action cache lookups ({LOOKUPS} per row, key computation included), µs");
    println!("{:>9} {:>5} {:>8} {:>8}", "entries", "kind", "p50", "p99");
    let mut p50s = Vec::new();
    for n in [1_000, 100_000] {
        let store = Store::open(&dir.path().join(format!("cache-{n}.sqlite3")))?;
        let t = Instant::now();
        fill(&store, n)?;
        eprintln!("filled {n} entries in {:.1} s", t.elapsed().as_secs_f64());
        // One pass to warm SQLite's page cache and the statement cache, not counted.
        time(&store, n, true)?;
        for hit in [true, false] {
            let times = time(&store, n, hit)?;
            let (p50, p99) = (percentile(&times, 50.0), percentile(&times, 99.0));
            println!(
                "{n:>9} {:>5} {p50:>8.1} {p99:>8.1}",
                if hit { "hit" } else { "miss" }
            );
            if hit {
                p50s.push(p50);
            }
        }
        assert_eq!(store.cache_stats()?.entries, n as u64);
    }
    println!(
        "hit p50 ratio, 100 000 vs 1 000 entries: {:.2}",
        p50s[1] / p50s[0]
    );
    Ok(())
}
