//! The API key an OpenAI-compatible server is asked with: the one the vault keeps for that
//! server (`vault::api_keys`), handed down to `llm::choose` as a parameter, since a backend
//! knows nothing of the vault. With none saved the backend falls back to `ITINERO_OPENAI_KEY`.
//!
//! A task whose server has a key in a locked vault asks the user to unlock it, as auto-login
//! does for a sign-in's secrets: unlock on the Vault page and answer, or answer "skip" to go on
//! without the saved key. Listing a server's models asks nobody: a locked vault's key is left
//! out. Each task that uses a key adds "API key used" to the audit list (the server only).

use crate::agent::run::{Ask, Panel};
use crate::vault::api_keys::server_origin;
use crate::vault::{Result, Vault, VaultError};

/// Runs `f` on the blocking pool (a vault call may read the OS secret store).
async fn blocking<T: Send + 'static>(
    vault: &Vault,
    f: impl FnOnce(&Vault) -> Result<T> + Send + 'static,
) -> Result<T> {
    let vault = vault.clone();
    tokio::task::spawn_blocking(move || f(&vault))
        .await
        .unwrap_or_else(|e| Err(VaultError::Invalid(format!("the vault call failed: {e}"))))
}

async fn key_of(vault: &Vault, server: &str) -> Result<Option<String>> {
    let server = server.to_owned();
    blocking(vault, move |v| {
        Ok(v.api_key(&server)?.map(|k| k.as_str().to_owned()))
    })
    .await
}

/// The saved key for a task on `server`, `None` when there is none (or the user chose to go on
/// without it), or why the task has no model.
pub async fn for_task(
    vault: Option<&Vault>,
    server: &str,
    panel: &dyn Panel,
) -> std::result::Result<Option<String>, String> {
    // Not an address a key can be kept for: the backend says what is wrong with it.
    let (Some(vault), Ok(origin)) = (vault, server_origin(server)) else {
        return Ok(None);
    };
    let key = match key_of(vault, server).await {
        Err(VaultError::Locked) => {
            let question = format!(
                "The vault is locked, so the API key saved for {server} cannot be used. Unlock it \
                 on the Vault page of this panel (or with `itinero-host vault unlock`), then \
                 answer here; answer \"skip\" to go on without it."
            );
            match panel.ask(&question, Ask::Question).await {
                None => return Err("the task was stopped".into()),
                Some(a) if a.trim().eq_ignore_ascii_case("skip") => return Ok(None),
                Some(_) => key_of(vault, server).await,
            }
        }
        other => other,
    };
    match key {
        Ok(Some(key)) => {
            let audited = blocking(vault, move |v| {
                v.audit(&origin, "", "", "API key used", "for a task")
            })
            .await;
            if let Err(e) = audited {
                tracing::warn!(error = %e, "cannot write the vault's audit list");
            }
            Ok(Some(key))
        }
        Ok(None) => Ok(None),
        Err(VaultError::Locked) => Err(format!(
            "the vault is still locked, so the API key saved for {server} cannot be used: unlock \
             it on the Vault page and start the task again"
        )),
        Err(e) => Err(format!(
            "the API key saved for {server} cannot be used: {e}"
        )),
    }
}

/// The saved key for listing `server`'s models: `None` when there is none or the vault is
/// locked (nobody is asked for a list).
pub async fn for_listing(vault: Option<&Vault>, server: Option<String>) -> Option<String> {
    let server = server.filter(|s| server_origin(s).is_ok())?;
    match key_of(vault?, &server).await {
        Ok(key) => key,
        Err(VaultError::Locked) => None,
        Err(e) => {
            tracing::warn!(error = %e, "the API key saved for the server cannot be used");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use itinero_shared::messages::TaskEventKind;

    use super::*;
    use crate::store::Store;
    use crate::vault::crypto::KdfParams;
    use crate::vault::key_store::NoKeyring;

    const KEY: &str = "sk-task-0a1b2c3d4e5f";
    const SERVER: &str = "http://127.0.0.1:8080/v1";

    /// Answers every question with `answer`, unlocking `unlock` first when given.
    struct User {
        answer: &'static str,
        unlock: Option<Vault>,
        asked: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl Panel for User {
        async fn event(&self, _: u32, _: TaskEventKind) {}
        async fn ask(&self, question: &str, _: Ask) -> Option<String> {
            self.asked.lock().unwrap().push(question.to_owned());
            if let Some(v) = &self.unlock {
                v.unlock("tr0ub4dor&3").unwrap();
            }
            Some(self.answer.to_owned())
        }
    }

    fn user(answer: &'static str, unlock: Option<Vault>) -> User {
        User {
            answer,
            unlock,
            asked: Mutex::default(),
        }
    }

    fn locked_vault_with_a_key() -> Vault {
        let store = Store::open_in_memory().unwrap();
        let v = Vault::new(store, Box::new(NoKeyring("headless".into()))).with_kdf(KdfParams::FAST);
        v.unlock("tr0ub4dor&3").unwrap();
        v.set_api_key(SERVER, KEY).unwrap();
        v.lock();
        v
    }

    #[tokio::test]
    async fn a_locked_vaults_key_is_asked_for_as_a_sign_in_is() {
        let v = locked_vault_with_a_key();
        // The user unlocks and answers: the task gets the key, and the audit says so.
        let unlocks = user("done", Some(v.clone()));
        assert_eq!(
            for_task(Some(&v), SERVER, &unlocks)
                .await
                .unwrap()
                .as_deref(),
            Some(KEY)
        );
        let asked = unlocks.asked.lock().unwrap().clone();
        assert!(
            asked[0].contains("Vault page") && asked[0].contains(SERVER),
            "{asked:?}"
        );
        assert!(!asked[0].contains(KEY));
        assert_eq!(v.audit_list(1).unwrap()[0].what, "API key used");

        // "skip": on without the saved key; an answer with the vault still locked: no model.
        v.lock();
        assert_eq!(
            for_task(Some(&v), SERVER, &user("skip", None)).await,
            Ok(None)
        );
        let err = for_task(Some(&v), SERVER, &user("ok", None))
            .await
            .unwrap_err();
        assert!(
            err.contains("still locked") && err.contains("Vault page"),
            "{err}"
        );
        // Listing asks nobody and goes without.
        assert_eq!(for_listing(Some(&v), Some(SERVER.into())).await, None);
        // Another server has no key: nobody is asked.
        let nobody = user("no", None);
        assert_eq!(
            for_task(Some(&v), "http://127.0.0.1:9090/v1", &nobody).await,
            Ok(None)
        );
        // An address no key can be kept for: left to the backend to refuse.
        assert_eq!(
            for_task(Some(&v), "127.0.0.1:8080", &nobody).await,
            Ok(None)
        );
        assert!(nobody.asked.lock().unwrap().is_empty());
    }
}
