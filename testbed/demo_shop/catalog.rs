//! The fixed product list. Prices are all different, so a test that sorts or totals can tell
//! every product apart by its price alone.

use super::money::Cents;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Socks,
    Hats,
    Gloves,
    Scarves,
}

impl Category {
    pub const ALL: [Category; 4] = [
        Category::Socks,
        Category::Hats,
        Category::Gloves,
        Category::Scarves,
    ];

    /// The value of `?category=` in URLs.
    pub fn slug(self) -> &'static str {
        match self {
            Category::Socks => "socks",
            Category::Hats => "hats",
            Category::Gloves => "gloves",
            Category::Scarves => "scarves",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Category::Socks => "Socks",
            Category::Hats => "Hats",
            Category::Gloves => "Gloves",
            Category::Scarves => "Scarves",
        }
    }

    pub fn from_slug(slug: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.slug() == slug)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Product {
    pub slug: &'static str,
    pub name: &'static str,
    pub category: Category,
    pub price: Cents,
    pub description: &'static str,
}

const fn product(
    slug: &'static str,
    name: &'static str,
    category: Category,
    cents: u64,
    description: &'static str,
) -> Product {
    Product {
        slug,
        name,
        category,
        price: Cents(cents),
        description,
    }
}

/// In "featured" order. Only "Wool socks" says both "wool" and "socks", so the demo's question
/// ("What do wool socks cost?") has one answer.
pub static PRODUCTS: [Product; 15] = [
    product(
        "wool-socks",
        "Wool socks",
        Category::Socks,
        1299,
        "Warm merino wool socks for cold days. Made in Portugal.",
    ),
    product(
        "cotton-socks",
        "Cotton socks",
        Category::Socks,
        750,
        "Soft everyday cotton socks that breathe.",
    ),
    product(
        "hiking-socks",
        "Hiking socks",
        Category::Socks,
        1549,
        "Cushioned socks with a reinforced heel for long walks.",
    ),
    product(
        "rainbow-socks",
        "Rainbow socks",
        Category::Socks,
        599,
        "Striped socks in seven bright colours.",
    ),
    product(
        "knitted-beanie",
        "Knitted beanie",
        Category::Hats,
        1900,
        "A snug wool beanie with a folded brim.",
    ),
    product(
        "sun-hat",
        "Sun hat",
        Category::Hats,
        2450,
        "Wide-brimmed straw hat for summer.",
    ),
    product(
        "bobble-hat",
        "Bobble hat",
        Category::Hats,
        1699,
        "Winter hat with a big pompom on top.",
    ),
    product(
        "flat-cap",
        "Flat cap",
        Category::Hats,
        2900,
        "Classic tweed cap with a short peak.",
    ),
    product(
        "leather-gloves",
        "Leather gloves",
        Category::Gloves,
        3990,
        "Lined leather gloves for town.",
    ),
    product(
        "knitted-mittens",
        "Knitted mittens",
        Category::Gloves,
        1425,
        "Thick mittens that keep every finger warm together.",
    ),
    product(
        "cycling-gloves",
        "Cycling gloves",
        Category::Gloves,
        2275,
        "Padded fingerless gloves for the bike.",
    ),
    product(
        "touchscreen-gloves",
        "Touchscreen gloves",
        Category::Gloves,
        1840,
        "Thin gloves whose fingertips work on phones.",
    ),
    product(
        "silk-scarf",
        "Silk scarf",
        Category::Scarves,
        4500,
        "A light printed silk scarf.",
    ),
    product(
        "chunky-scarf",
        "Chunky scarf",
        Category::Scarves,
        2780,
        "A long, thick scarf knitted from wool and alpaca.",
    ),
    product(
        "linen-scarf",
        "Linen scarf",
        Category::Scarves,
        2160,
        "A cool linen scarf for spring evenings.",
    ),
];

pub fn find(slug: &str) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.slug == slug)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    #[default]
    Featured,
    PriceAsc,
    PriceDesc,
    Name,
}

impl Sort {
    pub const ALL: [Sort; 4] = [Sort::Featured, Sort::PriceAsc, Sort::PriceDesc, Sort::Name];

