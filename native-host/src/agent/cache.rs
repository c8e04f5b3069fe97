//! The action cache: a goal repeated on a page seen before is answered from what worked last
//! time, with no model call.
//!
//! The key is the normalised goal, the page (origin and URL pattern) and a hash of what can be
//! acted on in it together with the last action that worked: the same page reached by
//! different steps can need different actions (a product page before and after "Add to cart").
//! Numbers in names are generalised, so a cart badge going from 1 to 2 is the same page. A hit
//! is used only if its target is found again by fingerprint and can take the action; a `done`
//! only if the figures of its answer are still on the page. Anything else falls through to the
//! next strategy, and the entry's failure count rises (the memory drops entries that keep failing).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use async_trait::async_trait;
use itinero_shared::observation::Observation;
use itinero_shared::Action;

use super::resolve;
use super::strategy::{DecideError, Decision, Step, Strategy};
use crate::store::CacheKey;

pub const NAME: &str = "cache";

/// `Search for Socks!` and `search for  socks` are one goal.
pub fn normalise_goal(goal: &str) -> String {
    goal.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', '?', ' '])
        .to_lowercase()
}

/// Digit runs as `#`: counts and prices change between visits, the page does not.
fn generalised(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// What an action was, without the index it had: kind, target and text.
fn hash_action(action: &Action, h: &mut impl Hasher) {
    action.kind().hash(h);
    if let Some(t) = action.target() {
        let fp = &t.fingerprint;
        (&fp.tag, &fp.role, fp.name.as_deref().map(generalised)).hash(h);
    }
    match action {
        Action::Type { text, submit, .. } => (text, submit).hash(h),
        Action::Select { value, .. } => value.hash(h),
        Action::Navigate { url } => crate::url_pattern::pattern(url).hash(h),
        Action::PressKey { key, .. } => key.hash(h),
        _ => {}
    }
}

/// The page's key for the memory: its controls (tag, role, name with numbers generalised, form
/// name, type, value and state; not ids or paths, which many sites generate per render) and
/// the last action that worked before it, as 16 hex digits.
pub fn page_key(obs: &Observation, previous: Option<&Action>) -> String {
    let mut h = fnv::FnvHasher::default();
    for n in obs.indexed() {
        (
            &n.tag,
            &n.role,
            n.name.as_deref().map(generalised),
            n.fingerprint.as_ref().and_then(|f| f.name_attr.as_deref()),
            &n.input_type,
            &n.value,
            &n.states,
            n.occluded,
        )
            .hash(&mut h);
    }
    match previous {
        Some(a) => hash_action(a, &mut h),
        None => "start".hash(&mut h),
    }
    format!("{:016x}", h.finish())
}

/// The cache key of a step decided for `goal` on `url` whose page key is `page`.
pub fn key(goal: &str, url: &str, page: &str) -> CacheKey {
    let pattern = crate::url_pattern::pattern(url);
    let origin = crate::store::origin_of(url).unwrap_or_default();
    CacheKey {
        goal: normalise_goal(goal),
        path: pattern.strip_prefix(&origin).unwrap_or(&pattern).to_owned(),
        origin,
        page: page.to_owned(),
    }
}

/// Whether a remembered answer still holds: every figure in it (a price, a count) is on the page.
pub fn answer_holds(answer: &str, obs: &Observation) -> bool {
    answer
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .all(|figure| obs.text.contains(figure))
}

/// A remembered action and the model time it saved when it was decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    pub action: Action,
    pub decide_ms: u64,
}

/// Where the cache strategy looks things up; the task's memory implements it.
#[async_trait]
pub trait ActionCache: Send + Sync {
    async fn lookup(&self, key: &CacheKey) -> Option<Remembered>;
    /// A remembered action did not fit the page.
    async fn unusable(&self, key: &CacheKey);
}

/// Answers from the cache when it can, else asks `inner`.
pub struct Cached<S> {
    pub inner: S,
    pub cache: Arc<dyn ActionCache>,
}

impl<S> Cached<S> {
    async fn hit(&self, step: &Step<'_>) -> Result<Decision, Option<String>> {
        // After a failed action the page is not what the cache saw: recovery or the model decide.
        if step.failed.is_some() {
            return Err(None);
        }
        let key = key(step.goal, &step.observation.url, step.page_key);
        let Some(remembered) = self.cache.lookup(&key).await else {
            return Err(None);
        };
        let fits = match &remembered.action {
            Action::Done { answer, .. } if !answer_holds(answer, step.observation) => {
                Err("its answer's figures are no longer on the page".to_owned())
            }
            action => resolve::resolve(action, step.observation).map_err(|e| e.0),
        };
        match fits {
            Ok(action) => {
                let note = format!(
                    "from the cache: no model call (it took {:.1} s to decide)",
                    remembered.decide_ms as f64 / 1000.0
                );
                Ok(Decision::without_model(action, NAME, note))
            }
            Err(why) => {
                self.cache.unusable(&key).await;
                Err(Some(format!("the cached step does not fit: {why}")))
            }
        }
    }
}

