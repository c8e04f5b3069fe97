//! Observing a tab for the host: the top frame's observation (which walks
//! same-origin iframes in place), with each cross-origin frame observed by its
//! own content script and stitched in where its iframe sits (see `stitch`).

use std::collections::VecDeque;

use itinero_shared::messages::Observe;
use itinero_shared::observation::Observation;
use itinero_shared::PROTOCOL_VERSION;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::{deliver, Failure};
use crate::background::stitch;
use crate::frame_protocol::{ObserveFrame, OBSERVE_FRAME};

/// One frame's observation: the JS object as the content script made it, and
/// how many cross-origin frames it left placeholders for.
async fn observe_frame(
    tab_id: i64,
    frame_id: i64,
    frame: &ObserveFrame,
) -> Result<(JsValue, u32), Failure> {
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"kind".into(), &OBSERVE_FRAME.into());
    let placement = serde_wasm_bindgen::to_value(frame)
        .map_err(|e| Failure::internal(format!("cannot send a frame placement: {e}")))?;
    let _ = js_sys::Reflect::set(&msg, &"frame".into(), &placement);
    let reply = deliver::send_to_frame(tab_id, frame_id, &msg).await?;
    let observation = crate::chrome::field(&reply, "observation");
    if !observation.is_object() {
        return Err(Failure::internal(format!(
            "the content script of tab {tab_id} (frame {frame_id}) sent no observation"
        )));
    }
    let remote = crate::chrome::field(&reply, "remote_frames")
        .as_f64()
        .unwrap_or(0.0) as u32;
    Ok((observation, remote))
}

fn decode(js: &JsValue, what: &str) -> Result<Observation, Failure> {
    serde_wasm_bindgen::from_value(js.clone())
        .map_err(|e| Failure::internal(format!("the observation of {what} is unreadable: {e}")))
}

/// The tab's frames (id, parent) as the browser lists them.
async fn frames_of(tab_id: i64) -> Vec<(i64, i64)> {
    let details = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&details, &"tabId".into(), &(tab_id as f64).into());
    let Ok(promise) = crate::chrome::web_navigation_get_all_frames(&details) else {
        return Vec::new();
    };
    let Ok(list) = JsFuture::from(promise).await else {
        return Vec::new();
    };
    js_sys::Array::from(&list)
        .iter()
        .filter_map(|f| {
            let id = crate::chrome::field(&f, "frameId").as_f64()?;
            let parent = crate::chrome::field(&f, "parentFrameId").as_f64()?;
            Some((id as i64, parent as i64))
        })
        .collect()
}

/// How long a frame's content script may take to answer a probe once its page has loaded.
const PROBE_PATIENCE_MS: f64 = 500.0;

/// What a frame's content script says about itself: where it is, how big its viewport is.
async fn probe(tab_id: i64, frame_id: i64) -> Option<stitch::Candidate> {
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"kind".into(), &"probe".into());
    let reply = deliver::send_to_frame_within(tab_id, frame_id, &msg, PROBE_PATIENCE_MS)
        .await
        .ok()?;
    let viewport = js_sys::Array::from(&crate::chrome::field(&reply, "viewport"));
    Some(stitch::Candidate {
        frame_id,
        url: crate::chrome::field(&reply, "location")
            .as_string()
            .unwrap_or_default(),
        viewport: (
            viewport.get(0).as_f64().unwrap_or(0.0),
            viewport.get(1).as_f64().unwrap_or(0.0),
        ),
    })
}

/// The tab's observation as a JS object. Without cross-origin frames (the usual
/// case, and up to megabytes) it passes on as the content script made it.
pub async fn observe_tab(tab_id: i64) -> Result<JsValue, Failure> {
    let top = ObserveFrame::default();
    let (js, remote) = observe_frame(tab_id, 0, &top).await?;
    if remote == 0 {
        return Ok(js);
    }
    let mut tree = decode(&js, &format!("tab {tab_id}"))?;
    let frames = frames_of(tab_id).await;
    // Each frame is asked about itself once, however many placeholders it could be.
    let mut probed: Vec<(i64, Option<stitch::Candidate>)> = Vec::new();
    let mut used = Vec::new();
    let mut next = stitch::next_index(&tree, 0);
    let mut queue: VecDeque<stitch::Pending> = stitch::pending(&tree, 0, &top, &[]).into();
    while let Some(mut frame) = queue.pop_front() {
        let mut candidates = Vec::new();
        for (id, parent) in &frames {
            if *parent != frame.parent_frame || used.contains(id) {
                continue;
            }
            if !probed.iter().any(|(p, _)| p == id) {
                probed.push((*id, probe(tab_id, *id).await));
            }
            if let Some((_, Some(c))) = probed.iter().find(|(p, _)| p == id) {
                candidates.push(c.clone());
            }
        }
        // A frame with no content script of ours (sandboxed, about:blank, still loading)
        // stays a placeholder the model can see but not look into.
        let Some(found) = stitch::best_match(&frame, &candidates).map(|c| c.frame_id) else {
            continue;
        };
        used.push(found);
        frame.assign(found);
        frame.placement.base_index = next;
        let child = match observe_frame(tab_id, found, &frame.placement).await {
            Ok((js, _)) => decode(&js, &format!("frame {found} of tab {tab_id}"))?,
            Err(f) => {
                web_sys::console::warn_1(
                    &format!("itinero: frame {found} not observed: {}", f.message).into(),
                );
                continue;
            }
        };
        queue.extend(stitch::pending(
            &child,
            found,
            &frame.placement,
            frame.position(),
        ));
        next = stitch::next_index(&child, next);
        stitch::splice(&mut tree, &frame, child);
    }
    // Frames inside frames add their depth to the page's.
    tree.root
        .cap_depth(itinero_shared::observation::MAX_TREE_DEPTH);
    serde_json::to_string(&tree)
        .ok()
        .and_then(|json| js_sys::JSON::parse(&json).ok())
        .ok_or_else(|| Failure::internal("the stitched observation could not be encoded".into()))
}

/// The `Observation` envelope, built around the JS observation.
pub fn report(id: u64, req: &Observe, observation: JsValue) -> JsValue {
    let set = |obj: &js_sys::Object, key: &str, value: &JsValue| {
        let _ = js_sys::Reflect::set(obj, &key.into(), value);
    };
    let body = js_sys::Object::new();
    set(&body, "task_id", &(req.task_id as f64).into());
    set(&body, "tab_id", &(req.tab_id as f64).into());
    set(&body, "observation", &observation);
    let env = js_sys::Object::new();
    set(&env, "v", &PROTOCOL_VERSION.into());
    set(&env, "id", &(id as f64).into());
    set(&env, "type", &"Observation".into());
    set(&env, "body", &body);
    env.into()
}
