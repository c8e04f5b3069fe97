//! Performing an action the way a person would, and saying precisely what happened.
//!
//! Before acting, the target is re-resolved (see `resolve`), scrolled into view
//! and hit-tested at the point that will be clicked; a covered or vanished
//! target is reported instead of acting on whatever is there now. Events are
//! synthetic (`isTrusted` is false), so values go through the native setters
//! with `input`/`change` events, which frameworks such as React listen to.
//! After acting, the page is given time to settle: no DOM mutation for a quiet
//! window, bounded.

use std::cell::Cell;
use std::rc::Rc;

use itinero_shared::messages::{Outcome, SecretField};
use itinero_shared::{aliases, input_format, matching, Action, Fingerprint, Modifier, Target};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{
    Document, Element, HtmlElement, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, Window,
};

use super::dom::clean_text;
use super::observe::Observer;
use super::occlusion;
use super::scrolling::{scroll_box, scroll_page, scroller_of};

/// No mutation for this long means the page has settled.
const QUIET_MS: f64 = 150.0;
/// Longest wait for a page to settle before reporting that it never did.
const SETTLE_MAX_MS: f64 = 3_000.0;
const WAIT_MAX_MS: u64 = 30_000;

/// Runs one action; `observer` holds the last observation the action's indices refer to.
pub async fn perform(
    observer: &Rc<std::cell::RefCell<Observer>>,
    action: Action,
    secret: Option<&SecretField>,
) -> Outcome {
    let Some(win) = web_sys::window() else {
        return failed("no window");
    };
    let Some(doc) = win.document() else {
        return failed("no document");
    };
    let result = match &action {
        Action::Navigate { url } => match win.location().set_href(url) {
            Ok(()) => return Outcome::Navigated { url: url.clone() },
            Err(e) => Err(failed(&format!("cannot navigate to {url}: {e:?}"))),
        },
        Action::Back => win
            .history()
            .and_then(|h| h.back())
            .map_err(|e| failed(&format!("{e:?}"))),
        Action::Forward => win
            .history()
            .and_then(|h| h.forward())
            .map_err(|e| failed(&format!("{e:?}"))),
        Action::Wait { ms } => {
            gloo_timers::future::TimeoutFuture::new((*ms).min(WAIT_MAX_MS) as u32).await;
            Ok(())
        }
        _ if secret.is_some() && !matches!(action, Action::Type { .. }) => {
            return Outcome::ValueRejected {
                reason: "a saved secret can only be typed into a field".into(),
            }
        }
        Action::Done { .. } | Action::AskUser { .. } => {
            return failed("done and ask_user are handled by the host, not the page")
        }
        Action::Scroll {
            target: None,
            pages,
            ..
        } => match action.scroll_direction() {
            Some(direction) => scroll_page(&win, &doc, direction, *pages)
                .map_err(|why| Outcome::NotScrolled { why }),
            None => Ok(()),
        },
        Action::PressKey {
            key,
            modifiers,
            target: None,
        } => {
            let el = doc.active_element().or_else(|| doc.body().map(Into::into));
            match el {
                Some(el) => press_key(&doc, &el, key, modifiers),
                None => Err(failed("nothing has focus")),
            }
        }
        other => {
            let target = other
                .target()
                .expect("remaining actions have a target")
                .clone();
            match locate(observer, &win, &doc, &target) {
                Err(outcome) => Err(outcome),
                Ok(el) => match secret.and_then(|f| super::secret_field::refuse(&win, &el, f)) {
                    Some(why) => Err(Outcome::ValueRejected {
                        reason: format!(
                            "refused to type the saved {}: {why}",
                            secret.map_or("secret", |f| f.kind.word())
                        ),
                    }),
                    None => {
                        if let Some(f) = secret {
                            super::secret_field::hold_back_get(&el, f.kind);
                        }
                        act_on(&win, &doc, &el, other).await
                    }
                },
            }
        }
    };
    if let Err(outcome) = result {
        return outcome;
    }
    match settle(&win, &doc).await {
        Ok(()) => Outcome::Done,
        Err(waited_ms) => Outcome::NeverSettled { waited_ms },
    }
}

