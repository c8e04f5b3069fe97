//! Maps the ids the background gives host requests back to (panel, the panel's own id).
//!
//! Each panel numbers its requests from 1; two panels would collide on the
//! host's single id space without this.

use std::collections::HashMap;

#[derive(Debug)]
pub struct Router {
    next: u64,
    /// host id → (panel, the panel's id, whether the request opens a stream of replies).
    pending: HashMap<u64, (u32, u64, bool)>,
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
    /// `stream`: the request is answered by several messages (a `StartTask`), not one.
    pub fn register(&mut self, panel: u32, original_id: u64, stream: bool) -> u64 {
        let id = self.next;
        self.next += 1;
        self.pending.insert(id, (panel, original_id, stream));
        id
    }

    /// The request a reply answers, forgetting it: each request gets one reply.
    pub fn take(&mut self, host_id: u64) -> Option<(u32, u64)> {
        self.pending.remove(&host_id).map(|(p, o, _)| (p, o))
    }

    /// The request a message answers. A stream's request is remembered while `more` says more
    /// will come (a task's events and questions); anything else ends it (its `TaskFinished`).
    pub fn route(&mut self, host_id: u64, more: bool) -> Option<(u32, u64)> {
        match self.pending.get(&host_id) {
            Some(&(p, o, true)) if more => Some((p, o)),
            Some(_) => self.take(host_id),
            None => None,
        }
    }

    /// Every request still waiting; used when the host goes away.
    pub fn drain(&mut self) -> Vec<(u32, u64)> {
        self.pending.drain().map(|(_, (p, o, _))| (p, o)).collect()
    }

    pub fn forget_panel(&mut self, panel: u32) {
        self.pending.retain(|_, (p, _, _)| *p != panel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_replies_to_the_asking_panel() {
        let mut r = Router::default();
        let a = r.register(1, 1, false);
        let b = r.register(2, 1, false);
        assert_ne!(a, b);
        assert_eq!(r.route(a, true), Some((1, 1)));
        assert_eq!(r.route(a, true), None, "one reply ends a plain request");
        let c = r.register(2, 5, false);
        r.forget_panel(2);
        assert_eq!(r.take(c), None);
        assert_eq!(r.take(b), None);
    }

    #[test]
    fn a_task_stream_keeps_its_route_until_it_finishes() {
        let mut r = Router::default();
        let t = r.register(3, 9, true);
        assert_eq!(r.route(t, true), Some((3, 9)), "an event");
        assert_eq!(r.route(t, true), Some((3, 9)), "a question");
        assert_eq!(r.route(t, false), Some((3, 9)), "TaskFinished");
        assert_eq!(r.route(t, true), None);
    }
}
