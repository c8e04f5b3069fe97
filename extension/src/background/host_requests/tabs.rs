//! Listing the browser's tabs for the host.

use itinero_shared::messages::TabInfo;
use wasm_bindgen_futures::JsFuture;

use super::{deliver, Failure};
use crate::chrome::{self, field};

pub async fn list() -> Result<Vec<TabInfo>, Failure> {
    let failed = |e: wasm_bindgen::JsValue| {
        Failure::internal(format!(
            "the tabs could not be listed: {}",
            chrome::error_message(&e)
        ))
    };
    let promise = chrome::tabs_query(&js_sys::Object::new()).map_err(failed)?;
    let tabs = JsFuture::from(promise).await.map_err(failed)?;
    Ok(js_sys::Array::from(&tabs)
        .iter()
        .filter_map(|tab| {
            // Tabs outside the tab strip (devtools windows) have no usable id.
            let tab_id = field(&tab, "id").as_f64().filter(|id| *id >= 0.0)? as i64;
            Some(TabInfo {
                tab_id,
                window_id: field(&tab, "windowId").as_f64().unwrap_or(-1.0) as i64,
                url: deliver::tab_url(&tab),
                title: field(&tab, "title").as_string().unwrap_or_default(),
                active: field(&tab, "active").as_bool().unwrap_or(false),
            })
        })
        .collect())
}
