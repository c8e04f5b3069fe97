//! Noticing that an action navigated, and where to.
//!
//! The Navigation API's `navigate` event names the destination of every
//! navigation the page starts, a full load or an SPA `pushState`. `pagehide`
//! says the document is going away; the content script goes with it, so it
//! must answer before then or the caller only sees a closed channel.

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::messages::Outcome;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Window;

use crate::chrome;

/// Watches one action for navigations; listeners are removed on drop.
pub struct NavigationWatch {
    win: Window,
    navigation: Option<web_sys::EventTarget>,
    destination: Rc<RefCell<Option<String>>>,
    on_navigate: Closure<dyn FnMut(web_sys::Event)>,
    on_pagehide: Closure<dyn FnMut(web_sys::Event)>,
    /// Resolves with the outcome when the page is being left.
    left: js_sys::Promise,
}

impl NavigationWatch {
    pub fn start(win: &Window) -> Self {
        let destination = Rc::new(RefCell::new(None::<String>));
        let seen = destination.clone();
        let on_navigate = Closure::<dyn FnMut(web_sys::Event)>::new(move |e: web_sys::Event| {
            let url = js_sys::Reflect::get(&e, &"destination".into())
                .and_then(|d| js_sys::Reflect::get(&d, &"url".into()))
                .ok()
                .and_then(|u| u.as_string());
            if let Some(url) = url {
                *seen.borrow_mut() = Some(url);
            }
        });
        let navigation = js_sys::Reflect::get(win, &"navigation".into())
            .ok()
            .and_then(|n| n.dyn_into::<web_sys::EventTarget>().ok());
        if let Some(nav) = &navigation {
            let _ = nav
                .add_event_listener_with_callback("navigate", on_navigate.as_ref().unchecked_ref());
        }
        let resolver: Rc<RefCell<Option<js_sys::Function>>> = Rc::new(RefCell::new(None));
        let slot = resolver.clone();
        let left = js_sys::Promise::new(&mut |resolve, _| *slot.borrow_mut() = Some(resolve));
        let dest = destination.clone();
        let on_pagehide = Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
            let url = dest.borrow().clone().unwrap_or_default();
            if let Some(resolve) = resolver.borrow_mut().take() {
                let _ = resolve.call1(&JsValue::NULL, &chrome::to_js(&Outcome::Navigated { url }));
            }
        });
        let _ =
            win.add_event_listener_with_callback("pagehide", on_pagehide.as_ref().unchecked_ref());
        Self {
            win: win.clone(),
            navigation,
            destination,
            on_navigate,
            on_pagehide,
            left,
        }
    }

    /// Where a navigation started during the action was going, if one was.
    pub fn destination(&self) -> Option<String> {
        self.destination.borrow().clone()
    }

    /// A promise that resolves with a `navigated` outcome when the page is left.
    pub fn left(&self) -> js_sys::Promise {
        self.left.clone()
    }
}

impl Drop for NavigationWatch {
    fn drop(&mut self) {
        if let Some(nav) = &self.navigation {
            let _ = nav.remove_event_listener_with_callback(
                "navigate",
                self.on_navigate.as_ref().unchecked_ref(),
            );
        }
        let _ = self.win.remove_event_listener_with_callback(
            "pagehide",
            self.on_pagehide.as_ref().unchecked_ref(),
        );
    }
}
