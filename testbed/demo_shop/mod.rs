//! The demo shop: a small server-rendered web shop on loopback, for the README's demo and the
//! agent's end-to-end tests. It behaves like a real site where an agent needs it to (forms
//! that post, a per-browser cart, sign-in, validation, an overlay that blocks the page, DOM
//! that is replaced under the agent's feet) and records what it was asked to do, so a test
//! asserts on what the agent did rather than on what the page happened to show.
//!
//! Every route is under `/shop/` (`routes/`), every page a maud template (`pages/`), all state
//! behind one lock (`state.rs`) with what tests read back in `records.rs`. [`ShopOptions`]
//! turns on the newsletter overlay, sets the one account that signs in (optionally with a TOTP
//! seed) and turns on the stale-element hook (`stock.rs`, `routes/hooks.rs`); [`Layout`]
//! changes the product pages while the shop runs, as a site changes under a recorded skill.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use itinero::demo_shop::{DemoShop, ShopOptions};
//! use itinero::harness::{Harness, LaunchOptions};
//!
//! let shop = DemoShop::new(ShopOptions::default());
//! let h = Harness::start_full(LaunchOptions::default(), shop.router()).await?;
//! let tab = h.chromium.open(&h.fixture_url("shop/")).await?;
//! // … drive the agent, then:
//! assert!(shop.orders().is_empty());
//! # Ok(()) }
//! ```

mod catalog;
mod money;
mod pages;
mod records;
mod routes;
mod state;
mod stock;
pub mod totp;
mod visitor;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use catalog::{Category, Product, PRODUCTS};
pub use money::Cents;
pub use records::{
    ContactMessage, LineItem, NewsletterChoice, NewsletterDismissal, Order, SignIn, Topic,
};

use state::Store;

/// How long a restock waits by default: long enough for a product page that is still loading,
/// short enough that a test without one fails soon, with the reason.
pub const HOOK_WAIT: Duration = Duration::from_secs(10);
use stock::StockHub;

/// The one account that can sign in.
#[derive(Clone, PartialEq, Eq)]
pub struct Account {
    pub username: String,
    pub password: String,
    /// Base32 TOTP seed: the two-step sign-in (`/shop/signin`) then asks for a code.
    pub totp_seed: Option<String>,
}

impl Account {
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            username: username.into(),
            password: password.into(),
            totp_seed: None,
        }
    }

    /// The same account, protected by a TOTP code after the password.
    pub fn with_totp(mut self, seed: impl Into<String>) -> Self {
        self.totp_seed = Some(seed.into());
        self
    }
}

/// alice / "correct horse": a demo account, not a secret.
impl Default for Account {
    fn default() -> Self {
        Self::new("alice", "correct horse")
    }
}

/// Keeps the password out of test output.
impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Account")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .field("totp", &self.totp_seed.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

#[derive(Debug, Clone)]
pub struct ShopOptions {
    /// The home page opens under a "Join our newsletter" overlay until the session dismisses it.
    pub newsletter_modal: bool,
    pub account: Account,
    /// Serves `/shop/_test/…` and the product page's stock long-poll (the stale-element hook).
    pub test_hooks: bool,
    /// How long a restock waits for a product page to listen, and then to re-render
    /// ([`HOOK_WAIT`] by default).
    pub hook_wait: Duration,
}

impl Default for ShopOptions {
    fn default() -> Self {
        Self {
            newsletter_modal: false,
            account: Account::default(),
            test_hooks: false,
            hook_wait: HOOK_WAIT,
        }
    }
}

impl ShopOptions {
    pub fn newsletter_modal(mut self, on: bool) -> Self {
        self.newsletter_modal = on;
        self
    }

    pub fn account(mut self, account: Account) -> Self {
        self.account = account;
        self
    }

    pub fn test_hooks(mut self, on: bool) -> Self {
        self.test_hooks = on;
        self
    }

    pub fn hook_wait(mut self, wait: Duration) -> Self {
        self.hook_wait = wait;
        self
    }
}

/// A handle on one shop: clones share its state, so a test keeps one to read what the router
/// it handed to the fixture server saw.
#[derive(Clone, Default)]
pub struct DemoShop {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    options: ShopOptions,
    store: Store,
    stock: StockHub,
    layout: std::sync::Mutex<Layout>,
}

/// How the shop's pages are built, switchable while it runs: a site that changed since a skill
/// was recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Layout {
    #[default]
    Original,
    /// New ids and classes everywhere in the buy box, and its button moved above the quantity.
    Restyled,
    /// The buy box's button keeps its place and attributes but now saves for later; adding to
    /// the cart is a new "Put in basket" button.
    Repurposed,
    /// Product pages are gone: "no longer sold".
    Discontinued,
}

impl DemoShop {
    pub fn new(options: ShopOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                options,
                store: Store::default(),
                stock: StockHub::default(),
                layout: Default::default(),
            }),
        }
    }

    /// Rebuilds the pages from now on as `layout` says.
    pub fn set_layout(&self, layout: Layout) {
        *self.inner.layout.lock().unwrap_or_else(|p| p.into_inner()) = layout;
    }

    pub fn layout(&self) -> Layout {
        *self.inner.layout.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every route, under `/shop` (for `Harness::start_full`; the shop is then at
    /// `fixture_url("shop/")`).
    pub fn router(&self) -> axum::Router {
        routes::router(self.clone())
    }

    pub fn options(&self) -> &ShopOptions {
        &self.inner.options
    }

    /// Orders placed, oldest first.
    pub fn orders(&self) -> Vec<Order> {
        self.inner.store.orders()
    }

    /// Contact messages that passed validation, oldest first.
    pub fn contact_messages(&self) -> Vec<ContactMessage> {
        self.inner.store.contact_messages()
    }

    /// The cart of every session, by session id (the `sid` cookie), empty carts included.
    pub fn carts(&self) -> BTreeMap<String, Vec<LineItem>> {
        self.inner.store.carts()
    }

    /// The carts that hold something, merged: what a test with one browser usually wants.
    pub fn cart_items(&self) -> Vec<LineItem> {
        self.carts().into_values().flatten().collect()
    }

    /// Search queries (trimmed, non-empty), oldest first.
    pub fn searches(&self) -> Vec<String> {
        self.inner.store.searches()
    }

    /// Sign-in attempts, oldest first; passwords are never kept.
    pub fn sign_ins(&self) -> Vec<SignIn> {
        self.inner.store.sign_ins()
    }

    /// Clicks on the newsletter dialog's buttons, oldest first.
    pub fn newsletter_dismissals(&self) -> Vec<NewsletterDismissal> {
        self.inner.store.newsletter_dismissals()
    }

    fn store(&self) -> &Store {
        &self.inner.store
    }

    fn stock(&self) -> &StockHub {
        &self.inner.stock
    }
}