fn failed(reason: &str) -> Outcome {
    Outcome::Failed {
        reason: reason.to_owned(),
    }
}

/// The element the target means now, scrolled into view and verified to be on top at its centre.
fn locate(
    observer: &Rc<std::cell::RefCell<Observer>>,
    win: &Window,
    doc: &Document,
    target: &Target,
) -> Result<Element, Outcome> {
    let by_index = observer
        .borrow()
        .indexed(target.index)
        .filter(|(el, fp)| el.is_connected() && still_matches(&target.fingerprint, fp, el, doc))
        .map(|(el, _)| el.clone());
    let el = match by_index {
        Some(el) => el,
        None => {
            // The page changed since the observation: look again and find it by fingerprint.
            observer.borrow_mut().observe_again(win);
            let obs = observer.borrow();
            let candidates = obs.all_indexed().iter().map(|(el, fp)| (fp, el.clone()));
            matching::best(&target.fingerprint, candidates).ok_or(Outcome::TargetDetached)?
        }
    };
    let options = web_sys::ScrollIntoViewOptions::new();
    options.set_block(web_sys::ScrollLogicalPosition::Center);
    options.set_inline(web_sys::ScrollLogicalPosition::Nearest);
    el.scroll_into_view_with_scroll_into_view_options(&options);
    let r = el.get_bounding_client_rect();
    let viewport = super::dom::viewport(doc, win);
    let points = occlusion::points((r.x(), r.y(), r.width(), r.height()), viewport);
    let occ = occlusion::test(doc, &el, &points, viewport);
    if occ.occluded || occ.clipped {
        return Err(Outcome::TargetOccluded {
            by: occ
                .by
                .unwrap_or_else(|| "its own container (clipped)".into()),
        });
    }
    Ok(el)
}

/// The indexed element is the one the model saw: same tag, same accessible name.
fn still_matches(recorded: &Fingerprint, then: &Fingerprint, el: &Element, doc: &Document) -> bool {
    if recorded.tag != then.tag || recorded.path != then.path {
        return false;
    }
    let tag = el.local_name();
    let attrs = super::dom::Attrs::read(el);
    let itype = super::semantics::input_type(el, &tag, &attrs);
    let name_now = super::semantics::accessible_name(doc, el, &attrs, &tag, itype.as_deref(), None);
    name_now == recorded.name
}

fn centre(el: &Element) -> (f64, f64) {
    let r = el.get_bounding_client_rect();
    (r.x() + r.width() / 2.0, r.y() + r.height() / 2.0)
}

fn mouse(el: &Element, kind: &str, (x, y): (f64, f64), buttons: u16) {
    let init = web_sys::MouseEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_composed(true);
    init.set_client_x(x as i32);
    init.set_client_y(y as i32);
    init.set_buttons(buttons);
    init.set_view(web_sys::window().as_ref());
    let event: Option<web_sys::Event> = if kind.starts_with("pointer") {
        let p = web_sys::PointerEventInit::new();
        p.set_bubbles(true);
        p.set_cancelable(true);
        p.set_composed(true);
        p.set_client_x(x as i32);
        p.set_client_y(y as i32);
        p.set_pointer_id(1);
        p.set_pointer_type("mouse");
        p.set_is_primary(true);
        p.set_buttons(buttons);
        web_sys::PointerEvent::new_with_event_init_dict(kind, &p)
            .ok()
            .map(Into::into)
    } else {
        web_sys::MouseEvent::new_with_mouse_event_init_dict(kind, &init)
            .ok()
            .map(Into::into)
    };
    if let Some(e) = event {
        let _ = el.dispatch_event(&e);
    }
}

fn hover(el: &Element) {
    let at = centre(el);
    for kind in [
        "pointerover",
        "pointerenter",
        "mouseover",
        "mouseenter",
        "pointermove",
        "mousemove",
    ] {
        mouse(el, kind, at, 0);
    }
}