    /// The value of `?sort=` in URLs.
    pub fn slug(self) -> &'static str {
        match self {
            Sort::Featured => "featured",
            Sort::PriceAsc => "price-asc",
            Sort::PriceDesc => "price-desc",
            Sort::Name => "name",
        }
    }

    /// As the sort menu shows it.
    pub fn label(self) -> &'static str {
        match self {
            Sort::Featured => "Featured",
            Sort::PriceAsc => "Price: low to high",
            Sort::PriceDesc => "Price: high to low",
            Sort::Name => "Name",
        }
    }

    /// As the home page's heading words it ("Socks — price: low to high").
    pub fn heading(self) -> &'static str {
        match self {
            Sort::Featured => "featured",
            Sort::PriceAsc => "price: low to high",
            Sort::PriceDesc => "price: high to low",
            Sort::Name => "by name",
        }
    }

    /// An unknown value falls back to the default order, as shops do with a stale link.
    pub fn from_slug(slug: &str) -> Sort {
        Sort::ALL
            .into_iter()
            .find(|s| s.slug() == slug)
            .unwrap_or_default()
    }
}

/// The home page's grid: one category or all, in the chosen order.
pub fn listing(category: Option<Category>, sort: Sort) -> Vec<&'static Product> {
    let mut products: Vec<&Product> = PRODUCTS
        .iter()
        .filter(|p| category.is_none_or(|c| p.category == c))
        .collect();
    match sort {
        Sort::Featured => {}
        Sort::PriceAsc => products.sort_by_key(|p| p.price),
        Sort::PriceDesc => products.sort_by_key(|p| std::cmp::Reverse(p.price)),
        Sort::Name => products.sort_by_key(|p| p.name),
    }
    products
}

/// Every word of the query must begin a word of the name or the description, ignoring case;
/// a query word ending in "s" also matches without it, so "hats" finds "Sun hat" (and "hat"
/// does not find "that").
pub fn search(query: &str) -> Vec<&'static Product> {
    let wanted: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    PRODUCTS
        .iter()
        .filter(|p| {
            let text = format!("{} {}", p.name, p.description).to_lowercase();
            let words: Vec<&str> = text
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect();
            wanted.iter().all(|w| {
                let stem = w.strip_suffix('s').filter(|s| !s.is_empty());
                words.iter().any(|word| {
                    word.starts_with(w.as_str()) || stem.is_some_and(|s| word.starts_with(s))
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_prices_are_unique() {
        let mut slugs: Vec<_> = PRODUCTS.iter().map(|p| p.slug).collect();
        let mut prices: Vec<_> = PRODUCTS.iter().map(|p| p.price).collect();
        slugs.sort();
        slugs.dedup();
        prices.sort();
        prices.dedup();
        assert_eq!(slugs.len(), PRODUCTS.len());
        assert_eq!(prices.len(), PRODUCTS.len());
    }

    #[test]
    fn search_matches_every_word_in_any_case() {
        let names = |q: &str| search(q).iter().map(|p| p.name).collect::<Vec<_>>();
        assert_eq!(names("wool socks"), ["Wool socks"]);
        assert_eq!(names("SOCKS wool"), ["Wool socks"]);
        assert_eq!(names("wool").len(), 3, "{:?}", names("wool"));
        assert_eq!(
            names("hats"),
            ["Sun hat", "Bobble hat"],
            "plural query, singular names"
        );
        assert!(names("umbrella").is_empty());
        assert!(names("   ").is_empty());
        assert_eq!(
            names("wool socks?"),
            ["Wool socks"],
            "punctuation is not a word"
        );
    }

    #[test]
    fn listing_filters_and_sorts() {
        let prices = |c, s| listing(c, s).iter().map(|p| p.price.0).collect::<Vec<_>>();
        assert_eq!(
            prices(Some(Category::Socks), Sort::PriceAsc),
            [599, 750, 1299, 1549]
        );
        assert_eq!(
            prices(Some(Category::Socks), Sort::PriceDesc),
            [1549, 1299, 750, 599]
        );
        assert_eq!(listing(None, Sort::Featured).len(), PRODUCTS.len());
        let names: Vec<_> = listing(Some(Category::Hats), Sort::Name)
            .iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(
            names,
            ["Bobble hat", "Flat cap", "Knitted beanie", "Sun hat"]
        );
        assert_eq!(Sort::from_slug("nonsense"), Sort::Featured);
    }
}
