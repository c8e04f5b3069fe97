//! Reconnection delays: quick at first (a host restart is usually instant), then
//! doubling so a broken install does not spin the service worker.

const FIRST_MS: u32 = 200;
const MAX_MS: u32 = 10_000;

#[derive(Debug, Default)]
pub struct Backoff {
    failures: u32,
}

impl Backoff {
    pub fn next_delay(&mut self) -> u32 {
        let delay = FIRST_MS
            .saturating_mul(1u32 << self.failures.min(16))
            .min(MAX_MS);
        self.failures += 1;
        delay
    }

    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_a_ceiling_and_resets() {
        let mut b = Backoff::default();
        let delays: Vec<_> = (0..9).map(|_| b.next_delay()).collect();
        assert_eq!(
            delays,
            [200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]
        );
        b.reset();
        assert_eq!(b.next_delay(), 200);
    }
}
