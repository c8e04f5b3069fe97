//! What the shop's server saw, as tests read it back: the agent's effect on the world is checked
//! here rather than on the page it left behind.

use super::money::Cents;

/// One product line of a cart or an order, priced when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineItem {
    pub slug: String,
    pub name: String,
    pub quantity: u32,
    pub unit_price: Cents,
    pub line_total: Cents,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// As the confirmation page shows it (`Order #1001`); the first order is 1001.
    pub number: u32,
    /// The browser session (`sid` cookie) that placed it.
    pub session: String,
    pub items: Vec<LineItem>,
    pub total: Cents,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    OrderQuestion,
    Returns,
    Other,
}

impl Topic {
    pub const ALL: [Topic; 3] = [Topic::OrderQuestion, Topic::Returns, Topic::Other];

    /// The `<option value>` the contact form posts.
    pub fn value(self) -> &'static str {
        match self {
            Topic::OrderQuestion => "order",
            Topic::Returns => "returns",
            Topic::Other => "other",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Topic::OrderQuestion => "Order question",
            Topic::Returns => "Returns",
            Topic::Other => "Other",
        }
    }

    pub fn from_value(value: &str) -> Option<Topic> {
        Topic::ALL.into_iter().find(|t| t.value() == value)
    }
}

/// A contact form that passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactMessage {
    pub name: String,
    pub email: String,
    pub topic: Topic,
    pub message: String,
}

/// A sign-in attempt. The password is deliberately absent: tests check that an agent signs in,
/// and nothing here may become a place where a secret leaks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignIn {
    pub username: String,
    pub success: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewsletterChoice {
    Subscribed { email: String },
    Declined,
}

/// The newsletter dialog was closed by one of its buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewsletterDismissal {
    pub session: String,
    pub choice: NewsletterChoice,
}
