//! The shop's HTML, one file per page. Templates are maud's `html!`, which escapes every
//! spliced value: product names, queries and contact messages all come from the request.

mod account;
mod cart;
mod contact;
mod layout;
mod listing;
mod newsletter;
mod product;

pub use account::{login, signin_code, signin_password, signin_username, LoginForm};
pub use cart::{cart, order_placed};
pub use contact::{contact, contact_sent, ContactErrors, ContactForm};
pub use layout::{not_found, Chrome};
pub use listing::{home, search};
pub use newsletter::NewsletterModal;
pub use product::{buy_box, product, BuyBox};
