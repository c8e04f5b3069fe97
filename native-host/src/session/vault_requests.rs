//! The panel's vault requests. Each runs on the blocking pool (Argon2id takes a moment by
//! design). A password leaves the host only in `Revealed`, which the panel asks for after the
//! user confirmed.

use itinero_shared::messages::{VaultRequest, VaultResponse};
use zeroize::Zeroizing;

use crate::vault::{NewCredential, Result, Vault};

pub fn reply(vault: &Vault, request: VaultRequest) -> Result<VaultResponse> {
    Ok(match request {
        VaultRequest::Status => VaultResponse::Status {
            status: vault.status()?,
        },
        VaultRequest::List => VaultResponse::Credentials {
            credentials: vault.list()?,
        },
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
        VaultRequest::Reveal { id } => {
            let (password, totp_code) = vault.reveal(id)?;
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
    })
}
