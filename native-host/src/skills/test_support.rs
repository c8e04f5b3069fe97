//! A skill as capture makes one, for the export and import tests.

use itinero_shared::action::{Action, Fingerprint, Target};
use itinero_shared::skills::{Param, Postcondition, Skill, SkillStep, SKILL_FORMAT};

fn target(fp: Fingerprint) -> Target {
    Target {
        index: 0,
        fingerprint: fp,
    }
}

/// Search the shop for `{query}`, open the product, choose a size, add it to the cart.
pub fn shop_skill() -> Skill {
    let url = |p: &str| Postcondition::Url {
        pattern: format!("https://shop.example{p}"),
    };
    Skill {
        format: SKILL_FORMAT,
        name: "Add to cart".into(),
        description: "Search for wool socks and add them to the cart".into(),
        origin: "https://shop.example".into(),
        goal: "Search for {query} and add them to the cart".into(),
        start_url: "https://shop.example/shop/".into(),
        params: vec![Param {
            name: "query".into(),
            example: "wool socks".into(),
        }],
        steps: vec![
            SkillStep {
                action: Action::Type {
                    target: target(Fingerprint {
                        tag: "input".into(),
                        role: Some("searchbox".into()),
                        name: Some("Search products".into()),
                        name_attr: Some("q".into()),
                        path: "html>body>header>form>input[0]".into(),
                        ..Fingerprint::default()
                    }),
                    text: "{query}".into(),
                    submit: true,
                    clear: true,
                },
                url: "https://shop.example/shop/".into(),
                expect: vec![url("/shop/search?q")],
                note: "type \"{query}\" into searchbox \"Search products\" and submit".into(),
            },
            SkillStep {
                action: Action::Click {
                    target: target(Fingerprint {
                        tag: "a".into(),
                        role: Some("link".into()),
                        name: Some("Wool socks".into()),
                        path: "html>body>main>ul>li[0]>h2>a".into(),
                        ..Fingerprint::default()
                    }),
                },
                url: "https://shop.example/shop/search?q".into(),
                expect: vec![url("/shop/product/*")],
                note: "click link \"Wool socks\"".into(),
            },
            SkillStep {
                action: Action::Select {
                    target: target(Fingerprint {
                        tag: "select".into(),
                        role: Some("combobox".into()),
                        name: Some("Size".into()),
                        id: Some("size".into()),
                        name_attr: Some("size".into()),
                        ..Fingerprint::default()
                    }),
                    value: "M".into(),
                },
                url: "https://shop.example/shop/product/*".into(),
                expect: vec![Postcondition::Value { value: "M".into() }],
                note: "select \"M\" in combobox \"Size\"".into(),
            },
            SkillStep {
                action: Action::Click {
                    target: target(Fingerprint {
                        tag: "button".into(),
                        role: Some("button".into()),
                        name: Some("Add to cart".into()),
                        test_id: Some("add".into()),
                        ..Fingerprint::default()
                    }),
                },
                url: "https://shop.example/shop/product/*".into(),
                expect: vec![url("/shop/cart")],
                note: "click button \"Add to cart\"".into(),
            },
            SkillStep {
                action: Action::Done {
                    answer: "Added {query} to the cart".into(),
                    success: true,
                },
                url: "https://shop.example/shop/cart".into(),
                expect: vec![],
                note: "finish, answering \"Added {query} to the cart\"".into(),
            },
        ],
    }
}
