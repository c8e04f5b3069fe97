//! Maps the ids the background gives host requests back to (panel, the panel's own id).
//!
//! Each panel numbers its requests from 1; two panels would collide on the
//! host's single id space without this.

use std::collections::HashMap;

#[derive(Debug)]
pub struct Router {
    next: u64,
    pending: HashMap<u64, (u32, u64)>,
}

impl Default for Router {
    fn default() -> Self {
        // 0 is reserved for messages that answer nothing (the background's own Hello).
        Self {
            next: 1,
            pending: HashMap::new(),
        }
    }
}

impl Router {
    pub fn register(&mut self, panel: u32, original_id: u64) -> u64 {
        let id = self.next;
        self.next += 1;
        self.pending.insert(id, (panel, original_id));
        id
    }

    /// The request a reply answers, forgetting it: each request gets one reply.
    pub fn take(&mut self, host_id: u64) -> Option<(u32, u64)> {
        self.pending.remove(&host_id)
    }

    /// Every request still waiting; used when the host goes away.
    pub fn drain(&mut self) -> Vec<(u32, u64)> {
        self.pending.drain().map(|(_, v)| v).collect()
    }

    pub fn forget_panel(&mut self, panel: u32) {
        self.pending.retain(|_, (p, _)| *p != panel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_replies_to_the_asking_panel() {
        let mut r = Router::default();
        let a = r.register(1, 1);
        let b = r.register(2, 1);
        assert_ne!(a, b);
        assert_eq!(r.take(a), Some((1, 1)));
        assert_eq!(r.take(a), None);
        let c = r.register(2, 5);
        r.forget_panel(2);
        assert_eq!(r.take(c), None);
        assert_eq!(r.take(b), None);
    }
}
