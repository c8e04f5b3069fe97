//! Values found by where they sit rather than by their form: an entity's property under the
//! table column or after the label that names it ("Phone: …"), the least or most of a list's
//! prices with what each belongs to, and every thing of a kind a list links to.

use std::cmp::Ordering;

use itinero_shared::observation::DomNode;

use super::answer;
use super::goal::{AnswerKind, Extreme};
use super::page::{same_line, Element, Kind, Page, Text};
use super::words;

/// A value and the page's words around it.
pub type Found = (String, String);

/// The names of the page's links that `keep` takes, in the page's order, each once.
fn link_names(page: &Page, keep: impl Fn(&Element, &str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in &page.elements {
        let Some(name) = e.labels.first().map(|n| n.trim()) else {
            continue;
        };
        if e.kind == Kind::Press
            && e.node.tag == "a"
            && !name.is_empty()
            && keep(e, name)
            && !out.iter().any(|o| o == name)
        {
            out.push(name.to_owned());
        }
    }
    out
}

/// The names of the page's links to things of `kind` ("Sun hat", "Bobble hat" for "hats"), in
/// the page's order: links whose name holds the kind's word and more (the category's own
/// "Hats" link is not one of its things).
pub fn of_kind(page: &Page, kind: &str) -> Vec<String> {
    let size = words::words(kind).len();
    link_names(page, |_, name| {
        words::contains(name, kind) && words::words(name).len() > size && name.len() <= 60
    })
}

/// The names of the links of a list whose every entry shows a price (a shop's category page),
/// in the page's order: the links with a price among the next three texts after them, before
/// the next thing to press or fill (a menu's links side by side are not priced by the first
/// entry after them).
pub fn priced(page: &Page) -> Vec<String> {
    let price = |text: &str| !answer::values(text, AnswerKind::Price).is_empty();
    link_names(page, |e, name| {
        // Elements are in reading order: the first after `e` is the next.
        let next = page
            .elements
            .iter()
            .find(|x| x.order > e.order)
            .map_or(usize::MAX, |x| x.order);
        !price(name)
            && page
                .texts_after(e.order, 3)
                .take_while(|t| t.order < next)
                .any(|t| price(t.text))
    })
}

/// Whether a label names the attribute: either holds all the other's words ("Office city" and
/// "city", "Email" and "email address").
fn names(label: &str, attribute: &str) -> bool {
    words::contains(label, attribute) || words::contains(attribute, label)
}

fn centre_x(n: &DomNode) -> f64 {
    n.rect.x + n.rect.width / 2.0
}

/// The attribute's value for each place the entity is named (`anchors`): in the cell of the
/// entity's row that sits under the column header of its name, else after a label of its name
/// within the entity's next few texts.
pub fn by_attribute(page: &Page, anchors: &[(usize, &DomNode)], attribute: &str) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for (at, node) in anchors {
        if let Some(found) =
            in_column(page, node, attribute).or_else(|| labelled(page, *at, attribute))
        {
            if !out.iter().any(|o| o.0 == found.0) {
                out.push(found);
            }
        }
    }
    out
}

/// "Phone: +44 20 …" within the few texts after the entity's name (further on, it is more
/// likely the next record's).
fn labelled(page: &Page, at: usize, attribute: &str) -> Option<Found> {
    let after: Vec<&Text> = page.texts_after(at, 6).collect();
    for (i, t) in after.iter().enumerate() {
        let Some((label, rest)) = t.text.split_once(':') else {
            continue;
        };
        if label.split_whitespace().count() > 4 || !names(label, attribute) {
            continue;
        }
        let value = match rest.trim() {
            "" => after.get(i + 1)?.text.trim(),
            v => v,
        };
        return Some((value.to_owned(), format!("{}: {value}", label.trim())));
    }
    None
}

/// The cell on the entity's line whose middle is nearest the middle of the header above that
/// names the attribute.
fn in_column(page: &Page, anchor: &DomNode, attribute: &str) -> Option<Found> {
    let header = page
        .texts
        .iter()
        .filter(|t| {
            t.node.rect.y + t.node.rect.height <= anchor.rect.y + 1.0
                && t.text.split_whitespace().count() <= 4
                && names(t.text, attribute)
        })
        .max_by(|a, b| {
            words::similarity(attribute, a.text)
                .total_cmp(&words::similarity(attribute, b.text))
                .then(a.node.rect.y.total_cmp(&b.node.rect.y))
        })?;
    let cell = page
        .texts
        .iter()
        .filter(|t| !std::ptr::eq(t.node, anchor) && same_line(t.node, anchor))
        .min_by(|a, b| {
            let d = |t: &Text| (centre_x(t.node) - centre_x(header.node)).abs();
            d(a).total_cmp(&d(b))
        })?;
    // A cell further from the header's middle than the header is wide is in another column.
    let off = (centre_x(cell.node) - centre_x(header.node)).abs();
    if off > header.node.rect.width.max(cell.node.rect.width) {
        return None;
    }
    let value = cell.text.trim().to_owned();
    Some((value.clone(), format!("{}: {value}", header.text.trim())))
}

