//! The browser session behind a request: its `sid` cookie, made on the first visit, and the
//! responses that must carry that cookie back.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::header::{COOKIE, LOCATION, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use maud::Markup;

use super::pages::Chrome;
use super::state::SessionView;
use super::DemoShop;

const COOKIE_NAME: &str = "sid";

pub struct Visitor {
    pub sid: String,
    pub view: SessionView,
    /// A session id the browser does not have yet: a first visit, or a fresh id after signing in.
    cookie_to_set: Option<String>,
}

impl FromRequestParts<DemoShop> for Visitor {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, shop: &DemoShop) -> Result<Self, Infallible> {
        let cookie = sid_cookie(&parts.headers);
        let (sid, new) = shop.store().open_session(cookie);
        Ok(Visitor {
            view: shop.store().view(&sid),
            cookie_to_set: new.then(|| sid.clone()),
            sid,
        })
    }
}

/// The `sid` value of the `Cookie` header(s), if any.
fn sid_cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value)
}

impl Visitor {
    /// Re-reads the session after a change, for a page rendered in the same request.
    pub fn refresh(&mut self, shop: &DemoShop) {
        self.view = shop.store().view(&self.sid);
    }

    /// Moves this visit to another session id (after signing in).
    pub fn switch_session(&mut self, sid: String, shop: &DemoShop) {
        self.sid = sid.clone();
        self.cookie_to_set = Some(sid);
        self.refresh(shop);
    }

    /// What the header of every page shows about this visitor.
    pub fn chrome<'a>(&'a self, query: &'a str) -> Chrome<'a> {
        Chrome {
            cart_count: self.view.cart_count,
            user: self.view.user.as_deref(),
            query,
        }
    }

    pub fn page(&self, status: StatusCode, markup: Markup) -> Response {
        self.with_cookie((status, Html(markup.into_string())).into_response())
    }

    /// 303 See Other: the browser follows with a GET, so a reload never posts a form twice.
    pub fn see_other(&self, location: &str) -> Response {
        let mut response = StatusCode::SEE_OTHER.into_response();
        if let Ok(value) = HeaderValue::from_str(location) {
            response.headers_mut().insert(LOCATION, value);
        }
        self.with_cookie(response)
    }

    fn with_cookie(&self, mut response: Response) -> Response {
        if let Some(sid) = &self.cookie_to_set {
            let cookie = format!("{COOKIE_NAME}={sid}; Path=/shop; HttpOnly; SameSite=Lax");
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().append(SET_COOKIE, value);
            }
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sid_is_found_among_other_cookies() {
        let mut headers = HeaderMap::new();
        headers.append(COOKIE, HeaderValue::from_static("theme=dark; sid=s1-ab"));
        assert_eq!(sid_cookie(&headers), Some("s1-ab"));
        headers.clear();
        headers.append(COOKIE, HeaderValue::from_static("sidebar=1"));
        assert_eq!(sid_cookie(&headers), None);
    }
}
