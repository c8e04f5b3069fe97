//! The stale-element hook's plumbing: a test asks the server to change a product's stock, the
//! product page (long-polling) re-renders its buy box with new DOM nodes, and says so.
//!
//! Every wait is on a `watch` channel, never a sleep, so a test that restocks right after the
//! page loaded and one that restocks before it loaded behave the same: the restock waits for
//! a listener, then for the acknowledgement.

use std::collections::HashMap;

use serde::Serialize;
use tokio::sync::watch;

/// What a product page receives: the buy box's new HTML, rendered by the server so the page
/// and a fresh load of it agree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StockEvent {
    /// Increasing from 1 across all products; a page asks for events after the last it saw.
    pub seq: u64,
    pub product: String,
    pub left: u32,
    pub html: String,
}

pub struct StockHub {
    /// Long-polls waiting now, per product slug.
    listeners: watch::Sender<HashMap<String, usize>>,
    /// Every event so far; a page that was between two polls still finds its event here.
    events: watch::Sender<Vec<StockEvent>>,
    /// The highest event number a page has acknowledged.
    acked: watch::Sender<u64>,
}

impl Default for StockHub {
    fn default() -> Self {
        Self {
            listeners: watch::Sender::new(HashMap::new()),
            events: watch::Sender::new(Vec::new()),
            acked: watch::Sender::new(0),
        }
    }
}

/// Counts a long-poll as listening while it lives; dropped when the poll answers or the page
/// goes away (axum drops the handler's future when the connection closes).
pub struct Listening {
    listeners: watch::Sender<HashMap<String, usize>>,
    product: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.listeners.send_modify(|m| {
            if let Some(n) = m.get_mut(&self.product) {
                *n = n.saturating_sub(1);
            }
        });
    }
}

impl StockHub {
    pub fn listen(&self, product: &str) -> Listening {
        self.listeners
            .send_modify(|m| *m.entry(product.to_string()).or_default() += 1);
        Listening {
            listeners: self.listeners.clone(),
            product: product.to_string(),
        }
    }

    /// The number of the last event, for a freshly rendered page to start after.
    pub fn latest_seq(&self) -> u64 {
        self.events.borrow().last().map_or(0, |e| e.seq)
    }

    pub async fn wait_for_listener(&self, product: &str) {
        let mut rx = self.listeners.subscribe();
        // Err only if the sender is gone, and `self` holds it.
        let _ = rx
            .wait_for(|m| m.get(product).is_some_and(|n| *n > 0))
            .await;
    }

    /// `render` makes the event's HTML from its number, which the new buy box carries.
    pub fn publish(&self, product: &str, left: u32, render: impl FnOnce(u64) -> String) -> u64 {
        let mut seq = 0;
        self.events.send_modify(|events| {
            seq = events.last().map_or(0, |e| e.seq) + 1;
            events.push(StockEvent {
                seq,
                product: product.to_string(),
                left,
                html: render(seq),
            });
        });
        seq
    }

    /// The first event for `product` after `after`, as soon as there is one.
    pub async fn next_event(&self, product: &str, after: u64) -> Option<StockEvent> {
        let find = |events: &Vec<StockEvent>| {
            events
                .iter()
                .find(|e| e.seq > after && e.product == product)
                .cloned()
        };
        let mut rx = self.events.subscribe();
        let events = rx.wait_for(|events| find(events).is_some()).await.ok()?;
        find(&events)
    }

    /// Returns false for an event that was never published.
    pub fn ack(&self, seq: u64) -> bool {
        if seq == 0 || seq > self.latest_seq() {
            return false;
        }
        self.acked.send_modify(|a| *a = (*a).max(seq));
        true
    }

    pub async fn wait_for_ack(&self, seq: u64) {
        let mut rx = self.acked.subscribe();
        let _ = rx.wait_for(|a| *a >= seq).await;
    }
}
