//! The shop through its router, without a browser: each request goes through `oneshot`, and a
//! small client carries the `sid` cookie the way a browser would.

use std::time::Duration;

use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, COOKIE, LOCATION, SET_COOKIE};
use axum::http::{Request, StatusCode};
use axum::Router;
use tower::ServiceExt;

use super::*;

struct Reply {
    status: StatusCode,
    location: Option<String>,
    body: String,
}

/// One browser: keeps the session cookie between requests.
struct Client {
    router: Router,
    sid: Option<String>,
}

impl Client {
    fn new(shop: &DemoShop) -> Self {
        Self {
            router: shop.router(),
            sid: None,
        }
    }

    async fn get(&mut self, uri: &str) -> Reply {
        self.send(Request::get(uri), Body::empty()).await
    }

    async fn post(&mut self, uri: &str, fields: &[(&str, &str)]) -> Reply {
        let body = fields
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let request = Request::post(uri).header(CONTENT_TYPE, "application/x-www-form-urlencoded");
        self.send(request, Body::from(body)).await
    }

    async fn send(&mut self, mut request: axum::http::request::Builder, body: Body) -> Reply {
        if let Some(sid) = &self.sid {
            request = request.header(COOKIE, format!("sid={sid}"));
        }
        let response = self
            .router
            .clone()
            .oneshot(request.body(body).expect("a valid request"))
            .await
            .expect("the router is infallible");
        if let Some(cookie) = response.headers().get(SET_COOKIE) {
            let cookie = cookie.to_str().expect("an ASCII cookie");
            let value = cookie
                .strip_prefix("sid=")
                .and_then(|rest| rest.split(';').next())
                .expect("the session cookie");
            assert!(cookie.contains("Path=/shop"), "{cookie}");
            self.sid = Some(value.to_string());
        }
        let status = response.status();
        let location = response
            .headers()
            .get(LOCATION)
            .map(|l| l.to_str().expect("ASCII location").to_string());
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the body");
        Reply {
            status,
            location,
            body: String::from_utf8(bytes.to_vec()).expect("UTF-8 pages"),
        }
    }
}

fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b' ' => "+".to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Where `needle` is in `haystack`, for order checks; fails the test when it is not there.
fn at(haystack: &str, needle: &str) -> usize {
    haystack
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} is not in the page:\n{haystack}"))
}

fn shop() -> DemoShop {
    DemoShop::new(ShopOptions::default())
}

#[tokio::test]
async fn every_page_has_the_header_and_a_session_cookie() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let home = client.get("/shop/").await;
    assert_eq!(home.status, StatusCode::OK);
    assert!(client.sid.is_some(), "the first visit sets the sid cookie");
    for needle in [
        r#"<a class="brand" href="/shop/">Demo Shop</a>"#,
        r#"<form class="search" role="search" method="get" action="/shop/search">"#,
        r#"<input type="search" name="q" aria-label="Search products" value="">"#,
        r#"<a href="/shop/contact">Contact</a>"#,
        r#"<a href="/shop/cart">Cart (0)</a>"#,
        r#"<a href="/shop/login">Sign in</a>"#,
    ] {
        at(&home.body, needle);
    }
    let sid = client.sid.clone();
    client.get("/shop/contact").await;
    assert_eq!(client.sid, sid, "the session stays the same");
    assert_eq!(
        client.get("/shop").await.location.as_deref(),
        Some("/shop/")
    );
    let missing = client.get("/shop/no/such/page").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    at(&missing.body, "There is no such page in the shop.");
}

#[tokio::test]
async fn search_finds_by_name_and_description_and_is_recorded() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let found = client.get("/shop/search?q=Wool+Socks").await;
    assert_eq!(found.status, StatusCode::OK);
    at(&found.body, "<h1>Results for Wool Socks</h1>");
    at(
        &found.body,
        r#"<a href="/shop/product/wool-socks">Wool socks</a>"#,
    );
    at(&found.body, "12.99 EUR");
    at(&found.body, "1 product");
    assert!(!found.body.contains("Cotton socks"), "{}", found.body);
    at(
        &found.body,
        r#"aria-label="Search products" value="Wool Socks""#,
    );

    let by_description = client.get("/shop/search?q=alpaca").await;
    at(&by_description.body, "Chunky scarf");

    let none = client.get("/shop/search?q=%3Cb%3Eumbrella").await;
    at(
        &none.body,
        "No products match &quot;&lt;b&gt;umbrella&quot;.",
    );
    assert!(!none.body.contains("<b>umbrella"), "the query is escaped");

    client.get("/shop/search?q=++").await;
    assert_eq!(shop.searches(), ["Wool Socks", "alpaca", "<b>umbrella"]);
}

