//! The History page's chart of how the runs went (`#stats`): a row per week for all sites or
//! one, each with a bar of who decided the steps (the action cache, skills, the grounding, the
//! model, the rest) beside the tasks, their success, model calls per task and the median task
//! time. A bar that turns from the model's colour to the cache's and skills' is itinero
//! learning.

use itinero_shared::messages::{StatsBy, StatsReport};
use itinero_shared::records::{sites_by_tasks, UsagePeriod};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, HtmlSelectElement};

use super::format;
use super::view::{by_id, el, set_status};

pub struct StatsView {
    document: Document,
    pub site: HtmlSelectElement,
    rows: Element,
    status: Element,
}

impl StatsView {
    pub fn find(document: &Document) -> Result<Self, JsValue> {
        Ok(Self {
            site: by_id(document, "stats-site")?.dyn_into()?,
            rows: by_id(document, "stats-rows")?,
            status: by_id(document, "stats-status")?,
            document: document.clone(),
        })
    }

    pub fn status(&self, text: &str, kind: &str) {
        set_status(&self.status, text, kind);
    }

    /// Offers the report's sites, busiest first, keeping the one chosen if it is still there.
    pub fn fill_sites(&self, report: &StatsReport) {
        let chosen = self.site.value();
        while let Some(option) = self.site.first_element_child() {
            option.remove();
        }
        let all = el(&self.document, "option", "", "All sites");
        let _ = all.set_attribute("value", "");
        let _ = self.site.append_child(&all);
        for site in sites_by_tasks(&report.periods) {
            let option = el(&self.document, "option", "", &site);
            let _ = option.set_attribute("value", &site);
            let _ = self.site.append_child(&option);
        }
        self.site.set_value(&chosen);
        if self.site.selected_index() < 0 {
            self.site.set_value("");
        }
    }

    /// Draws the periods of the site chosen (all sites when none is), newest first.
    pub fn show(&self, report: &StatsReport) {
        let chosen = self.site.value();
        let site = (!chosen.is_empty()).then_some(chosen.as_str());
        self.rows.set_text_content(None);
        let periods: Vec<&UsagePeriod> = report
            .periods
            .iter()
            .filter(|p| p.site.as_deref() == site)
            .collect();
        for period in periods.iter().rev() {
            let _ = self.rows.append_child(&self.row(period, report.by));
        }
        let empty = match site {
            Some(site) => format!("No task ended on {site} in these weeks."),
            None => "No task has ended yet: how they go shows here.".to_owned(),
        };
        self.status(if periods.is_empty() { &empty } else { "" }, "");
    }

    fn row(&self, period: &UsagePeriod, by: StatsBy) -> Element {
        let li = el(&self.document, "li", "", "");
        let _ = li.set_attribute("data-start", &period.start.to_string());
        let _ = li.append_child(&el(
            &self.document,
            "span",
            "when",
            &period_label(period.start, by),
        ));
        let bar = el(&self.document, "span", "bar", "");
        let _ = bar.set_attribute("role", "img");
        let shares = format::decider_shares(&period.steps);
        let _ = bar.set_attribute("aria-label", &format::shares_words(&shares));
        for (class, share) in shares {
            if share > 0.0 {
                let part = el(&self.document, "span", class, "");
                let _ = part.set_attribute("style", &format!("width: {share:.1}%"));
                let _ = bar.append_child(&part);
            }
        }
        let _ = li.append_child(&bar);
        let _ = li.append_child(&el(
            &self.document,
            "span",
            "meta",
            &format::period_words(period),
        ));
        li
    }
}

/// A period as people name it: `Nov 27`, `week of Nov 23`, `Nov 2026` (UTC, as the host
/// counts them).
fn period_label(start_ms: i64, by: StatsBy) -> String {
    let date = js_sys::Date::new(&JsValue::from_f64(start_ms as f64));
    let options = js_sys::Object::new();
    let set = |k: &str, v: &str| {
        let _ = js_sys::Reflect::set(&options, &k.into(), &v.into());
    };
    set("timeZone", "UTC");
    set("month", "short");
    if by == StatsBy::Month {
        set("year", "numeric");
    } else {
        set("day", "numeric");
    }
    let language = web_sys::window()
        .and_then(|w| w.navigator().language())
        .unwrap_or_else(|| "en".into());
    let text: String = date.to_locale_date_string(&language, &options).into();
    match by {
        StatsBy::Week => format!("week of {text}"),
        _ => text,
    }
}

/// Calls `f` when another site is chosen.
pub fn on_site_change(view: &StatsView, f: impl Fn() + 'static) -> Result<(), JsValue> {
    let change = Closure::<dyn FnMut()>::new(f);
    view.site
        .add_event_listener_with_callback("change", change.as_ref().unchecked_ref())?;
    change.forget();
    Ok(())
}
