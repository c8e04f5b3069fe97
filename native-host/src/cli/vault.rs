//! `itinero-host vault …`: the credentials itinero signs in with, from a terminal. It opens the
//! same store as the host. Passwords, TOTP seeds and passphrases are read without echo from the
//! terminal (or, for scripts, one per line from standard input; the passphrase also from
//! `ITINERO_VAULT_PASSPHRASE`), and are never printed; so are the API keys of OpenAI-compatible
//! servers (`api-key set`), of which `status` names only the servers. `unlock` and `lock` act
//! on the running host through its control socket: the host keeps its own key in memory.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use itinero_shared::vault::{CredentialSummary, KeySource, VaultState};
use zeroize::Zeroizing;

use super::host::{self, HostArgs};
use crate::control::protocol::{Hidden, Request, Response};
use crate::store::Store;
use crate::vault::{self, NewCredential, Vault, VaultError};

#[derive(Debug, Args)]
pub struct VaultArgs {
    #[command(subcommand)]
    pub command: VaultCommand,
}

#[derive(Debug, Subcommand)]
pub enum VaultCommand {
    /// Whether the vault exists, where its key is kept, and how many credentials it holds.
    Status {
        /// Print it as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Save a credential; the password (and with --totp the TOTP seed) is asked without echo.
    Add {
        /// The site, e.g. https://shop.example (a login page's URL works too).
        origin: String,
        username: String,
        /// Also ask for the TOTP seed (base32, or an otpauth:// URI).
        #[arg(long)]
        totp: bool,
        /// Also sign in on other origins of the same site (e.g. login.shop.example).
        #[arg(long)]
        same_site: bool,
        /// Also fill on http:// although the saved origin is https://.
        #[arg(long)]
        allow_http: bool,
        #[arg(long, default_value = "")]
        notes: String,
    },
    /// The saved credentials (never their passwords).
    List {
        #[arg(long)]
        json: bool,
    },
    /// Delete a credential.
    Remove { origin: String, username: String },
    /// Add the credentials of a Bitwarden, KeePassXC or Chrome CSV export.
    Import { file: PathBuf },
    /// The latest fills and refusals.
    Audit {
        #[arg(long, default_value_t = 30)]
        limit: u32,
        /// Print the entries as JSON.
        #[arg(long)]
        json: bool,
    },
    /// The API key of an OpenAI-compatible server, kept sealed in the vault.
    #[command(subcommand)]
    ApiKey(ApiKeyCommand),
    /// Give the running host the passphrase (it asks in the side panel otherwise).
    Unlock(HostArgs),
    /// Make the running host forget the vault key.
    Lock(HostArgs),
}

#[derive(Debug, Subcommand)]
pub enum ApiKeyCommand {
    /// Save the key (asked without echo) for the server; tasks on it use this key rather than
    /// ITINERO_OPENAI_KEY.
    Set {
        /// The server's address as in the settings, e.g. http://127.0.0.1:8080/v1 (the key is
        /// kept for its origin).
        server: String,
    },
    /// Delete the server's key.
    Remove { server: String },
}

pub fn run_vault(args: &VaultArgs) -> Result<bool> {
    match &args.command {
        VaultCommand::Unlock(h) => return unlock_host(h),
        VaultCommand::Lock(h) => return lock_host(h),
        _ => {}
    }
    let store = Store::open_default().context("cannot open itinero's store")?;
    let data_dir = crate::paths::data_dir()?;
    let vault = Vault::new(store, vault::key_store::for_data_dir(&data_dir));
    match &args.command {
        VaultCommand::Status { json } => status(&vault, *json),
        VaultCommand::Add {
            origin,
            username,
            totp,
            same_site,
            allow_http,
            notes,
        } => {
            let mut lines = Lines::new();
            let password = lines.secret(&format!("Password for {username} on {origin}: "))?;
            let totp_seed = if *totp {
                Some(lines.secret("TOTP seed (base32 or otpauth:// URI): ")?)
            } else {
                None
            };
            unlocked(&vault, &mut lines)?;
            let saved = vault.add(NewCredential {
                origin: origin.clone(),
                username: username.clone(),
                password,
                totp_seed,
                notes: notes.clone(),
                same_site: *same_site,
                allow_http: *allow_http,
            })?;
            println!("saved {} on {}", saved.username, saved.origin);
            Ok(())
        }
        VaultCommand::List { json } => {
            let list = vault.list()?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else if list.is_empty() {
                println!("no credentials yet: `itinero-host vault add ORIGIN USERNAME`");
            } else {
                print!("{}", table(&list));
            }
            Ok(())
        }
        VaultCommand::Remove { origin, username } => {
            let origin = crate::store::origin_of(origin).unwrap_or_else(|| origin.clone());
            let found = vault
                .list()?
                .into_iter()
                .find(|c| c.origin == origin && c.username == *username)
                .with_context(|| format!("there is no credential for {username} on {origin}"))?;
            vault.remove(found.id)?;
            println!("removed {username} on {origin}");
            Ok(())
        }
        VaultCommand::Import { file } => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            unlocked(&vault, &mut Lines::new())?;
            let report = vault.import_csv(&text)?;
            println!(
                "{} export: {} added, {} updated, {} skipped",
                report.format,
                report.added,
                report.updated,
                report.skipped.len()
            );
            for why in &report.skipped {
                println!("  skipped {why}");
            }
            Ok(())
        }
        VaultCommand::Audit { limit, json } => {
            let entries = vault.audit_list(*limit)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&entries)?);
                return Ok(true);
            }
            if entries.is_empty() {
                println!("nothing yet: fills and refusals are listed here");
            }
            for e in entries {
                let when = super::skills::ago(crate::store::now_ms(), e.at);
                let page = if e.page_url.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", e.page_url)
                };
                let detail = if e.detail.is_empty() {
                    String::new()
                } else {
                    format!(": {}", e.detail)
                };
                println!(
                    "{when:>10}  {:<9} {} {}{page}{detail}",
                    e.what, e.username, e.origin
                );
            }
            Ok(())
        }
        VaultCommand::ApiKey(ApiKeyCommand::Set { server }) => {
            let origin = vault::api_keys::server_origin(server)?;
            let mut lines = Lines::new();
            let key = lines.secret(&format!("API key for {origin}: "))?;
            unlocked(&vault, &mut lines)?;
            let origin = vault.set_api_key(server, &key)?;
            println!("saved the API key for {origin}");
            Ok(())
        }
        VaultCommand::ApiKey(ApiKeyCommand::Remove { server }) => {
            let (origin, existed) = vault.remove_api_key(server)?;
            if !existed {
                bail!("there is no API key for {origin}");
            }
            println!("removed the API key for {origin}");
            Ok(())
        }
        VaultCommand::Unlock(_) | VaultCommand::Lock(_) => unreachable!("handled above"),
    }
    .map(|()| true)
}

