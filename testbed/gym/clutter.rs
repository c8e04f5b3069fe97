//! What real sites put around a task, added to every page a task serves when the gym is asked
//! for it (`cargo bench --bench gym -- --clutter`): a header with the site's own search and
//! account links, a cookie banner fixed over the foot of the window until it is answered, and a
//! footer with a newsletter sign-up and columns of links. None of it is the task's: a run that
//! searches the site, subscribes or follows the footer's links sends its site nothing it asked
//! for, and the task's check judges it as before.

/// The header's additions: a second search box and the account's links.
const HEADER: &str = r#"<span class="site-tools"> <form role="search" action="site-search" method="get" style="display:inline"><input type="search" name="q" placeholder="Search this site" aria-label="Search this site"> <button>Search</button></form> <a href="account">My account</a> <a href="orders">Orders</a> <a href="help">Help</a></span>"#;

/// The cookie banner: over the bottom of the window until one of its buttons is pressed, then
/// gone for the rest of the task (remembered per task, as a site remembers it per visitor).
const BANNER: &str = r#"<div id="cookie-banner" role="region" aria-label="Cookie consent" style="position:fixed;left:0;right:0;bottom:0;padding:14px 16px;background:#111827;color:#fff;z-index:50"><p style="margin:0 0 8px">We use cookies to improve your experience and to measure traffic. You can accept all cookies or choose which to allow.</p><button type="button" data-consent="all">Accept all</button> <button type="button" data-consent="necessary">Only necessary</button> <a href="cookies" style="color:#fff">Cookie settings</a></div>
<script>(() => {
  const key = 'consent:' + location.pathname.split('/').slice(0, 3).join('/');
  const banner = document.getElementById('cookie-banner');
  if (localStorage.getItem(key)) { banner.remove(); return; }
  banner.querySelectorAll('button').forEach(b => b.addEventListener('click', () => {
    localStorage.setItem(key, b.dataset.consent);
    banner.remove();
  }));
})();</script>"#;

/// The footer's additions: a newsletter form with an email field, and link columns.
const FOOTER: &str = r#"<div class="site-footer" style="display:flex;gap:32px;padding:16px;border-top:1px solid #ddd"><form action="newsletter" method="post"><label>Get our newsletter <input type="email" name="newsletter_email" placeholder="Your email address"></label> <button>Subscribe</button></form><ul><li><a href="about">About us</a></li><li><a href="careers">Careers</a></li><li><a href="press">Press</a></li></ul><ul><li><a href="contact-us">Contact us</a></li><li><a href="privacy">Privacy policy</a></li><li><a href="terms">Terms of use</a></li></ul></div>"#;

/// `html` with the clutter added: in its header, before its footer's end, and the banner last
/// in its body. A page without a header or footer gets the parts it has room for.
pub fn around(html: &str) -> String {
    let mut out = html.replacen("</header>", &format!("{HEADER}</header>"), 1);
    out = out.replacen("</footer>", &format!("{FOOTER}</footer>"), 1);
    match out.rfind("</body>") {
        Some(at) => out.insert_str(at, BANNER),
        None => out.push_str(BANNER),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::around;

    #[test]
    fn the_clutter_goes_into_the_page_s_own_header_footer_and_body() {
        let page = "<html><body><header><strong>Site</strong></header><main><h1>T</h1></main>\
                    <footer><p>©</p></footer></body></html>";
        let out = around(page);
        let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("{s} missing"));
        assert!(at("Search this site") < at("</header>"));
        assert!(at("<main>") < at("Get our newsletter"));
        assert!(at("Get our newsletter") < at("</footer>"));
        assert!(at("</footer>") < at("cookie-banner"));
        assert!(at("cookie-banner") < at("</body>"));
        assert!(out.contains("<h1>T</h1>"));
    }
}
