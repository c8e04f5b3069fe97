//! The tab bar: Run, History, Skills, Vault, Settings. An ARIA tablist: the selected tab is the one in the
//! tab order (roving tabindex), the arrow keys, Home and End move between tabs and open them.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, KeyboardEvent};

use super::view::{by_id, focus, show};

/// The panel's pages, in the tab bar's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Run,
    History,
    Skills,
    Vault,
    Settings,
}

impl Page {
    pub const ALL: [Page; 5] = [
        Page::Run,
        Page::History,
        Page::Skills,
        Page::Vault,
        Page::Settings,
    ];

    fn index(self) -> usize {
        Page::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}

pub struct NavView {
    tabs: [Element; 5],
    pages: [Element; 5],
}

impl NavView {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            tabs: [
                by_id(document, "nav-run")?,
                by_id(document, "nav-history")?,
                by_id(document, "nav-skills")?,
                by_id(document, "nav-vault")?,
                by_id(document, "nav-settings")?,
            ],
            pages: [
                by_id(document, "page-run")?,
                by_id(document, "history")?,
                by_id(document, "skills")?,
                by_id(document, "vault")?,
                by_id(document, "settings")?,
            ],
        })
    }

    /// Shows `page` and marks its tab selected.
    pub fn select(&self, page: Page) {
        for (i, (tab, panel)) in self.tabs.iter().zip(&self.pages).enumerate() {
            let selected = i == page.index();
            let _ = tab.set_attribute("aria-selected", if selected { "true" } else { "false" });
            let _ = tab.set_attribute("tabindex", if selected { "0" } else { "-1" });
            show(panel, selected);
        }
    }

    /// Calls `open` with the page whose tab is clicked or reached with the keyboard.
    pub fn on_open(&self, open: impl Fn(Page) + 'static) -> Result<(), JsValue> {
        let open = std::rc::Rc::new(open);
        let tabs: std::rc::Rc<[Element; 5]> = std::rc::Rc::new(self.tabs.clone());
        for (i, tab) in self.tabs.iter().enumerate() {
            let page = Page::ALL[i];
            let click = {
                let open = open.clone();
                Closure::<dyn FnMut()>::new(move || open(page))
            };
            tab.add_event_listener_with_callback("click", click.as_ref().unchecked_ref())?;
            click.forget();
            let key = {
                let open = open.clone();
                let tabs = tabs.clone();
                Closure::<dyn FnMut(KeyboardEvent)>::new(move |e: KeyboardEvent| {
                    let n = Page::ALL.len();
                    let to = match e.key().as_str() {
                        "ArrowRight" | "ArrowDown" => (i + 1) % n,
                        "ArrowLeft" | "ArrowUp" => (i + n - 1) % n,
                        "Home" => 0,
                        "End" => n - 1,
                        _ => return,
                    };
                    e.prevent_default();
                    focus(&tabs[to]);
                    open(Page::ALL[to]);
                })
            };
            tab.add_event_listener_with_callback("keydown", key.as_ref().unchecked_ref())?;
            key.forget();
        }
        Ok(())
    }
}