fn click(el: &Element) {
    hover(el);
    let at = centre(el);
    mouse(el, "pointerdown", at, 1);
    mouse(el, "mousedown", at, 1);
    if let Some(h) = el.dyn_ref::<HtmlElement>() {
        let _ = h.focus();
    }
    mouse(el, "pointerup", at, 0);
    mouse(el, "mouseup", at, 0);
    // A dispatched `click` runs the element's activation behaviour: links follow, boxes toggle, forms submit.
    mouse(el, "click", at, 0);
}

fn event(el: &Element, kind: &str) {
    let init = web_sys::EventInit::new();
    init.set_bubbles(true);
    init.set_composed(true);
    if let Ok(e) = web_sys::Event::new_with_event_init_dict(kind, &init) {
        let _ = el.dispatch_event(&e);
    }
}

/// Sets `value` through the prototype's setter, as frameworks that track the property expect.
fn set_native_value(el: &Element, value: &str) -> Result<(), Outcome> {
    let proto = match el.local_name().as_str() {
        "textarea" => "HTMLTextAreaElement",
        "select" => "HTMLSelectElement",
        _ => "HTMLInputElement",
    };
    let global = js_sys::global();
    let setter = js_sys::Reflect::get(&global, &proto.into())
        .and_then(|c| js_sys::Reflect::get(&c, &"prototype".into()))
        .ok()
        .and_then(|p| {
            js_sys::Object::get_own_property_descriptor(&p.into(), &"value".into()).into()
        })
        .and_then(|d: JsValue| js_sys::Reflect::get(&d, &"set".into()).ok())
        .and_then(|s| s.dyn_into::<js_sys::Function>().ok())
        .ok_or_else(|| failed("no native value setter"))?;
    setter
        .call1(el, &JsValue::from_str(value))
        .map(drop)
        .map_err(|e| failed(&format!("setting the value failed: {e:?}")))
}

fn input_event(el: &Element, data: &str) {
    let init = web_sys::InputEventInit::new();
    init.set_bubbles(true);
    init.set_composed(true);
    init.set_input_type("insertText");
    init.set_data(Some(data));
    if let Ok(e) = web_sys::InputEvent::new_with_event_init_dict("input", &init) {
        let _ = el.dispatch_event(&e);
    }
}

fn key_event(el: &Element, kind: &str, key: &str, modifiers: &[Modifier]) -> bool {
    let init = web_sys::KeyboardEventInit::new();
    init.set_bubbles(true);
    init.set_cancelable(true);
    init.set_composed(true);
    init.set_key(key);
    init.set_code(&key_code(key));
    init.set_alt_key(modifiers.contains(&Modifier::Alt));
    init.set_ctrl_key(modifiers.contains(&Modifier::Control));
    init.set_meta_key(modifiers.contains(&Modifier::Meta));
    init.set_shift_key(modifiers.contains(&Modifier::Shift));
    match web_sys::KeyboardEvent::new_with_keyboard_event_init_dict(kind, &init) {
        Ok(e) => el.dispatch_event(&e).unwrap_or(true),
        Err(_) => true,
    }
}

fn key_code(key: &str) -> String {
    match key {
        k if k.len() == 1 && k.chars().all(|c| c.is_ascii_alphabetic()) => {
            format!("Key{}", k.to_ascii_uppercase())
        }
        k if k.len() == 1 && k.chars().all(|c| c.is_ascii_digit()) => format!("Digit{k}"),
        " " => "Space".into(),
        other => other.to_owned(),
    }
}

/// Key presses, with the default actions synthetic events lack: Enter submits, Tab moves focus.
fn press_key(
    doc: &Document,
    el: &Element,
    key: &str,
    modifiers: &[Modifier],
) -> Result<(), Outcome> {
    let proceed = key_event(el, "keydown", key, modifiers);
    if proceed && key.len() == 1 {
        key_event(el, "keypress", key, modifiers);
    }
    if proceed {
        match key {
            "Enter" => submit_form_of(el),
            "Tab" => move_focus(doc, el, modifiers.contains(&Modifier::Shift)),
            _ => {}
        }
    }
    key_event(el, "keyup", key, modifiers);
    Ok(())
}

