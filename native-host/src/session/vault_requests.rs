//! The panel's vault requests. They are answered one at a time, in the order they came (an
//! import sent right after an unlock finds the vault unlocked, and two unlocks never derive
//! keys at once), each on the blocking pool (Argon2id takes a moment by design) so the read
//! loop stays free. A password leaves the host only in `Revealed`, which the panel asks for
//! after the user confirmed, with the vault's passphrase; a model server's API key never does
//! (the panel learns which servers have one from `Status`).

use itinero_shared::messages::{VaultRequest, VaultResponse};
use itinero_shared::{ErrorCode, ToBrowser};
use tokio::sync::mpsc;
use zeroize::Zeroizing;

use super::outbox::Outbox;
use crate::vault::{NewCredential, Result, Vault};

/// The queue of the session's vault requests and the one worker that answers them.
pub struct VaultLine {
    queue: mpsc::UnboundedSender<(u64, VaultRequest, Outbox)>,
}

impl VaultLine {
    /// Starts the worker (on the current runtime) for `vault`.
    pub fn start(vault: Vault) -> Self {
        let (queue, mut jobs) = mpsc::unbounded_channel::<(u64, VaultRequest, Outbox)>();
        tokio::spawn(async move {
            while let Some((id, request, out)) = jobs.recv().await {
                let vault = vault.clone();
                let answered = tokio::task::spawn_blocking(move || reply(&vault, request)).await;
                match answered {
                    Ok(Ok(reply)) => out.send(id, ToBrowser::Vault(reply)).await,
                    Ok(Err(e)) => out.error(id, ErrorCode::BadBody, e.to_string()).await,
                    Err(join) => out.error(id, ErrorCode::Internal, join.to_string()).await,
                }
            }
        });
        Self { queue }
    }

    /// Queues request `id`; its answer goes to `out`.
    pub fn submit(&self, id: u64, request: VaultRequest, out: Outbox) {
        if let Err(mpsc::error::SendError((id, _, out))) = self.queue.send((id, request, out)) {
            tokio::spawn(async move {
                out.error(id, ErrorCode::Internal, "the vault's worker has stopped")
                    .await;
            });
        }
    }
}

