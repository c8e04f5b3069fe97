//! The newsletter dialog: a real overlay over the whole viewport, so that what is behind it
//! cannot be clicked, which is what an agent must notice and deal with.

use maud::{html, Markup};

pub struct NewsletterModal<'a> {
    /// Where its buttons return to (the page it covers).
    pub back: &'a str,
    pub error: Option<&'a str>,
}

impl NewsletterModal<'_> {
    pub fn render(&self) -> Markup {
        html! {
            div class="overlay" id="newsletter" {
                div class="dialog" role="dialog" aria-modal="true" aria-labelledby="newsletter-title" {
                    h2 id="newsletter-title" { "Join our newsletter" }
                    p { "New socks, hats and offers once a month. No spam." }
                    @if let Some(error) = self.error {
                        p class="error" role="alert" { (error) }
                    }
                    form method="post" action="/shop/newsletter" {
                        input type="hidden" name="back" value=(self.back);
                        div class="field" {
                            label for="newsletter-email" { "Email" }
                            input id="newsletter-email" type="email" name="email" autocomplete="email" required;
                        }
                        div class="actions" {
                            button type="submit" name="choice" value="subscribe" { "Subscribe" }
                            button type="submit" name="choice" value="decline" class="secondary" formnovalidate { "No thanks" }
                        }
                    }
                }
            }
        }
    }
}