#[async_trait]
impl<S: Strategy> Strategy for Cached<S> {
    async fn decide(&self, step: &Step<'_>) -> Result<Decision, DecideError> {
        match self.hit(step).await {
            Ok(d) => Ok(d),
            Err(None) => self.inner.decide(step).await,
            Err(Some(miss)) => {
                let mut d = self.inner.decide(step).await?;
                d.note = Some(match d.note {
                    Some(n) => format!("{miss}; {n}"),
                    None => miss,
                });
                Ok(d)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use itinero_shared::Target;

    use super::*;
    use crate::agent::test_support::{self, element, page_of};
    use crate::llm::scripted::{Scripted, Step as ScriptStep};

    #[derive(Default)]
    struct Memo {
        entries: Mutex<Vec<(CacheKey, Action)>>,
        unusable: Mutex<Vec<CacheKey>>,
    }

    #[async_trait]
    impl ActionCache for Memo {
        async fn lookup(&self, key: &CacheKey) -> Option<Remembered> {
            let entries = self.entries.lock().unwrap();
            entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, a)| Remembered {
                    action: a.clone(),
                    decide_ms: 1500,
                })
        }
        async fn unusable(&self, key: &CacheKey) {
            self.unusable.lock().unwrap().push(key.clone());
        }
    }

    fn shop(cart: u32, add_name: &str) -> Observation {
        let mut obs = page_of(
            "https://shop.test/shop/product/17?ref=home",
            "Wool socks",
            vec![
                element(0, "a", None, None, &format!("Cart ({cart})")),
                element(1, "button", None, None, add_name),
            ],
        );
        obs.text = "Wool socks 12.99 EUR".into();
        obs
    }

    fn add_to_cart(obs: &Observation) -> Action {
        let node = obs.indexed()[1];
        Action::Click {
            target: Target {
                index: 7,
                fingerprint: node.fingerprint.clone().unwrap(),
            },
        }
    }

    #[test]
    fn goals_and_pages_are_normalised() {
        assert_eq!(normalise_goal("  Add  Wool socks!"), "add wool socks");
        let before = shop(1, "Add to cart");
        // A count in a name changes, the page does not.
        assert_eq!(
            page_key(&shop(1, "Add to cart"), None),
            page_key(&shop(2, "Add to cart"), None)
        );
        assert_ne!(page_key(&before, None), page_key(&shop(1, "Remove"), None));
        // The same page after a different last action is another key.
        let clicked = add_to_cart(&before);
        assert_ne!(page_key(&before, None), page_key(&before, Some(&clicked)));
        let k = key("Add wool socks.", &before.url, "abc");
        assert_eq!(
            (k.goal.as_str(), k.origin.as_str(), k.path.as_str()),
            ("add wool socks", "https://shop.test", "/shop/product/*?ref")
        );
    }

    #[test]
    fn an_answer_holds_while_its_figures_are_on_the_page() {
        let obs = shop(1, "Add to cart");
        assert!(answer_holds("Wool socks cost 12.99 EUR.", &obs));
        assert!(answer_holds("Added them.", &obs));
        assert!(!answer_holds("Wool socks cost 11.99 EUR.", &obs));
    }

    fn step<'a>(obs: &'a Observation, page_key: &'a str) -> Step<'a> {
        Step {
            page_key,
            ..test_support::step("Add wool socks to the cart", obs)
        }
    }

    #[tokio::test]
    async fn a_hit_needs_no_model_and_a_stale_one_falls_through() {
        let obs = shop(0, "Add to cart");
        let pk = page_key(&obs, None);
        let memo = Arc::new(Memo::default());
        memo.entries.lock().unwrap().push((
            key("add wool socks to the cart", &obs.url, &pk),
            add_to_cart(&obs),
        ));
        let script = Arc::new(Scripted::new([ScriptStep::reply(
            r#"{"action": "click", "index": 1}"#,
        )]));
        let chain = Cached {
            inner: crate::agent::strategy::Llm::new(script.clone(), "m"),
            cache: memo.clone(),
        };
        let d = chain.decide(&step(&obs, &pk)).await.unwrap();
        assert_eq!((d.strategy, d.calls), (NAME, 0));
        // Found again under the index it has now.
        assert_eq!(d.action.target().unwrap().index, 1);
        assert!(d.note.unwrap().contains("1.5 s"));
        assert!(script.requests().is_empty());

        // The button now says something else: the entry does not fit, the model decides.
        let changed = shop(0, "Sold out");
        let d = chain.decide(&step(&changed, &pk)).await.unwrap();
        assert_eq!(d.strategy, "llm");
        assert_eq!(
            d.note.as_deref(),
            Some("the cached step does not fit: button \"Add to cart\" is not on this page")
        );
        assert_eq!(memo.unusable.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_done_whose_figures_changed_is_not_replayed() {
        let mut obs = shop(0, "Add to cart");
        let pk = page_key(&obs, None);
        let memo = Arc::new(Memo::default());
        memo.entries.lock().unwrap().push((
            key("add wool socks to the cart", &obs.url, &pk),
            Action::Done {
                answer: "They cost 12.99 EUR.".into(),
                success: true,
            },
        ));
        let script = Arc::new(Scripted::new([ScriptStep::reply(
            r#"{"action": "done", "answer": "They cost 9.99 EUR."}"#,
        )]));
        let chain = Cached {
            inner: crate::agent::strategy::Llm::new(script.clone(), "m"),
            cache: memo.clone(),
        };
        assert_eq!(chain.decide(&step(&obs, &pk)).await.unwrap().strategy, NAME);
        obs.text = "Wool socks 9.99 EUR".into();
        let d = chain.decide(&step(&obs, &pk)).await.unwrap();
        assert_eq!(d.strategy, "llm");
        assert!(matches!(d.action, Action::Done { ref answer, .. } if answer.contains("9.99")));
    }
}
