//! The store as a session holds it: open, or the reason it could not be opened, so a host
//! whose store is broken still runs tasks and can tell the panel why nothing is remembered.

use std::sync::Arc;

use super::Store;

/// What a session holds: the store, or why it could not be opened. Without a store tasks still
/// run; requests for settings, history, lessons and approvals are answered with the reason.
#[derive(Clone, Debug)]
pub enum StoreSlot {
    Open(Store),
    Unavailable(Arc<str>),
}

impl StoreSlot {
    /// The store at its usual place, or why not (also logged).
    pub fn open_default() -> StoreSlot {
        match Store::open_default() {
            Ok(store) => {
                tracing::info!(store = store.name(), "store open");
                StoreSlot::Open(store)
            }
            Err(e) => {
                let why = format!("{e:#}");
                tracing::error!(
                    "the store cannot be opened, so nothing is remembered this session \
                     (tasks still run): {why}"
                );
                StoreSlot::Unavailable(why.into())
            }
        }
    }

    /// A store in memory for this session only.
    pub fn in_memory() -> StoreSlot {
        match Store::open_in_memory() {
            Ok(store) => StoreSlot::Open(store),
            Err(e) => StoreSlot::Unavailable(e.to_string().into()),
        }
    }

    /// The store, or why there is none.
    pub fn get(&self) -> std::result::Result<&Store, &str> {
        match self {
            StoreSlot::Open(store) => Ok(store),
            StoreSlot::Unavailable(why) => Err(why),
        }
    }
}