/// Words for "any thing of the list": "Which item is the cheapest?" asks about all of them.
const ANY_THING: &[&str] = &[
    "item", "product", "thing", "one", "option", "offer", "listing", "article", "",
];

/// Whether `thing` is any thing of the list ("item", "product"), not a kind of it.
pub fn is_any_thing(thing: &str) -> bool {
    ANY_THING.contains(&words::canonical(thing).as_str())
}

/// Labels beside a price that say what it is, not what it belongs to.
const PRICE_WORDS: &[&str] = &[
    "price", "cost", "now", "only", "from", "was", "each", "per", "unit", "sale",
];

/// Lines that are not things for sale.
const NOT_THINGS: &[&str] = &[
    "total", "subtotal", "shipping", "delivery", "tax", "vat", "discount",
];

/// A price in cents (or the currency's hundredth), whatever its separators.
fn amount(price: &str) -> Option<u64> {
    let digits: String = price
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == '.' || *c == ',')
        .collect();
    // The last separator followed by two digits is the decimal point.
    let (whole, cents) = match digits.rfind(['.', ',']) {
        Some(i) if digits.len() - i == 3 => (&digits[..i], &digits[i + 1..]),
        _ => (digits.as_str(), "00"),
    };
    let whole: String = whole.chars().filter(char::is_ascii_digit).collect();
    Some(whole.parse::<u64>().ok()? * 100 + cents.parse::<u64>().ok()?)
}

/// What a price at text `i` belongs to: the words before it in its own text, else the nearest
/// text before it on its line, else within the two texts before it (a card's title).
fn owner<'a>(page: &Page<'a>, i: usize, price: &str) -> Option<String> {
    let plain = |s: &str| -> Option<String> {
        let s = s
            .trim()
            .trim_end_matches([':', '—', '-', '–', '·', '|'])
            .trim();
        let w = words::words(s);
        let meaningful = w.iter().any(|w| w.chars().any(char::is_alphabetic))
            && !w.iter().all(|w| PRICE_WORDS.contains(&w.as_str()));
        meaningful.then(|| s.to_owned())
    };
    let t = &page.texts[i];
    if let Some(before) = t.text.split(price).next().and_then(plain) {
        return Some(before);
    }
    let earlier = page.texts[..i].iter().rev().take(3);
    let mut fallback = None;
    for (k, e) in earlier.enumerate() {
        if !answer::values(e.text, AnswerKind::Price).is_empty() {
            break;
        }
        if let Some(name) = plain(e.text) {
            if same_line(e.node, t.node) {
                return Some(name);
            }
            if k < 2 && fallback.is_none() {
                fallback = Some(name);
            }
        }
    }
    fallback
}

/// The thing of the list with the least or most price, as "Scarf (12.99 EUR)", and whether
/// it is sure: every price has an owner and no other has the same price.
pub fn extreme(page: &Page, thing: &str, which: Extreme) -> Option<(Found, bool)> {
    let any = is_any_thing(thing);
    let mut priced: Vec<(u64, String, String)> = Vec::new();
    let mut orphans = 0;
    for (i, t) in page.texts.iter().enumerate() {
        for price in answer::values(t.text, AnswerKind::Price) {
            let Some(cents) = amount(&price) else {
                continue;
            };
            match owner(page, i, &price) {
                Some(o) if NOT_THINGS.iter().any(|n| words::contains(&o, n)) => {}
                Some(o) if any || words::contains(&o, thing) => priced.push((cents, o, price)),
                Some(_) => {}
                None => orphans += 1,
            }
        }
    }
    let pick = |a: &&(u64, String, String), b: &&(u64, String, String)| -> Ordering {
        match which {
            Extreme::Least => a.0.cmp(&b.0),
            Extreme::Most => b.0.cmp(&a.0),
        }
    };
    let best = priced.iter().min_by(pick)?;
    let tied = priced
        .iter()
        .filter(|p| p.0 == best.0 && p.1 != best.1)
        .count();
    let sure = priced.len() >= 2 && tied == 0 && orphans == 0;
    let value = format!("{} ({})", best.1, best.2);
    let quote = format!("{} {}", best.1, best.2);
    Some(((value, quote), sure))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_in_any_form_become_comparable_amounts() {
        assert_eq!(amount("12.99 EUR"), Some(1299));
        assert_eq!(amount("€1,299.00"), Some(129_900));
        assert_eq!(amount("12,99 €"), Some(1299));
        assert_eq!(amount("$7"), Some(700));
    }
}