pub fn reply(vault: &Vault, request: VaultRequest) -> Result<VaultResponse> {
    Ok(match request {
        VaultRequest::Status => VaultResponse::Status {
            status: vault.status()?,
        },
        VaultRequest::List { offset, limit } => {
            let all = vault.list()?;
            let total = u32::try_from(all.len()).unwrap_or(u32::MAX);
            let limit = limit.clamp(1, VaultRequest::LIST_MAX) as usize;
            VaultResponse::Credentials {
                credentials: all.into_iter().skip(offset as usize).take(limit).collect(),
                offset,
                total,
            }
        }
        VaultRequest::Add {
            origin,
            username,
            password,
            totp_seed,
            notes,
            same_site,
            allow_http,
        } => VaultResponse::Saved {
            credential: vault.add(NewCredential {
                origin,
                username,
                password: Zeroizing::new(password),
                totp_seed: totp_seed.map(Zeroizing::new),
                notes,
                same_site,
                allow_http,
            })?,
        },
        VaultRequest::Remove { id } => VaultResponse::Removed {
            existed: vault.remove(id)?,
        },
        VaultRequest::Reveal { id, passphrase } => {
            let (password, totp_code) = vault.reveal(id, &passphrase)?;
            VaultResponse::Revealed {
                password: password.to_string(),
                totp_code,
            }
        }
        VaultRequest::Unlock { passphrase } => {
            let passphrase = Zeroizing::new(passphrase);
            VaultResponse::Status {
                status: vault.unlock(&passphrase)?,
            }
        }
        VaultRequest::Lock => {
            vault.lock();
            VaultResponse::Status {
                status: vault.status()?,
            }
        }
        VaultRequest::Import { csv } => VaultResponse::Imported {
            report: vault.import_csv(&Zeroizing::new(csv))?,
        },
        VaultRequest::Audit { limit } => VaultResponse::Audit {
            entries: vault.audit_list(limit.clamp(1, 1000))?,
        },
        VaultRequest::SetApiKey { server, key } => {
            let key = Zeroizing::new(key);
            VaultResponse::ApiKeySaved {
                server: vault.set_api_key(&server, &key)?,
            }
        }
        VaultRequest::RemoveApiKey { server } => {
            let (server, existed) = vault.remove_api_key(&server)?;
            VaultResponse::ApiKeyRemoved { server, existed }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::vault::key_store::NoKeyring;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_are_answered_in_the_order_they_came() {
        let store = Store::open_in_memory().unwrap();
        let vault = Vault::new(store, Box::new(NoKeyring("none in a test".into())));
        let line = VaultLine::start(vault);
        let (out, mut replies) = Outbox::channel();
        // The import comes while the unlock still derives its key: it must wait for it.
        line.submit(
            1,
            VaultRequest::Unlock {
                passphrase: "correct horse battery".into(),
            },
            out.clone(),
        );
        line.submit(
            2,
            VaultRequest::Import {
                csv: "url,username,password\nhttps://a.example,bob,pw-1\n".into(),
            },
            out.clone(),
        );
        line.submit(
            3,
            VaultRequest::List {
                offset: 0,
                limit: 10,
            },
            out,
        );
        let mut seen = Vec::new();
        for _ in 0..3 {
            let env = replies.recv().await.unwrap();
            seen.push((env.id, env.msg));
        }
        assert_eq!(
            seen.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert!(
            matches!(&seen[1].1, ToBrowser::Vault(VaultResponse::Imported { report }) if report.added == 1),
            "{:?}",
            seen[1].1
        );
        assert!(
            matches!(&seen[2].1, ToBrowser::Vault(VaultResponse::Credentials { credentials, total: 1, .. }) if credentials.len() == 1)
        );
    }

    #[test]
    fn an_api_key_goes_into_the_vault_and_never_into_a_reply() {
        const KEY: &str = "sk-panel-9d8c7b6a5f4e3d2c";
        let store = Store::open_in_memory().unwrap();
        let vault = Vault::new(store, Box::new(NoKeyring("none in a test".into())));
        let set = || VaultRequest::SetApiKey {
            server: "http://127.0.0.1:8080/v1".into(),
            key: KEY.into(),
        };
        // No vault yet, then a locked one: the errors every vault request gives, saying how.
        let err = reply(&vault, set()).unwrap_err().to_string();
        assert!(err.contains("passphrase"), "{err}");
        vault.unlock("correct horse battery").unwrap();
        vault.lock();
        let err = reply(&vault, set()).unwrap_err().to_string();
        assert!(
            err.contains("locked") && err.contains("Vault page"),
            "{err}"
        );

        vault.unlock("correct horse battery").unwrap();
        let mut replies = vec![reply(&vault, set()).unwrap()];
        replies.push(reply(&vault, VaultRequest::Status).unwrap());
        replies.push(reply(&vault, VaultRequest::Audit { limit: 10 }).unwrap());
        assert_eq!(
            replies[0],
            VaultResponse::ApiKeySaved {
                server: "http://127.0.0.1:8080".into()
            }
        );
        assert!(
            matches!(&replies[1], VaultResponse::Status { status } if status.api_key_servers == ["http://127.0.0.1:8080"])
        );
        assert_eq!(
            vault
                .api_key("http://127.0.0.1:8080")
                .unwrap()
                .as_deref()
                .map(String::as_str),
            Some(KEY)
        );
        replies.push(
            reply(
                &vault,
                VaultRequest::RemoveApiKey {
                    server: "http://127.0.0.1:8080/".into(),
                },
            )
            .unwrap(),
        );
        assert_eq!(
            replies[3],
            VaultResponse::ApiKeyRemoved {
                server: "http://127.0.0.1:8080".into(),
                existed: true
            }
        );
        for r in &replies {
            let frame = itinero_shared::Envelope::new(1, ToBrowser::Vault(r.clone())).to_json();
            let printed = format!("{r:?} {}", String::from_utf8_lossy(&frame));
            assert!(!printed.contains(KEY), "{printed}");
        }
    }

    #[test]
    fn a_long_list_comes_in_pages_that_each_fit_a_frame() {
        let store = Store::open_in_memory().unwrap();
        let vault = Vault::new(store, Box::new(NoKeyring("none in a test".into())));
        vault.unlock("correct horse battery").unwrap();
        let mut csv = String::from("url,username,password\n");
        for i in 0..1200 {
            csv.push_str(&format!(
                "https://site{i}.example,user-with-a-long-name-{i}@example.com,pw-{i}\n"
            ));
        }
        assert_eq!(vault.import_csv(&csv).unwrap().added, 1200);
        let page = |offset, limit| match reply(&vault, VaultRequest::List { offset, limit }) {
            Ok(VaultResponse::Credentials {
                credentials,
                offset: o,
                total,
            }) => {
                assert_eq!((o, total), (offset, 1200));
                let frame = itinero_shared::Envelope::new(
                    1,
                    ToBrowser::Vault(VaultResponse::Credentials {
                        credentials: credentials.clone(),
                        offset,
                        total,
                    }),
                )
                .to_json();
                itinero_shared::encode_frame(&frame, itinero_shared::codec::Direction::ToBrowser)
                    .expect("a page fits in one frame");
                credentials.len()
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(page(0, 5000), VaultRequest::LIST_MAX as usize);
        assert_eq!(page(1000, 500), 200);
        assert_eq!(page(1200, 500), 0);
    }
}