fn status(vault: &Vault, json: bool) -> Result<()> {
    let status = vault.status()?;
    let count = vault.list()?.len();
    if json {
        let mut value = serde_json::to_value(&status)?;
        value["credentials"] = count.into();
        value["api_key_servers"] = serde_json::to_value(&status.api_key_servers)?;
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    let state = match status.state {
        VaultState::NotCreated => "not created yet".to_owned(),
        VaultState::Locked => "locked".to_owned(),
        VaultState::Unlocked => "unlocked".to_owned(),
    };
    let source = match status.source {
        Some(KeySource::Keyring) => "its key is in the OS secret store",
        Some(KeySource::Passphrase) => "its key comes from a passphrase",
        None => "",
    };
    println!(
        "vault: {state}{}",
        if source.is_empty() {
            String::new()
        } else {
            format!("; {source}")
        }
    );
    println!("credentials: {count}");
    if status.api_key_servers.is_empty() {
        println!("API keys: none");
    } else {
        println!("API keys: {}", status.api_key_servers.join(", "));
    }
    if let Some(why) = status.keyring_unavailable {
        println!("OS secret store: unavailable ({why}); a passphrase keys the vault");
    }
    Ok(())
}

/// One line per credential.
fn table(list: &[CredentialSummary]) -> String {
    let mut out = format!("{:<40} {:<24} {}\n", "ORIGIN", "USERNAME", "");
    for c in list {
        out.push_str(&format!(
            "{:<40} {:<24} {}\n",
            c.origin,
            c.username,
            c.flags().join(", ")
        ));
    }
    out
}

/// Reads secrets: from the terminal without echo, else one per line from standard input.
struct Lines {
    piped: Option<std::io::StdinLock<'static>>,
}

impl Lines {
    fn new() -> Self {
        let stdin = std::io::stdin();
        let piped = (!stdin.is_terminal()).then(|| stdin.lock());
        Self { piped }
    }

    fn secret(&mut self, prompt: &str) -> Result<Zeroizing<String>> {
        match &mut self.piped {
            None => Ok(Zeroizing::new(
                rpassword::prompt_password(prompt).context("cannot read from the terminal")?,
            )),
            Some(input) => {
                let mut line = Zeroizing::new(String::new());
                if input.read_line(&mut line)? == 0 {
                    bail!(
                        "standard input ended before {}",
                        prompt.trim_end_matches([':', ' '])
                    );
                }
                Ok(Zeroizing::new(
                    line.trim_end_matches(['\r', '\n']).to_owned(),
                ))
            }
        }
    }
}

/// The passphrase: `ITINERO_VAULT_PASSPHRASE`, else asked.
fn passphrase(lines: &mut Lines, creating: bool) -> Result<Zeroizing<String>> {
    if let Ok(p) = std::env::var("ITINERO_VAULT_PASSPHRASE") {
        return Ok(Zeroizing::new(p));
    }
    if creating {
        eprintln!(
            "The vault needs a passphrase (at least {} characters); you give it once each time the browser starts itinero.",
            vault::MIN_PASSPHRASE
        );
        let first = lines.secret("New vault passphrase: ")?;
        if lines.piped.is_none() {
            let again = lines.secret("Again: ")?;
            if *again != *first {
                bail!("the two passphrases differ");
            }
        }
        return Ok(first);
    }
    lines.secret("Vault passphrase: ")
}

/// Makes sure this process can seal and open: unlocked from the OS secret store, or with the
/// passphrase (asked; or chosen now when the vault is new and there is no secret store).
fn unlocked(vault: &Vault, lines: &mut Lines) -> Result<()> {
    let status = vault.status()?;
    match (status.state, status.keyring_unavailable) {
        (VaultState::Unlocked, _) => Ok(()),
        // A new vault goes to the OS secret store by itself on first use.
        (VaultState::NotCreated, None) => Ok(()),
        (VaultState::NotCreated, Some(_)) => {
            vault.unlock(&passphrase(lines, true)?)?;
            Ok(())
        }
        (VaultState::Locked, _) => match status.source {
            Some(KeySource::Passphrase) => match vault.unlock(&passphrase(lines, false)?) {
                Ok(_) => Ok(()),
                Err(VaultError::WrongPassphrase) => bail!("wrong passphrase"),
                Err(e) => Err(e.into()),
            },
            _ => bail!(
                "{}",
                VaultError::Keyring("the key could not be read".into())
            ),
        },
    }
}

fn unlock_host(args: &HostArgs) -> Result<bool> {
    let passphrase = passphrase(&mut Lines::new(), false)?;
    host::block_on(async {
        let mut client = host::connect(args).await?;
        let request = Request::UnlockVault {
            passphrase: Hidden(passphrase.to_string()),
        };
        match host::call(&mut client, &request).await? {
            Response::Vault { state } => {
                println!("the host's vault is {state:?}");
                Ok(true)
            }
            other => bail!("unexpected response: {other:?}"),
        }
    })
}

fn lock_host(args: &HostArgs) -> Result<bool> {
    host::block_on(async {
        let mut client = host::connect(args).await?;
        match host::call(&mut client, &Request::LockVault).await? {
            Response::Vault { .. } => {
                println!("the host's vault is locked");
                Ok(true)
            }
            other => bail!("unexpected response: {other:?}"),
        }
    })
}
