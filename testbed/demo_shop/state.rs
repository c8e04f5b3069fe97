//! Everything the shop remembers, behind one lock: requests are tiny and the shop serves a
//! handful of tabs, so one mutex keeps every change atomic without any ordering puzzles.

use std::collections::hash_map::RandomState;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::catalog::Product;
use super::records::{
    ContactMessage, LineItem, NewsletterChoice, NewsletterDismissal, Order, SignIn,
};

/// The most of one product a cart holds; the quantity field says the same.
pub const MAX_QUANTITY: u32 = 99;

/// The first order's number, so order numbers look like a shop's and never like an index.
const FIRST_ORDER: u32 = 1001;

/// One browser's visit, found by its `sid` cookie.
#[derive(Debug, Default)]
struct Session {
    /// In the order the products were first added.
    cart: Vec<(&'static Product, u32)>,
    user: Option<String>,
    /// Passed the password of the two-step sign-in; waits for the TOTP code.
    awaiting_code: Option<String>,
    newsletter_dismissed: bool,
}

/// What every page's header and the home page need to know about the visitor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionView {
    pub cart_count: u32,
    pub user: Option<String>,
    pub newsletter_dismissed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CartError {
    /// More than [`MAX_QUANTITY`] of one product, counting what the cart already holds.
    TooMany { in_cart: u32 },
    /// The test hook announced fewer left than asked for.
    NotEnoughStock { left: u32 },
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, Session>,
    sessions_opened: u64,
    orders: Vec<Order>,
    contact_messages: Vec<ContactMessage>,
    searches: Vec<String>,
    sign_ins: Vec<SignIn>,
    newsletter: Vec<NewsletterDismissal>,
    /// Set only by the restock test hook; products not named here are not limited.
    stock_left: HashMap<&'static str, u32>,
}

pub struct Store {
    state: Mutex<State>,
    /// Salts session ids: a cookie left in the browser by another shop instance must not name
    /// a session of this one.
    salt: RandomState,
}

impl Default for Store {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            salt: RandomState::new(),
        }
    }
}

impl Store {
    /// A poisoned lock only means a handler panicked mid-request; the data is still usable for
    /// the tests that read it, and a test shop must not turn one failure into many.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The session the cookie names, or a new one when it names none of this shop's.
    /// Returns its id and whether it is new (and so needs a `Set-Cookie`).
    pub fn open_session(&self, cookie: Option<&str>) -> (String, bool) {
        let mut state = self.lock();
        if let Some(sid) = cookie.filter(|sid| state.sessions.contains_key(*sid)) {
            return (sid.to_string(), false);
        }
        (new_session(&mut state, &self.salt), true)
    }

    pub fn view(&self, sid: &str) -> SessionView {
        let state = self.lock();
        let Some(session) = state.sessions.get(sid) else {
            return SessionView::default();
        };
        SessionView {
            cart_count: session.cart.iter().map(|(_, q)| q).sum(),
            user: session.user.clone(),
            newsletter_dismissed: session.newsletter_dismissed,
        }
    }

    pub fn add_to_cart(
        &self,
        sid: &str,
        product: &'static Product,
        quantity: u32,
    ) -> Result<(), CartError> {
        let mut state = self.lock();
        let left = state.stock_left.get(product.slug).copied();
        let session = state.sessions.entry(sid.to_string()).or_default();
        let in_cart = session
            .cart
            .iter()
            .find(|(p, _)| p.slug == product.slug)
            .map_or(0, |(_, q)| *q);
        let wanted = in_cart.saturating_add(quantity);
        if wanted > MAX_QUANTITY {
            return Err(CartError::TooMany { in_cart });
        }
        if let Some(left) = left.filter(|left| wanted > *left) {
            return Err(CartError::NotEnoughStock { left });
        }
        match session
            .cart
            .iter_mut()
            .find(|(p, _)| p.slug == product.slug)
        {
            Some((_, q)) => *q = wanted,
            None => session.cart.push((product, quantity)),
        }
        Ok(())
    }

    pub fn remove_from_cart(&self, sid: &str, slug: &str) {
        if let Some(session) = self.lock().sessions.get_mut(sid) {
            session.cart.retain(|(p, _)| p.slug != slug);
        }
    }

    pub fn cart(&self, sid: &str) -> Vec<LineItem> {
        self.lock()
            .sessions
            .get(sid)
            .map(|s| line_items(&s.cart))
            .unwrap_or_default()
    }