fn submit_form_of(el: &Element) {
    let is_text_field = el.local_name() == "input";
    if let Some(form) = el.closest("form").ok().flatten() {
        if is_text_field {
            if let Some(form) = form.dyn_ref::<web_sys::HtmlFormElement>() {
                // requestSubmit runs validation and the submit event, like pressing Enter does.
                let _ = form.request_submit();
            }
        }
    }
}

fn move_focus(doc: &Document, from: &Element, backwards: bool) {
    let Ok(list) = doc.query_selector_all(
        "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex='-1']), [contenteditable='true']",
    ) else {
        return;
    };
    let items: Vec<Element> = (0..list.length())
        .filter_map(|i| list.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .filter(super::dom::is_visible)
        .collect();
    let pos = items.iter().position(|e| e == from);
    let next = match (pos, backwards) {
        (Some(p), false) => items.get(p + 1),
        (Some(p), true) if p > 0 => items.get(p - 1),
        (None, _) => items.first(),
        _ => None,
    };
    if let Some(h) = next.and_then(|e| e.dyn_ref::<HtmlElement>()) {
        let _ = h.focus();
    }
}

async fn act_on(
    win: &Window,
    doc: &Document,
    el: &Element,
    action: &Action,
) -> Result<(), Outcome> {
    if js_sys::Reflect::get(el, &"disabled".into())
        .ok()
        .and_then(|v| v.as_bool())
        == Some(true)
    {
        return Err(Outcome::ValueRejected {
            reason: "the element is disabled".into(),
        });
    }
    match action {
        Action::Click { .. } => {
            click(el);
            Ok(())
        }
        Action::Hover { .. } => {
            hover(el);
            Ok(())
        }
        Action::Check { checked, .. } => {
            let now = is_checked(el);
            if now != *checked {
                click(el);
            }
            if is_checked(el) != *checked {
                return Err(Outcome::ValueRejected {
                    reason: format!(
                        "it stayed {}",
                        if *checked { "unchecked" } else { "checked" }
                    ),
                });
            }
            Ok(())
        }
        Action::Type {
            text,
            submit,
            clear,
            ..
        } => type_text(doc, el, text, *submit, *clear),
        Action::Select { value, .. } => select(win, doc, el, value).await,
        // No direction: `locate` has brought the target into view, all "scroll to" asks.
        Action::Scroll { pages, .. } => {
            if let Some(direction) = action.scroll_direction() {
                match scroller_of(win, el, direction) {
                    Some(scroller) => scroll_box(&scroller, direction, *pages),
                    None => scroll_page(win, doc, direction, *pages).map_err(|why| {
                        Outcome::NotScrolled {
                            why: format!(
                                "no box holding the target scrolls further {}, and {why}",
                                direction.word()
                            ),
                        }
                    })?,
                }
            }
            Ok(())
        }
        Action::PressKey { key, modifiers, .. } => {
            if let Some(h) = el.dyn_ref::<HtmlElement>() {
                let _ = h.focus();
            }
            press_key(doc, el, key, modifiers)
        }
        _ => Err(failed("not an element action")),
    }
}

fn is_checked(el: &Element) -> bool {
    match el.dyn_ref::<HtmlInputElement>() {
        Some(i) => i.checked(),
        None => el
            .get_attribute("aria-checked")
            .is_some_and(|v| v == "true"),
    }
}

fn type_text(
    doc: &Document,
    el: &Element,
    text: &str,
    submit: bool,
    clear: bool,
) -> Result<(), Outcome> {
    if let Some(h) = el.dyn_ref::<HtmlElement>() {
        let _ = h.focus();
    }
    let tag = el.local_name();
    if tag == "input" || tag == "textarea" {
        if el.has_attribute("readonly") {
            return Err(Outcome::ValueRejected {
                reason: "the field is read-only".into(),
            });
        }
        let before = js_sys::Reflect::get(el, &"value".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        // A date or time field keeps only its own format: "14 March 2027" is typed as
        // `2027-03-14`; a number field, and a text field that asks for a number's keyboard,
        // get "$1,250" as `1250`.
        let input_type = el
            .dyn_ref::<HtmlInputElement>()
            .map(|i| i.type_())
            .unwrap_or_default();
        let inputmode = el.get_attribute("inputmode");
        let format = input_format::format_of(&input_type, inputmode.as_deref());
        let formatted = input_format::as_input_value(format, text);
        let wanted = match formatted {
            Some(v) => v,
            None if clear => text.to_owned(),
            None => format!("{before}{text}"),
        };
        set_native_value(el, &wanted)?;
        input_event(el, text);
        event(el, "change");
        let after = js_sys::Reflect::get(el, &"value".into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default();
        let password = el
            .get_attribute("type")
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("password"));
        if after != wanted && !password {
            return Err(Outcome::ValueRejected {
                reason: not_kept(&after, &wanted),
            });
        }
    } else if el
        .dyn_ref::<HtmlElement>()
        .is_some_and(|h| h.is_content_editable())
    {
        let exec = |cmd: &str, arg: &str| {
            js_sys::Reflect::get(doc, &"execCommand".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| f.call3(doc, &cmd.into(), &JsValue::FALSE, &arg.into()).ok())
                .and_then(|v| v.as_bool())
                .unwrap_or(false)
        };
        if clear {
            exec("selectAll", "");
        }
        // insertText fires beforeinput/input like typing does; fall back to setting the text.
        if !exec("insertText", text) {
            el.set_text_content(Some(text));
            input_event(el, text);
        }
    } else {
        return Err(Outcome::ValueRejected {
            reason: format!("a <{tag}> does not take text"),
        });
    }
    if submit {
        press_key(doc, el, "Enter", &[])?;
    }
    Ok(())
}

/// Why a field does not hold what was typed, told without either value: what was typed may be
/// a one-time code or a secret, and this reason reaches the model and the run's record.
fn not_kept(after: &str, wanted: &str) -> String {
    let (kept, typed) = (after.chars().count(), wanted.chars().count());
    if after.is_empty() {
        "the field stayed empty".into()
    } else if wanted.starts_with(after) {
        format!("the field kept only the first {kept} of the {typed} characters typed")
    } else {
        format!(
            "the field changed what was typed ({typed} characters typed, {kept} shown): it \
             reformats or filters its input"
        )
    }
}

async fn select(win: &Window, doc: &Document, el: &Element, value: &str) -> Result<(), Outcome> {
    let wanted = value.trim().to_lowercase();
    if let Some(select) = el.dyn_ref::<HtmlSelectElement>() {
        let list = select.options();
        let options: Vec<HtmlOptionElement> = (0..list.length())
            .filter_map(|i| list.item(i))
            .filter_map(|o| o.dyn_into::<HtmlOptionElement>().ok())
            .collect();
        let choose = |opt: &HtmlOptionElement| -> Result<(), Outcome> {
            set_native_value(el, &opt.value())?;
            event(el, "input");
            event(el, "change");
            Ok(())
        };
        let mut labels = Vec::new();
        for opt in &options {
            let label = clean_text(&opt.text(), 80);
            if opt.value().to_lowercase() == wanted || label.to_lowercase() == wanted {
                if opt.disabled() {
                    return Err(Outcome::ValueRejected {
                        reason: format!("option {label:?} is disabled"),
                    });
                }
                return choose(opt);
            }
            labels.push(label);
        }
        // "the UK" for *United Kingdom*: the one option the value is an everyday name of.
        let aliased: Vec<&HtmlOptionElement> = options
            .iter()
            .filter(|o| !o.disabled() && aliases::same(value, &clean_text(&o.text(), 80)))
            .collect();
        if let [opt] = aliased.as_slice() {
            return choose(opt);
        }
        return Err(Outcome::ValueRejected {
            reason: format!("no option {value:?}; options are: {}", labels.join(", ")),
        });
    }
    // ARIA combobox / listbox: open it, then click the option with that name.
    click(el);
    let _ = settle(win, doc).await;
    let scope = el
        .get_attribute("aria-controls")
        .or_else(|| el.get_attribute("aria-owns"))
        .and_then(|id| doc.get_element_by_id(&id))
        .unwrap_or_else(|| el.clone());
    let listed: Vec<Element> = scope
        .query_selector_all("[role=option]")
        .ok()
        .map(|list| {
            (0..list.length())
                .filter_map(|i| list.item(i))
                .filter_map(|n| n.dyn_into::<Element>().ok())
                .collect()
        })
        .unwrap_or_default();
    let text_of = |o: &Element| clean_text(&super::dom::content_text(o), 80);
    let found = listed
        .iter()
        .find(|o| {
            text_of(o).to_lowercase() == wanted
                || o.get_attribute("data-value")
                    .is_some_and(|v| v.to_lowercase() == wanted)
        })
        .or_else(|| {
            let aliased: Vec<&Element> = listed
                .iter()
                .filter(|o| aliases::same(value, &text_of(o)))
                .collect();
            (aliased.len() == 1).then(|| aliased[0])
        })
        .cloned();
    match found {
        Some(option) => {
            click(&option);
            Ok(())
        }
        None => Err(Outcome::ValueRejected {
            reason: format!("no option {value:?} in the list"),
        }),
    }
}

/// Resolves at the next animation frame, or after 100 ms where frames do not run (a hidden tab).
async fn next_frame(win: &Window) {
    let win = win.clone();
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        let _ = win.request_animation_frame(&resolve);
        let _ = win.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 100);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// Waits for a quiet DOM: `Ok` after no mutation for [`QUIET_MS`], `Err(waited)` at [`SETTLE_MAX_MS`].
async fn settle(win: &Window, doc: &Document) -> Result<(), u64> {
    let perf = win.performance();
    let now = move || perf.as_ref().map(|p| p.now()).unwrap_or(0.0);
    let start = now();
    let last = Rc::new(Cell::new(start));
    let last_seen = last.clone();
    let now2 = now.clone();
    let callback = Closure::<dyn FnMut(JsValue, JsValue)>::new(move |_: JsValue, _: JsValue| {
        last_seen.set(now2())
    });
    let observer = web_sys::MutationObserver::new(callback.as_ref().unchecked_ref()).ok();
    if let (Some(o), Some(root)) = (&observer, doc.document_element()) {
        let init = web_sys::MutationObserverInit::new();
        init.set_subtree(true);
        init.set_child_list(true);
        init.set_attributes(true);
        init.set_character_data(true);
        let _ = o.observe_with_options(&root, &init);
    }
    // Rendering steps (IntersectionObserver, ResizeObserver callbacks) run with the next frames:
    // let two pass before judging quietness.
    next_frame(win).await;
    next_frame(win).await;
    let result = loop {
        gloo_timers::future::TimeoutFuture::new(50).await;
        let t = now();
        if t - last.get() >= QUIET_MS && doc.ready_state() == "complete" {
            break Ok(());
        }
        if t - start >= SETTLE_MAX_MS {
            break Err((t - start) as u64);
        }
    };
    if let Some(o) = observer {
        o.disconnect();
    }
    drop(callback);
    result
}

#[cfg(test)]
mod tests {
    use super::not_kept;

    #[test]
    fn a_value_a_field_would_not_keep_is_described_never_repeated() {
        for (shown, typed) in [
            ("", "492039"),
            ("4920", "492039"),
            ("49-20-39", "492039"),
            ("hunter", "hunter22"),
        ] {
            let why = not_kept(shown, typed);
            assert!(!why.contains(typed), "{why}");
            assert!(shown.is_empty() || !why.contains(shown), "{why}");
        }
        assert_eq!(
            not_kept("4920", "492039"),
            "the field kept only the first 4 of the 6 characters typed"
        );
    }
}
