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

/// Step 1 of the two-step sign-in: the username alone. `unknown`: the name just refused.
pub fn signin_username(chrome: &Chrome<'_>, unknown: Option<&str>) -> Markup {
    let main = html! {
        h1 { "Sign in" }
        p { "Step 1 of 2" }
        @if let Some(name) = unknown {
            p class="error" role="alert" { "There is no account for " (name) "." }
        }
        form method="post" action="/shop/signin" {
            div class="field" {
                label for="identifier" { "Username or email" }
                input id="identifier" type="text" name="username" autocomplete="username" required
                    value=(unknown.unwrap_or_default());
            }
            button type="submit" { "Next" }
        }
    };
    page(chrome, "Sign in", main, None)
}

/// Step 2: the password, for the username of step 1 (kept in a hidden field).
pub fn signin_password(chrome: &Chrome<'_>, username: &str, failed: bool) -> Markup {
    let main = html! {
        h1 { "Welcome back, " (username) }
        p { "Step 2 of 2" }
        @if failed {
            p class="error" role="alert" { "Wrong password." }
        }
        form method="post" action="/shop/signin/password" {
            input type="hidden" name="username" value=(username);
            div class="field" {
                label for="current-password" { "Password" }
                input id="current-password" type="password" name="password"
                    autocomplete="current-password" required;
            }
            button type="submit" { "Sign in" }
        }
    };
    page(chrome, "Sign in", main, None)
}

/// The TOTP step, for accounts that have one.
pub fn signin_code(chrome: &Chrome<'_>, failed: bool) -> Markup {
    let main = html! {
        h1 { "Two-step verification" }
        p { "Open your authenticator app and enter the code it shows for the Demo Shop." }
        @if failed {
            p class="error" role="alert" { "That code is not right. Try the current one." }
        }
        form method="post" action="/shop/signin/code" {
            div class="field" {
                label for="otp" { "6-digit code" }
                input id="otp" type="text" name="code" inputmode="numeric"
                    autocomplete="one-time-code" maxlength="6" required;
            }
            button type="submit" { "Verify" }
        }
    };
    page(chrome, "Two-step verification", main, None)
}
