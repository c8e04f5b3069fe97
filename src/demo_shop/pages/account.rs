//! Signing in. The password field is never filled back in, whatever happens.

use maud::{html, Markup};
use serde::Deserialize;

use super::layout::{page, Chrome};

#[derive(Default, Deserialize)]
#[serde(default)]
pub struct LoginForm {
    pub username: String,
    pub password: String,
}

/// Keeps the password out of logs and panic messages.
impl std::fmt::Debug for LoginForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginForm")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

/// `username` refills the field after a failed attempt.
pub fn login(chrome: &Chrome<'_>, username: &str, failed: bool) -> Markup {
    let main = html! {
        h1 { "Sign in" }
        @if let Some(user) = chrome.user {
            p { "You are signed in as " (user) "." }
            p { a href="/shop/" { "Back to the shop" } }
        } @else {
            @if failed {
                p class="error" role="alert" { "Wrong username or password." }
            }
            form method="post" action="/shop/login" {
                div class="field" {
                    label for="username" { "Username" }
                    input id="username" type="text" name="username" autocomplete="username" required value=(username);
                }
                div class="field" {
                    label for="password" { "Password" }
                    input id="password" type="password" name="password" autocomplete="current-password" required;
                }
                button type="submit" { "Sign in" }
            }
        }
    };
    page(chrome, "Sign in", main, None)
}
