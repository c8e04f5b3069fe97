//! Amounts are integer cents so that totals add up exactly; only the page shows decimals.

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, Mul};

/// An amount in euro cents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cents(pub u64);

impl Add for Cents {
    type Output = Cents;
    fn add(self, other: Cents) -> Cents {
        Cents(self.0 + other.0)
    }
}

impl Mul<u32> for Cents {
    type Output = Cents;
    fn mul(self, quantity: u32) -> Cents {
        Cents(self.0 * u64::from(quantity))
    }
}

impl Sum for Cents {
    fn sum<I: Iterator<Item = Cents>>(iter: I) -> Cents {
        iter.fold(Cents(0), Add::add)
    }
}

/// Written the way the shop's pages show prices (`12.99 EUR`), so tests can look for the same text.
impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02} EUR", self.0 / 100, self.0 % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::Cents;

    #[test]
    fn prices_show_two_decimals_and_the_currency() {
        assert_eq!(Cents(1299).to_string(), "12.99 EUR");
        assert_eq!(Cents(750).to_string(), "7.50 EUR");
        assert_eq!(Cents(5).to_string(), "0.05 EUR");
        assert_eq!((Cents(1299) * 2).to_string(), "25.98 EUR");
    }
}