#[tokio::test]
async fn home_filters_by_category_and_sorts() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let all = client.get("/shop/").await;
    at(&all.body, "<h1>All products — featured</h1>");
    at(&all.body, "15 products");
    for label in ["Socks", "Hats", "Gloves", "Scarves"] {
        at(&all.body, &format!(">{label}</a>"));
    }
    at(&all.body, r#"<label for="sort">Sort by</label>"#);
    at(&all.body, r#"onchange="this.form.requestSubmit()""#);
    at(&all.body, r#"<button type="submit">Apply</button>"#);

    let socks = client.get("/shop/?category=socks&sort=price-asc").await;
    assert_eq!(socks.status, StatusCode::OK);
    let body = &socks.body;
    at(body, "<h1>Socks — price: low to high</h1>");
    at(
        body,
        r#"<option value="price-asc" selected>Price: low to high</option>"#,
    );
    at(
        body,
        r#"<input type="hidden" name="category" value="socks">"#,
    );
    let order = [
        at(body, "Rainbow socks"),
        at(body, "Cotton socks"),
        at(body, ">Wool socks<"),
        at(body, "Hiking socks"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(!body.contains("Sun hat"));
    // Category links keep the order.
    at(body, r#"href="/shop/?category=hats&amp;sort=price-asc""#);

    let hats = client.get("/shop/?category=hats&sort=price-desc").await;
    at(&hats.body, "<h1>Hats — price: high to low</h1>");
    assert!(at(&hats.body, "Flat cap") < at(&hats.body, "Sun hat"));

    let unknown = client.get("/shop/?category=shoes").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    at(
        &unknown.body,
        "There is no category named &quot;shoes&quot;.",
    );
}

#[tokio::test]
async fn the_cart_adds_removes_and_totals() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let product = client.get("/shop/product/wool-socks").await;
    at(&product.body, "<h1>Wool socks</h1>");
    at(&product.body, r#"<label for="quantity">Quantity</label>"#);
    at(&product.body, r#"name="quantity" value="1""#);
    at(
        &product.body,
        r#"<button type="submit">Add to cart</button>"#,
    );
    assert!(!product.body.contains("<script>"), "no hooks, no script");

    let added = client
        .post(
            "/shop/cart/add",
            &[("product", "wool-socks"), ("quantity", "2")],
        )
        .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER);
    assert_eq!(added.location.as_deref(), Some("/shop/cart"));
    client
        .post(
            "/shop/cart/add",
            &[("product", "cotton-socks"), ("quantity", "1")],
        )
        .await;
    let cart = client.get("/shop/cart").await;
    at(&cart.body, "Cart (3)");
    at(&cart.body, "<td>25.98 EUR</td>");
    at(&cart.body, "Total: 33.48 EUR");
    at(
        &cart.body,
        r#"aria-label="Remove Wool socks">Remove</button>"#,
    );
    at(&cart.body, "<button type=\"submit\">Place order</button>");

    let removed = client
        .post("/shop/cart/remove", &[("product", "wool-socks")])
        .await;
    assert_eq!(removed.location.as_deref(), Some("/shop/cart"));
    let cart = client.get("/shop/cart").await;
    at(&cart.body, "Total: 7.50 EUR");
    assert!(!cart.body.contains("Wool socks"));

    let sid = client.sid.clone().expect("a session");
    let carts = shop.carts();
    let mine = &carts[&sid];
    assert_eq!(mine.len(), 1);
    assert_eq!(
        (mine[0].slug.as_str(), mine[0].quantity, mine[0].line_total),
        ("cotton-socks", 1, Cents(750))
    );

    // Another browser has its own cart.
    let mut other = Client::new(&shop);
    at(&other.get("/shop/cart").await.body, "Your cart is empty.");
}

#[tokio::test]
async fn bad_quantities_and_products_are_refused_with_the_reason() {
    let shop = shop();
    let mut client = Client::new(&shop);
    for quantity in ["0", "100", "two", ""] {
        let reply = client
            .post(
                "/shop/cart/add",
                &[("product", "wool-socks"), ("quantity", quantity)],
            )
            .await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{quantity}");
        at(&reply.body, "Quantity must be a whole number from 1 to 99.");
    }
    client
        .post(
            "/shop/cart/add",
            &[("product", "wool-socks"), ("quantity", "98")],
        )
        .await;
    let too_many = client
        .post(
            "/shop/cart/add",
            &[("product", "wool-socks"), ("quantity", "2")],
        )
        .await;
    at(&too_many.body, "Your cart already holds 98");
    let unknown = client
        .post(
            "/shop/cart/add",
            &[("product", "umbrella"), ("quantity", "1")],
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert_eq!(
        client.get("/shop/product/umbrella").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(shop.cart_items()[0].quantity, 98);
}

#[tokio::test]
async fn placing_an_order_records_it_and_empties_the_cart() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let nothing = client.post("/shop/order", &[]).await;
    assert_eq!(nothing.location.as_deref(), Some("/shop/cart"));
    assert!(shop.orders().is_empty(), "an empty cart orders nothing");

    client
        .post(
            "/shop/cart/add",
            &[("product", "wool-socks"), ("quantity", "2")],
        )
        .await;
    let placed = client.post("/shop/order", &[]).await;
    assert_eq!(placed.status, StatusCode::SEE_OTHER);
    assert_eq!(placed.location.as_deref(), Some("/shop/orders/1001"));
    let confirmation = client.get("/shop/orders/1001").await;
    at(&confirmation.body, "<h1>Thank you!</h1>");
    at(
        &confirmation.body,
        "Order #1001 is placed. Total: 25.98 EUR",
    );
    at(&confirmation.body, "Cart (0)");
    at(&client.get("/shop/cart").await.body, "Your cart is empty.");

    let orders = shop.orders();
    assert_eq!(orders.len(), 1);
    assert_eq!(orders[0].number, 1001);
    assert_eq!(orders[0].total, Cents(2598));
    assert_eq!(orders[0].items.len(), 1);
    assert_eq!(
        (
            orders[0].items[0].name.as_str(),
            orders[0].items[0].quantity
        ),
        ("Wool socks", 2)
    );
    assert!(shop.cart_items().is_empty());

    let mut stranger = Client::new(&shop);
    assert_eq!(
        stranger.get("/shop/orders/1001").await.status,
        StatusCode::NOT_FOUND,
        "only the buyer sees the order"
    );
    client
        .post(
            "/shop/cart/add",
            &[("product", "silk-scarf"), ("quantity", "1")],
        )
        .await;
    let second = client.post("/shop/order", &[]).await;
    assert_eq!(second.location.as_deref(), Some("/shop/orders/1002"));
}

#[tokio::test]
async fn the_contact_form_is_validated_on_the_server_and_recorded() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let form = client.get("/shop/contact").await;
    for needle in [
        r#"<label for="name">Name</label>"#,
        r#"<input id="email" type="email" name="email" autocomplete="email" required"#,
        r#"<option value="order" selected>Order question</option>"#,
        r#"<option value="returns">Returns</option>"#,
        r#"<option value="other">Other</option>"#,
        r#"<textarea id="message" name="message" rows="5" required"#,
        r#"<button type="submit">Send message</button>"#,
    ] {
        at(&form.body, needle);
    }

    let missing = client
        .post(
            "/shop/contact",
            &[
                ("name", " "),
                ("email", "ana"),
                ("topic", "returns"),
                ("message", ""),
            ],
        )
        .await;
    assert_eq!(missing.status, StatusCode::UNPROCESSABLE_ENTITY);
    at(&missing.body, "Please correct the fields marked below.");
    at(&missing.body, "Enter your name.");
    at(
        &missing.body,
        "Enter an email address like name@example.org.",
    );
    at(&missing.body, "Write your message.");
    at(
        &missing.body,
        r#"value="ana" aria-invalid="true" aria-describedby="email-error""#,
    );
    at(
        &missing.body,
        r#"<option value="returns" selected>Returns</option>"#,
    );
    assert!(shop.contact_messages().is_empty());

    let sent = client
        .post(
            "/shop/contact",
            &[
                ("name", "Ana"),
                ("email", "ana@example.org"),
                ("topic", "returns"),
                ("message", "The socks are too small."),
            ],
        )
        .await;
    assert_eq!(sent.status, StatusCode::OK);
    at(&sent.body, "Thanks, Ana! We will reply to ana@example.org.");
    assert_eq!(
        shop.contact_messages(),
        [ContactMessage {
            name: "Ana".into(),
            email: "ana@example.org".into(),
            topic: Topic::Returns,
            message: "The socks are too small.".into(),
        }]
    );
}

#[tokio::test]
async fn signing_in_records_the_attempt_but_never_the_password() {
    let shop = DemoShop::new(ShopOptions::default().account(Account::new("alice", "s3cret-horse")));
    let mut client = Client::new(&shop);
    let form = client.get("/shop/login").await;
    at(&form.body, r#"<label for="username">Username</label>"#);
    at(
        &form.body,
        r#"<input id="password" type="password" name="password""#,
    );
    at(&form.body, r#"<button type="submit">Sign in</button>"#);
    client
        .post(
            "/shop/cart/add",
            &[("product", "flat-cap"), ("quantity", "1")],
        )
        .await;
    let before = client.sid.clone();

    let wrong = client
        .post(
            "/shop/login",
            &[("username", "alice"), ("password", "wrong-horse")],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    at(&wrong.body, "Wrong username or password.");
    at(
        &wrong.body,
        r#"name="username" autocomplete="username" required value="alice""#,
    );
    assert!(
        !wrong.body.contains("wrong-horse"),
        "the password is not echoed"
    );

    let right = client
        .post(
            "/shop/login",
            &[("username", "alice"), ("password", "s3cret-horse")],
        )
        .await;
    assert_eq!(right.status, StatusCode::SEE_OTHER);
    assert_eq!(right.location.as_deref(), Some("/shop/"));
    assert_ne!(client.sid, before, "signing in starts a new session id");
    let home = client.get("/shop/").await;
    at(&home.body, "Signed in as alice");
    at(&home.body, "Sign out</button>");
    at(&home.body, "Cart (1)");
    assert!(!home.body.contains(">Sign in</a>"));

    assert_eq!(
        shop.sign_ins(),
        [
            SignIn {
                username: "alice".into(),
                success: false
            },
            SignIn {
                username: "alice".into(),
                success: true
            },
        ]
    );
    let everything = format!(
        "{:?} {:?} {:?}",
        shop.sign_ins(),
        shop.options(),
        shop.carts()
    );
    assert!(!everything.contains("horse"), "{everything}");

    let out = client.post("/shop/logout", &[]).await;
    assert_eq!(out.location.as_deref(), Some("/shop/"));
    at(&client.get("/shop/").await.body, ">Sign in</a>");
}

#[tokio::test]
async fn the_two_step_sign_in_asks_the_username_then_the_password_then_a_totp_code() {
    const SEED: &str = "JBSWY3DPEHPK3PXP";
    let account = Account::new("alice", "s3cret-horse").with_totp(SEED);
    let shop = DemoShop::new(ShopOptions::default().account(account));
    let mut client = Client::new(&shop);
    let first = client.get("/shop/signin").await;
    at(&first.body, "Step 1 of 2");
    at(&first.body, r#"<button type="submit">Next</button>"#);
    let unknown = client
        .post("/shop/signin", &[("username", "mallory")])
        .await;
    assert_eq!(unknown.status, StatusCode::UNAUTHORIZED);
    at(&unknown.body, "There is no account for mallory.");

    let second = client.post("/shop/signin", &[("username", "alice")]).await;
    at(&second.body, "Welcome back, alice");
    at(&second.body, r#"type="password" name="password""#);
    let wrong = client
        .post(
            "/shop/signin/password",
            &[("username", "alice"), ("password", "wrong")],
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    at(&wrong.body, "Wrong password.");

    // The code page is only for a session that passed the password.
    let early = client.get("/shop/signin/code").await;
    assert_eq!(early.location.as_deref(), Some("/shop/signin"));
    let right = client
        .post(
            "/shop/signin/password",
            &[("username", "alice"), ("password", "s3cret-horse")],
        )
        .await;
    assert_eq!(right.location.as_deref(), Some("/shop/signin/code"));
    let code_page = client.get("/shop/signin/code").await;
    at(&code_page.body, r#"autocomplete="one-time-code""#);
    let bad = client
        .post("/shop/signin/code", &[("code", "000000")])
        .await;
    assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
    at(&bad.body, "That code is not right.");
    let code = crate::demo_shop::totp::current(SEED);
    let done = client.post("/shop/signin/code", &[("code", &code)]).await;
    assert_eq!(done.location.as_deref(), Some("/shop/"));
    at(&client.get("/shop/").await.body, "Signed in as alice");
    let successes: Vec<bool> = shop.sign_ins().iter().map(|s| s.success).collect();
    assert_eq!(successes, [false, false, true]);
    assert!(!format!("{:?}", shop.options()).contains(SEED));
}

#[tokio::test]
async fn without_a_seed_the_two_step_sign_in_ends_at_the_password() {
    let shop = DemoShop::new(ShopOptions::default());
    let mut client = Client::new(&shop);
    client.post("/shop/signin", &[("username", "alice")]).await;
    let done = client
        .post(
            "/shop/signin/password",
            &[("username", "alice"), ("password", "correct horse")],
        )
        .await;
    assert_eq!(done.location.as_deref(), Some("/shop/"));
    at(&client.get("/shop/").await.body, "Signed in as alice");
}

#[tokio::test]
async fn the_newsletter_dialog_covers_the_home_page_until_dismissed() {
    assert!(
        !Client::new(&shop())
            .get("/shop/")
            .await
            .body
            .contains("Join our newsletter"),
        "off by default"
    );

    let shop = DemoShop::new(ShopOptions::default().newsletter_modal(true));
    let mut client = Client::new(&shop);
    let home = client.get("/shop/?category=hats").await;
    at(&home.body, r#"role="dialog" aria-modal="true""#);
    at(&home.body, "Join our newsletter");
    at(&home.body, r#"name="back" value="/shop/?category=hats""#);
    at(&home.body, "Subscribe</button>");
    at(&home.body, "No thanks</button>");
    assert!(
        at(&home.body, "<h1>") < at(&home.body, r#"class="overlay""#),
        "the overlay comes after the page, so it is painted over it"
    );

    let empty = client
        .post(
            "/shop/newsletter",
            &[
                ("choice", "subscribe"),
                ("email", ""),
                ("back", "/shop/?category=hats"),
            ],
        )
        .await;
    assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY);
    at(&empty.body, "Enter your email address to subscribe.");
    at(&empty.body, "<h1>Hats — featured</h1>");
    assert!(shop.newsletter_dismissals().is_empty());

    let declined = client
        .post(
            "/shop/newsletter",
            &[
                ("choice", "decline"),
                ("email", ""),
                ("back", "/shop/?category=hats"),
            ],
        )
        .await;
    assert_eq!(declined.location.as_deref(), Some("/shop/?category=hats"));
    assert!(!client
        .get("/shop/")
        .await
        .body
        .contains("Join our newsletter"));

    let mut other = Client::new(&shop);
    at(&other.get("/shop/").await.body, "Join our newsletter");
    let subscribed = other
        .post(
            "/shop/newsletter",
            &[
                ("choice", "subscribe"),
                ("email", "bo@example.org"),
                ("back", "https://elsewhere.example/"),
            ],
        )
        .await;
    assert_eq!(
        subscribed.location.as_deref(),
        Some("/shop/"),
        "never back out of the shop"
    );

    let choices: Vec<_> = shop
        .newsletter_dismissals()
        .into_iter()
        .map(|d| d.choice)
        .collect();
    assert_eq!(
        choices,
        [
            NewsletterChoice::Declined,
            NewsletterChoice::Subscribed {
                email: "bo@example.org".into()
            }
        ]
    );
}

#[tokio::test]
async fn test_hooks_are_off_unless_asked_for() {
    let shop = shop();
    let mut client = Client::new(&shop);
    let reply = client
        .get("/shop/_test/restock?product=wool-socks&left=3")
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    at(&reply.body, "test hooks are off");
    assert_eq!(
        client
            .get("/shop/api/stock-events?product=wool-socks")
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_restock_with_no_page_listening_times_out_with_the_reason() {
    let shop = DemoShop::new(
        ShopOptions::default()
            .test_hooks(true)
            .hook_wait(Duration::from_millis(50)),
    );
    let mut client = Client::new(&shop);
    let started = std::time::Instant::now();
    let reply = client
        .get("/shop/_test/restock?product=wool-socks&left=3")
        .await;
    assert_eq!(reply.status, StatusCode::GATEWAY_TIMEOUT);
    at(
        &reply.body,
        "restock of wool-socks: waited 50ms, but no product page listened for stock events \
         (open /shop/product/wool-socks in a tab first)",
    );
    assert!(started.elapsed() >= Duration::from_millis(50));

    let bad = client
        .get("/shop/_test/restock?product=wool-socks&left=many")
        .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    at(&bad.body, "left=\"many\" is not a number of items");
    let unknown = client
        .get("/shop/_test/restock?product=umbrella&left=1")
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

/// The page's side of the protocol played by hand: long-poll, receive, acknowledge.
#[tokio::test]
async fn a_restock_waits_for_the_page_to_rerender_and_acknowledge() {
    let shop = DemoShop::new(ShopOptions::default().test_hooks(true));
    let mut page = Client::new(&shop);
    let product = page.get("/shop/product/wool-socks").await;
    at(&product.body, r#"data-product="wool-socks" data-seq="0""#);
    at(&product.body, "/shop/api/stock-events?");

    let mut poller = Client::new(&shop);
    let poll = tokio::spawn(async move {
        poller
            .get("/shop/api/stock-events?product=wool-socks&after=0")
            .await
    });
    let mut tester = Client::new(&shop);
    let restock = tokio::spawn(async move {
        tester
            .get("/shop/_test/restock?product=wool-socks&left=3")
            .await
    });

    let event = poll.await.expect("the poll");
    assert_eq!(event.status, StatusCode::OK);
    let event: serde_json::Value = serde_json::from_str(&event.body).expect("JSON");
    assert_eq!(event["seq"], 1);
    assert_eq!(event["left"], 3);
    let html = event["html"].as_str().expect("the buy box");
    at(html, r#"id="buy-box""#);
    at(html, r#"data-seq="1""#);
    at(html, "Add to cart (3 left)</button>");
    assert!(
        !restock.is_finished(),
        "the restock waits for the acknowledgement"
    );

    let unknown = page.post("/shop/api/stock-ack", &[("seq", "7")]).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST);
    let ack = page.post("/shop/api/stock-ack", &[("seq", "1")]).await;
    assert_eq!(ack.status, StatusCode::NO_CONTENT);
    let done = restock.await.expect("the restock");
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    at(&done.body, "restocked wool-socks: 3 left");

    // A page loaded now shows the stock and starts after the event.
    let reloaded = page.get("/shop/product/wool-socks").await;
    at(&reloaded.body, "Add to cart (3 left)");
    at(&reloaded.body, r#"data-seq="1""#);
    let too_many = page
        .post(
            "/shop/cart/add",
            &[("product", "wool-socks"), ("quantity", "4")],
        )
        .await;
    at(&too_many.body, "Only 3 left.");
}

#[tokio::test]
async fn a_page_that_never_acknowledges_times_out_with_the_reason() {
    let shop = DemoShop::new(
        ShopOptions::default()
            .test_hooks(true)
            .hook_wait(Duration::from_millis(200)),
    );
    let mut poller = Client::new(&shop);
    let poll = tokio::spawn(async move {
        poller
            .get("/shop/api/stock-events?product=hiking-socks")
            .await
    });
    let reply = Client::new(&shop)
        .get("/shop/_test/restock?product=hiking-socks&left=0")
        .await;
    assert_eq!(reply.status, StatusCode::GATEWAY_TIMEOUT);
    at(
        &reply.body,
        "waited 200ms, but the product page got stock event 1 and did not acknowledge re-rendering its buy box",
    );
    let event = poll.await.expect("the poll");
    at(&event.body, "Sold out");
}