#[cfg(test)]
mod page_tests {
    use super::*;
    use crate::agent::test_support::{element, page_of, placed, text_at};

    #[test]
    fn a_cell_under_its_column_header_on_the_entity_s_row() {
        let obs = page_of(
            "https://crm.example/",
            "Contacts",
            vec![
                text_at("Name", 10.0, 10.0),
                text_at("Phone", 200.0, 10.0),
                text_at("City", 400.0, 10.0),
                text_at("Ana Ruiz", 10.0, 40.0),
                text_at("+44 20 7111 2222", 200.0, 40.0),
                text_at("Lyon", 400.0, 40.0),
                text_at("Bo Osei", 10.0, 70.0),
                text_at("+44 20 7333 4444", 200.0, 70.0),
                text_at("Linz", 400.0, 70.0),
                text_at("Cy Silva", 10.0, 100.0),
                text_at("Phone: +351 911 000", 10.0, 120.0),
            ],
        );
        let page = Page::read(&obs);
        let anchors = |e: &str| -> Vec<(usize, &DomNode)> {
            page.texts
                .iter()
                .filter(|t| words::contains(t.text, e))
                .map(|t| (t.order, t.node))
                .collect()
        };
        let value = |e: &str, a: &str| {
            by_attribute(&page, &anchors(e), a)
                .first()
                .map(|f| f.0.clone())
        };
        assert_eq!(value("Bo Osei", "city").as_deref(), Some("Linz"));
        assert_eq!(
            value("Ana Ruiz", "phone number").as_deref(),
            Some("+44 20 7111 2222")
        );
        assert_eq!(value("Cy Silva", "phone").as_deref(), Some("+351 911 000"));
        assert_eq!(value("Bo Osei", "department"), None);
    }

    #[test]
    fn the_cheapest_and_dearest_of_a_list_with_what_each_price_is_for() {
        let row = |name: &str, price: &str, y: f64| {
            vec![
                text_at(name, 10.0, y),
                text_at(price, 200.0, y),
                placed(
                    element(y as u32, "button", None, None, "Add to cart"),
                    400.0,
                    y,
                ),
            ]
        };
        let obs = page_of(
            "https://shop.example/",
            "Products",
            [
                row("Scarf", "12.99 EUR", 10.0),
                row("Gloves", "9.50 EUR", 40.0),
                row("Sun hat", "31.00 EUR", 70.0),
                vec![text_at("Shipping: 4.90 EUR", 10.0, 100.0)],
            ]
            .concat(),
        );
        let page = Page::read(&obs);
        let ((cheap, _), sure) = extreme(&page, "item", Extreme::Least).unwrap();
        assert_eq!(cheap, "Gloves (9.50 EUR)");
        assert!(sure);
        let ((dear, _), _) = extreme(&page, "product", Extreme::Most).unwrap();
        assert_eq!(dear, "Sun hat (31.00 EUR)");
        let ((hat, _), _) = extreme(&page, "hat", Extreme::Least).unwrap();
        assert_eq!(hat, "Sun hat (31.00 EUR)");
    }

    #[test]
    fn things_of_a_kind_by_their_links_and_a_category_s_priced_entries() {
        let link = |i: u32, name: &str, y: f64| placed(element(i, "a", None, None, name), 10.0, y);
        let obs = page_of(
            "https://shop.example/?category=hats",
            "Hats",
            vec![
                link(1, "Hats", 0.0),
                link(2, "Scarves", 0.0),
                link(3, "Sun hat", 40.0),
                text_at("24.50 EUR", 200.0, 40.0),
                link(4, "Knitted beanie", 70.0),
                text_at("18.00 EUR", 200.0, 70.0),
                link(5, "Sun hat", 100.0),
                text_at("24.50 EUR", 200.0, 100.0),
                link(6, "Hat care guide", 130.0),
            ],
        );
        let page = Page::read(&obs);
        // The category's own link is not one of its things; a repeat counts once.
        assert_eq!(of_kind(&page, "hats"), ["Sun hat", "Hat care guide"]);
        // Every link with a price after it, whatever its name.
        assert_eq!(priced(&page), ["Sun hat", "Knitted beanie"]);
        assert!(of_kind(&page, "gloves").is_empty());
    }
}
