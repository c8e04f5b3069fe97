//! Waiting on browser events with a bound.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

/// A value that arrives once, from an event listener, and can be awaited or checked.
#[derive(Clone)]
pub struct Latch {
    promise: Promise,
    resolve: Rc<RefCell<Option<Function>>>,
    value: Rc<RefCell<Option<JsValue>>>,
}

impl Latch {
    pub fn new() -> Self {
        let resolve = Rc::new(RefCell::new(None));
        let slot = resolve.clone();
        let promise = Promise::new(&mut |res, _| *slot.borrow_mut() = Some(res));
        Self {
            promise,
            resolve,
            value: Rc::new(RefCell::new(None)),
        }
    }

    /// Sets the value; only the first one counts.
    pub fn fire(&self, value: JsValue) {
        if self.value.borrow().is_some() {
            return;
        }
        *self.value.borrow_mut() = Some(value.clone());
        if let Some(resolve) = self.resolve.borrow_mut().take() {
            let _ = resolve.call1(&JsValue::NULL, &value);
        }
    }

    pub fn get(&self) -> Option<JsValue> {
        self.value.borrow().clone()
    }
}

/// Returns once any of `latches` has fired, or after `ms`.
pub async fn first_of(latches: &[&Latch], ms: u32) {
    let all = Array::new();
    for latch in latches {
        all.push(&latch.promise);
    }
    all.push(&after(ms));
    let _ = JsFuture::from(Promise::race(&all)).await;
}

/// Resolves (with `undefined`) after `ms`.
fn after(ms: u32) -> Promise {
    Promise::new(&mut |resolve, _| {
        gloo_timers::callback::Timeout::new(ms, move || {
            let _ = resolve.call0(&JsValue::NULL);
        })
        .forget();
    })
}