    /// Turns the cart into an order and empties it; `None` when the cart is empty.
    pub fn place_order(&self, sid: &str) -> Option<Order> {
        let mut state = self.lock();
        let session = state.sessions.get_mut(sid)?;
        if session.cart.is_empty() {
            return None;
        }
        let items = line_items(&std::mem::take(&mut session.cart));
        let number = u32::try_from(state.orders.len())
            .map_or(u32::MAX, |placed| FIRST_ORDER.saturating_add(placed));
        let order = Order {
            number,
            session: sid.to_string(),
            total: items.iter().map(|i| i.line_total).sum(),
            items,
        };
        state.orders.push(order.clone());
        Some(order)
    }

    /// An order as its confirmation page shows it: only to the session that placed it.
    pub fn order(&self, sid: &str, number: u32) -> Option<Order> {
        self.lock()
            .orders
            .iter()
            .find(|o| o.number == number && o.session == sid)
            .cloned()
    }

    pub fn record_search(&self, query: &str) {
        self.lock().searches.push(query.to_string());
    }

    pub fn record_contact(&self, message: ContactMessage) {
        self.lock().contact_messages.push(message);
    }

    /// Records the attempt (never the password). A successful one moves the visit to a fresh
    /// session id, cart included, as real sites do against session fixation; returns that id.
    pub fn sign_in(&self, sid: &str, username: &str, success: bool) -> Option<String> {
        let mut state = self.lock();
        state.sign_ins.push(SignIn {
            username: username.to_string(),
            success,
        });
        if !success {
            return None;
        }
        let mut session = state.sessions.remove(sid).unwrap_or_default();
        session.user = Some(username.to_string());
        session.awaiting_code = None;
        let fresh = new_session(&mut state, &self.salt);
        state.sessions.insert(fresh.clone(), session);
        Some(fresh)
    }

    /// The password was right; the session now waits for `username`'s code.
    pub fn await_code(&self, sid: &str, username: &str) {
        let mut state = self.lock();
        state
            .sessions
            .entry(sid.to_string())
            .or_default()
            .awaiting_code = Some(username.to_string());
    }

    /// Whose code the session waits for.
    pub fn awaiting_code(&self, sid: &str) -> Option<String> {
        self.lock().sessions.get(sid)?.awaiting_code.clone()
    }

    pub fn sign_out(&self, sid: &str) {
        if let Some(session) = self.lock().sessions.get_mut(sid) {
            session.user = None;
        }
    }

    pub fn dismiss_newsletter(&self, sid: &str, choice: NewsletterChoice) {
        let mut state = self.lock();
        state
            .sessions
            .entry(sid.to_string())
            .or_default()
            .newsletter_dismissed = true;
        state.newsletter.push(NewsletterDismissal {
            session: sid.to_string(),
            choice,
        });
    }

    pub fn set_stock_left(&self, product: &'static Product, left: u32) {
        self.lock().stock_left.insert(product.slug, left);
    }

    pub fn stock_left(&self, product: &Product) -> Option<u32> {
        self.lock().stock_left.get(product.slug).copied()
    }

    pub fn orders(&self) -> Vec<Order> {
        self.lock().orders.clone()
    }

    pub fn contact_messages(&self) -> Vec<ContactMessage> {
        self.lock().contact_messages.clone()
    }

    pub fn carts(&self) -> BTreeMap<String, Vec<LineItem>> {
        self.lock()
            .sessions
            .iter()
            .map(|(sid, s)| (sid.clone(), line_items(&s.cart)))
            .collect()
    }

    pub fn searches(&self) -> Vec<String> {
        self.lock().searches.clone()
    }

    pub fn sign_ins(&self) -> Vec<SignIn> {
        self.lock().sign_ins.clone()
    }

    pub fn newsletter_dismissals(&self) -> Vec<NewsletterDismissal> {
        self.lock().newsletter.clone()
    }
}

fn new_session(state: &mut State, salt: &RandomState) -> String {
    state.sessions_opened += 1;
    let n = state.sessions_opened;
    let sid = format!("s{n}-{:016x}", salt.hash_one(n));
    state.sessions.insert(sid.clone(), Session::default());
    sid
}

fn line_items(cart: &[(&'static Product, u32)]) -> Vec<LineItem> {
    cart.iter()
        .map(|(p, quantity)| LineItem {
            slug: p.slug.to_string(),
            name: p.name.to_string(),
            quantity: *quantity,
            unit_price: p.price,
            line_total: p.price * *quantity,
        })
        .collect()
}
