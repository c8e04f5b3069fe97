//! The contact form, with the server's own validation: the browser's `required` is not the
//! only check, since an agent may well post what a person could not.

use maud::{html, Markup};
use serde::Deserialize;

use super::layout::{page, Chrome};
use crate::demo_shop::records::{ContactMessage, Topic};

/// The form as posted (and shown again when it has errors).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ContactForm {
    pub name: String,
    pub email: String,
    pub topic: String,
    pub message: String,
}

/// One message per field that failed; all `None` means the form is valid.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ContactErrors {
    pub name: Option<&'static str>,
    pub email: Option<&'static str>,
    pub topic: Option<&'static str>,
    pub message: Option<&'static str>,
}

impl ContactForm {
    /// The message to record, or what to fix.
    pub fn validate(&self) -> Result<ContactMessage, ContactErrors> {
        let name = self.name.trim();
        let email = self.email.trim();
        let message = self.message.trim();
        let topic = Topic::from_value(&self.topic);
        let errors = ContactErrors {
            name: name.is_empty().then_some("Enter your name."),
            email: if email.is_empty() {
                Some("Enter your email address.")
            } else if !looks_like_email(email) {
                Some("Enter an email address like name@example.org.")
            } else {
                None
            },
            topic: topic.is_none().then_some("Choose a topic."),
            message: message.is_empty().then_some("Write your message."),
        };
        match topic {
            Some(topic) if errors == ContactErrors::default() => Ok(ContactMessage {
                name: name.to_string(),
                email: email.to_string(),
                topic,
                message: message.to_string(),
            }),
            _ => Err(errors),
        }
    }
}

/// The shape `type=email` accepts, roughly: something, `@`, a domain with no spaces.
fn looks_like_email(email: &str) -> bool {
    email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty() && !domain.is_empty() && !email.contains(char::is_whitespace)
    })
}

pub fn contact(chrome: &Chrome<'_>, form: &ContactForm, errors: &ContactErrors) -> Markup {
    let any_error = *errors != ContactErrors::default();
    let selected = Topic::from_value(&form.topic).unwrap_or(Topic::OrderQuestion);
    let main = html! {
        h1 { "Contact us" }
        p { "Questions about an order or a return? Write to us and we will answer within a day." }
        @if any_error {
            p class="error" role="alert" { "Please correct the fields marked below." }
        }
        form method="post" action="/shop/contact" {
            div class="field" {
                label for="name" { "Name" }
                input id="name" type="text" name="name" autocomplete="name" required value=(form.name)
                    aria-invalid=[errors.name.map(|_| "true")] aria-describedby=[errors.name.map(|_| "name-error")];
                @if let Some(e) = errors.name { p class="error" id="name-error" { (e) } }
            }
            div class="field" {
                label for="email" { "Email" }
                input id="email" type="email" name="email" autocomplete="email" required value=(form.email)
                    aria-invalid=[errors.email.map(|_| "true")] aria-describedby=[errors.email.map(|_| "email-error")];
                @if let Some(e) = errors.email { p class="error" id="email-error" { (e) } }
            }
            div class="field" {
                label for="topic" { "Topic" }
                select id="topic" name="topic" {
                    @for t in Topic::ALL {
                        option value=(t.value()) selected[t == selected] { (t.label()) }
                    }
                }
                @if let Some(e) = errors.topic { p class="error" id="topic-error" { (e) } }
            }
            div class="field" {
                label for="message" { "Message" }
                textarea id="message" name="message" rows="5" required
                    aria-invalid=[errors.message.map(|_| "true")] aria-describedby=[errors.message.map(|_| "message-error")] {
                    (form.message)
                }
                @if let Some(e) = errors.message { p class="error" id="message-error" { (e) } }
            }
            button type="submit" { "Send message" }
        }
    };
    page(chrome, "Contact us", main, None)
}

pub fn contact_sent(chrome: &Chrome<'_>, message: &ContactMessage) -> Markup {
    let main = html! {
        h1 { "Message sent" }
        p { "Thanks, " (message.name) "! We will reply to " (message.email) "." }
        p { a href="/shop/" { "Back to the shop" } }
    };
    page(chrome, "Message sent", main, None)
}
