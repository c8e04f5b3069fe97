//! Where a site keeps its overview: the link back to its front page (a shop's logo, a "Home"),
//! from which a site links every kind of thing it has. A page of search results lists only what
//! matched its words ("hat" finds the sun hat, not the beanie); the front page's "Hats" lists
//! them all.

use reqwest::Url;

use super::page::{Element, Kind, Page};

/// The link to the front page of the part of the site the page is in: a link, with no query
/// and no fragment, to a folder above the page's own address (`/shop/` from
/// `/shop/search?q=hat`); the nearest such folder, the first link to it in the page's order.
/// None on a front page itself (a folder's address with no query).
pub fn front_page<'p, 'a>(url: &str, page: &'p Page<'a>) -> Option<&'p Element<'a>> {
    let here = Url::parse(url).ok()?;
    let query = here.query().is_some_and(|q| !q.is_empty());
    if here.path().ends_with('/') && !query {
        return None;
    }
    let mut best: Option<(usize, &Element)> = None;
    for e in &page.elements {
        if e.kind != Kind::Press || e.node.tag != "a" {
            continue;
        }
        let Some(there) = e.node.href.as_deref().and_then(|h| here.join(h).ok()) else {
            continue;
        };
        if there.origin() != here.origin()
            || there.query().is_some_and(|q| !q.is_empty())
            || there.fragment().is_some()
        {
            continue;
        }
        let folder = there.path();
        let above = folder.ends_with('/') && here.path().starts_with(folder);
        if above && best.is_none_or(|(len, _)| folder.len() > len) {
            best = Some((folder.len(), e));
        }
    }
    best.map(|(_, e)| e)
}

#[cfg(test)]
mod tests {
    use super::front_page;
    use crate::agent::ground::page::Page;
    use crate::agent::test_support::{element, page_of};

    fn link(index: u32, name: &str, href: &str) -> itinero_shared::observation::DomNode {
        let mut n = element(index, "a", None, None, name);
        n.href = Some(href.to_owned());
        n
    }

    fn home(url: &str, links: &[(&str, &str)]) -> Option<u32> {
        let nodes = links
            .iter()
            .enumerate()
            .map(|(i, (name, href))| link(i as u32 + 1, name, href))
            .collect();
        let o = page_of(url, "Page", nodes);
        let page = Page::read(&o);
        front_page(url, &page).map(|e| e.index())
    }

    #[test]
    fn the_nearest_folder_above_the_page_is_its_front_page() {
        let links = [
            ("All sites", "https://shop.test/"),
            ("Demo Shop", "https://shop.test/shop/"),
            ("Hats", "https://shop.test/shop/?category=hats"),
            ("Sun hat", "/shop/product/sun-hat"),
            ("Top", "#top"),
        ];
        assert_eq!(home("https://shop.test/shop/search?q=hat", &links), Some(2));
        assert_eq!(
            home("https://shop.test/shop/product/sun-hat", &links),
            Some(2)
        );
        // A category is the front page with a query.
        assert_eq!(
            home("https://shop.test/shop/?category=hats", &links),
            Some(2)
        );
        // On a front page there is none to go back to.
        assert_eq!(home("https://shop.test/shop/", &links), None);
        assert_eq!(home("https://shop.test/", &links), None);
        // Another site's front page is not this one's.
        assert_eq!(
            home(
                "https://shop.test/shop/search?q=hat",
                &[("Partner", "https://other.test/")]
            ),
            None
        );
    }
}
