//! The auto-login hook of a task: on a sign-in page of a site with a saved sign-in, the host
//! fills and sends the form itself, step by step (username, password, one-time code), then
//! judges from the next page whether the site let it in. The model learns only "signed in to
//! <origin>" (and the username, if the user allows it).
//!
//! Each value is typed through `Browser::perform_secret`, so the page checks the field's own
//! origin and kind at the moment of typing; the host checks them first from the observation
//! (`rules` for the origin, `login_form` for visible, uncovered fields in one frame). The user
//! is asked once per site before the first sign-in ("always" is kept in the vault), and a
//! locked vault is unlocked by the user rather than skipped silently. Every fill, refusal and
//! result goes to the vault's audit list.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use itinero_shared::messages::{Outcome, SecretField};
use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::vault::{CredentialSummary, SecretKind};
use itinero_shared::{Action, Target};
use zeroize::Zeroizing;

use super::login_form::{self, LoginForm, LoginStep};
use super::overrides::Overrides;
use super::scrub::Scrubber;
use super::{rules, signals};
use crate::agent::run::{Ask, SignIn, SignInCtx, SignInReport};
use crate::store::origin_of;
use crate::vault::{totp, Secrets, Vault, VaultError};

/// The step of a sign-in the host (or the user, for a code it cannot compute) last sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Username,
    Password,
    Code,
}

struct Pending {
    origin: String,
    credential: CredentialSummary,
    sent: Sent,
}

#[derive(Default)]
struct State {
    /// Origins where the user said no, or the vault stayed locked: not asked again this task.
    declined: HashSet<String>,
    /// Origins the user allowed for this task ("yes", not "always").
    allowed: HashSet<String>,
    /// Origins signed in to this task, with the username.
    signed_in: HashMap<String, String>,
    /// Origins whose site refused the saved sign-in this task: not tried again.
    failed: HashSet<String>,
    pending: Option<Pending>,
    /// Origins whose sign-in page (from `sites.toml`) the model was told of.
    told: HashSet<String>,
    /// Secrets typed this task: should a page show one back, the model sees the placeholder.
    typed: Vec<(SecretKind, Zeroizing<String>)>,
    /// What finds `typed` in a text; `None` until needed after a secret is added.
    scrubber: Option<Arc<Scrubber>>,
}

/// Secrets shorter than this are not scrubbed from pages (too likely to be ordinary text).
const SCRUB_MIN: usize = 4;

/// The auto-login hook of one task.
pub struct AutoLogin {
    vault: Vault,
    /// Whether the model may learn which username it is signed in as (the user's setting).
    name_user: bool,
    overrides: Overrides,
    state: Mutex<State>,
}

/// The origin of the frame `frame_id` of `obs`: the page's own for the top frame (and for the
/// same-origin frames walked in place), else the `src` of the `iframe` the frame was stitched
/// into. `None` when it cannot be known: nothing is filled there.
pub fn frame_origin(obs: &Observation, frame_id: i64) -> Option<String> {
    obs.frame_src(frame_id).and_then(origin_of)
}

/// Why nothing may be filled in frame `frame_id` of `obs` whose origin is `framed`: the page
/// around it is of another site. A site's sign-in framed by a stranger's page is the stranger's
/// trap: the user sees the stranger's page, and the frame may be covered or restyled.
fn framed_by_another_site(obs: &Observation, frame_id: i64, framed: &str) -> Option<String> {
    if frame_id == 0 {
        return None;
    }
    let top = origin_of(&obs.url).unwrap_or_default();
    let same_site = match (host_of(&top), host_of(framed)) {
        (Some(t), Some(f)) => {
            t == f
                || rules::registrable(&t).is_some_and(|site| rules::registrable(&f) == Some(site))
        }
        _ => false,
    };
    (!same_site).then(|| {
        format!("its form is in a frame on a page of {top}, another site: a sign-in is filled only on its own site's pages")
    })
}

/// Why a secret must not go into `fields` of a page of `origin`, if one of them is in a form
/// that sends elsewhere: an injected form on the right page (a comment, a profile field) is
/// how a look-alike gets a saved password without a look-alike origin.
fn sends_elsewhere(
    obs: &Observation,
    fields: impl IntoIterator<Item = u32>,
    origin: &str,
) -> Option<String> {
    fields
        .into_iter()
        .filter_map(|i| obs.find_indexed(i)?.sends_to.as_deref())
        .find(|to| !rules::may_send_to(origin, to))
        .map(|to| format!("its form sends to {to}, another site"))
}

/// Whether `node` is a field that takes `kind`.
fn takes(node: &DomNode, kind: SecretKind) -> bool {
    node.tag == "input" && kind.fits_input_type(node.input_type.as_deref().unwrap_or("text"))
}

fn host_of(origin: &str) -> Option<String> {
    reqwest::Url::parse(origin)
        .ok()?
        .host_str()
        .map(str::to_ascii_lowercase)
}

/// A saved sign-in that nearly applies to `origin` (same host or same registrable domain, but
/// another scheme or port, or not marked "same site"): worth telling the user why not.
fn near_miss<'a>(
    credentials: &'a [CredentialSummary],
    origin: &str,
) -> Option<(&'a CredentialSummary, String)> {
    let host = host_of(origin)?;
    let site = rules::registrable(&host);
    credentials.iter().find_map(|c| {
        let saved = host_of(&c.origin)?;
        let related = saved == host || (site.is_some() && rules::registrable(&saved) == site);
        match rules::applies(c, origin) {
            Err(why) if related => Some((c, why)),
            _ => None,
        }
    })
}

fn target(node: &DomNode) -> Option<Target> {
    Some(Target {
        index: node.index?,
        fingerprint: node.fingerprint.clone().unwrap_or_default(),
    })
}

impl AutoLogin {
    pub fn new(vault: Vault, name_user: bool, overrides: Overrides) -> Self {
        Self {
            vault,
            name_user,
            overrides,
            state: Mutex::default(),
        }
    }

    /// The sign-in form on the page: as the site's override describes it, else as found.
    fn form(&self, obs: &Observation) -> Option<LoginForm> {
        origin_of(&obs.url)
            .and_then(|o| self.overrides.for_origin(&o))
            .and_then(|site| site.form(obs))
            .or_else(|| login_form::detect(obs))
    }

    /// The task's sign-in state; each change to it is one statement, so a panic elsewhere while
    /// it was held left nothing half done, and the task's other steps go on.
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs a vault call on the blocking pool (SQLite, and Argon2 or the OS secret store).
    async fn vault<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Vault) -> crate::vault::Result<T> + Send + 'static,
    ) -> crate::vault::Result<T> {
        let vault = self.vault.clone();
        tokio::task::spawn_blocking(move || f(&vault))
            .await
            .unwrap_or_else(|e| Err(VaultError::Invalid(format!("the vault call failed: {e}"))))
    }

    /// Best effort: an audit line that cannot be written is logged, and the task goes on.
    async fn audit(&self, origin: &str, username: &str, page: &str, what: &str, detail: &str) {
        let (o, u, p, w, d) = (
            origin.to_owned(),
            username.to_owned(),
            page.to_owned(),
            what.to_owned(),
            detail.to_owned(),
        );
        if let Err(e) = self.vault(move |v| v.audit(&o, &u, &p, &w, &d)).await {
            tracing::warn!(error = %e, "cannot write the vault's audit list");
        }
    }

    fn signed_in_text(&self, origin: &str, username: &str) -> String {
        if self.name_user {
            format!("signed in to {origin} as {username}")
        } else {
            format!("signed in to {origin}")
        }
    }

    /// Whether the user lets the host sign in on `origin`: "always" (kept), or yes for this task.
    async fn permitted(&self, origin: &str, c: &CredentialSummary, ctx: &SignInCtx<'_>) -> bool {
        if self.state().allowed.contains(origin) {
            return true;
        }
        let o = origin.to_owned();
        if self.vault(move |v| v.consented(&o)).await.unwrap_or(false) {
            return true;
        }
        let question = format!(
            "Sign in to {origin} as {} with your saved password? (\"always\": never ask again for this site)",
            c.username
        );
        let answer = ctx
            .panel
            .ask(&question, Ask::Approval { can_always: true })
            .await
            .map(|a| a.trim().to_lowercase());
        let yes = match answer.as_deref() {
            Some("always") => {
                let o = origin.to_owned();
                if let Err(e) = self.vault(move |v| v.consent(&o)).await {
                    tracing::warn!(error = %e, "cannot keep the sign-in consent");
                }
                true
            }
            Some(a) => crate::agent::run::said_yes(a),
            None => false,
        };
        let mut st = self.state();
        if yes {
            st.allowed.insert(origin.to_owned());
        } else {
            st.declined.insert(origin.to_owned());
        }
        yes
    }

    /// The sign-in's secrets; a locked vault is unlocked by the user (asked in the panel).
    async fn secrets(
        &self,
        c: &CredentialSummary,
        origin: &str,
        ctx: &SignInCtx<'_>,
    ) -> Result<Secrets, String> {
        let id = c.id;
        match self.vault(move |v| v.secrets(id).map(|(_, s)| s)).await {
            Ok(s) => return Ok(s),
            Err(VaultError::Locked) => {}
            Err(e) => return Err(e.to_string()),
        }
        let question = format!(
            "The vault is locked, so I cannot sign in to {origin} as {}. Unlock it on the Vault page of this panel (or with `itinero-host vault unlock`), then answer here; answer \"skip\" to go on without signing in.",
            c.username
        );
        match ctx.panel.ask(&question, Ask::Question).await {
            None => Err("the task was stopped".into()),
            Some(a) if a.trim().eq_ignore_ascii_case("skip") => {
                Err("you chose to go on without signing in".into())
            }
            Some(_) => match self.vault(move |v| v.secrets(id).map(|(_, s)| s)).await {
                Ok(s) => Ok(s),
                Err(VaultError::Locked) => Err("the vault is still locked".into()),
                Err(e) => Err(e.to_string()),
            },
        }
    }

    /// What the next page says about the step last sent.
    async fn judge(&self, p: Pending, form: Option<&LoginForm>, obs: &Observation) -> Judged {
        let here = form.and_then(|f| frame_origin(obs, f.frame_id));
        let next = match (
            form.map(|f| &f.step),
            here.as_deref() == Some(p.origin.as_str()),
        ) {
            (Some(LoginStep::Password { .. }), true) if p.sent == Sent::Username => true,
            (Some(LoginStep::Totp { .. }), true) if p.sent == Sent::Password => true,
            (Some(_), true) => {
                return self.refused(&p, obs, "the sign-in form came back").await;
            }
            _ => false,
        };
        if next {
            return Judged::Next(p);
        }
        let checked = self
            .overrides
            .for_origin(&p.origin)
            .and_then(|site| site.signed_in(obs));
        if checked == Some(false) {
            return self
                .refused(
                    &p,
                    obs,
                    "the page does not show the sign-in's success check",
                )
                .await;
        }
        self.audit(&p.origin, &p.credential.username, &obs.url, "signed in", "")
            .await;
        self.state()
            .signed_in
            .insert(p.origin.clone(), p.credential.username.clone());
        Judged::Done(SignInReport {
            text: self.signed_in_text(&p.origin, &p.credential.username),
            acted: false,
        })
    }

    /// The site did not let the sign-in through: said in its words (else `otherwise`), audited,
    /// and not tried again this task.
    async fn refused(&self, p: &Pending, obs: &Observation, otherwise: &str) -> Judged {
        let why = signals::refusal(obs).unwrap_or_else(|| otherwise.to_owned());
        self.audit(&p.origin, &p.credential.username, &obs.url, "failed", &why)
            .await;
        self.state().failed.insert(p.origin.clone());
        Judged::Done(SignInReport {
            text: format!(
                "the site did not accept the saved sign-in for {}: {why} (signing in there is now up to the user)",
                p.origin
            ),
            acted: false,
        })
    }

    /// Fills and sends one step of `form` with `c`'s values.
    async fn fill(
        &self,
        obs: &Observation,
        form: &LoginForm,
        c: CredentialSummary,
        origin: String,
        ctx: &SignInCtx<'_>,
    ) -> SignInReport {
        let refuse = |text: String| SignInReport { text, acted: false };
        let secrets = match self.secrets(&c, &origin, ctx).await {
            Ok(s) => s,
            Err(why) => {
                self.audit(&origin, &c.username, &obs.url, "not filled", &why)
                    .await;
                self.state().declined.insert(origin.clone());
                return refuse(format!("not signed in to {origin}: {why}"));
            }
        };
        let node = |i: u32| obs.find_indexed(i);
        let mut fields: Vec<(&DomNode, SecretKind, Zeroizing<String>)> = Vec::new();
        let sent = match &form.step {
            LoginStep::Password { username, password } => {
                if let Some(u) = username.and_then(node) {
                    if u.value.as_deref() != Some(c.username.as_str()) {
                        fields.push((u, SecretKind::Username, Zeroizing::new(c.username.clone())));
                    }
                }
                let Some(p) = node(*password) else {
                    return refuse(format!("the password field on {origin} is gone"));
                };
                fields.push((
                    p,
                    SecretKind::Password,
                    Zeroizing::new(secrets.password.clone()),
                ));
                Sent::Password
            }
            LoginStep::Username { username } => {
                let Some(u) = node(*username) else {
                    return refuse(format!("the username field on {origin} is gone"));
                };
                fields.push((u, SecretKind::Username, Zeroizing::new(c.username.clone())));
                Sent::Username
            }
            LoginStep::Totp { code } => {
                let Some(field) = node(*code) else {
                    return refuse(format!("the code field on {origin} is gone"));
                };
                match secrets.totp_seed.as_deref().map(totp::code_now) {
                    Some(Ok(code)) => {
                        fields.push((field, SecretKind::Totp, Zeroizing::new(code)));
                    }
                    Some(Err(e)) => return refuse(format!("cannot make the one-time code: {e}")),
                    None => {
                        return self
                            .user_finishes(obs, c, origin, ctx, UserStep::Code)
                            .await
                    }
                }
                Sent::Code
            }
        };
        let captcha = signals::captcha(obs);
        let last = fields.len().saturating_sub(1);
        let mut what = Vec::new();
        for (i, (n, kind, value)) in fields.iter().enumerate() {
            let Some(target) = target(n) else {
                return refuse(format!("a field of the form on {origin} has no index"));
            };
            // The last field sends the form when there is no button to click (and no CAPTCHA).
            let submit = i == last && form.submit.is_none() && !captcha;
            let action = Action::Type {
                target,
                text: value.to_string(),
                submit,
                clear: true,
            };
            let field = rules::secret_field(&origin, *kind);
            self.remember_typed(*kind, value.clone());
            let outcome = ctx
                .browser
                .perform_secret(ctx.tab, form.frame_id, &action, &field)
                .await
                .map_or_else(|reason| Outcome::Failed { reason }, |(o, _)| o);
            if !outcome.took_effect() {
                let why = outcome.to_string();
                self.audit(&origin, &c.username, &obs.url, "refused", &why)
                    .await;
                self.state().failed.insert(origin.clone());
                return SignInReport {
                    text: format!("could not sign in to {origin}: {why}"),
                    acted: true,
                };
            }
            what.push(kind.word());
        }
        self.audit(&origin, &c.username, &obs.url, "filled", &what.join(", "))
            .await;
        if captcha {
            return self
                .user_finishes(obs, c, origin, ctx, UserStep::Captcha(sent))
                .await;
        }
        if let Some(button) = form.submit.and_then(node).and_then(target) {
            let click = Action::Click { target: button };
            let outcome = ctx
                .browser
                .perform(ctx.tab, form.frame_id, &click)
                .await
                .map_or_else(|reason| Outcome::Failed { reason }, |(o, _)| o);
            if !outcome.took_effect() {
                let why = outcome.to_string();
                self.audit(&origin, &c.username, &obs.url, "failed", &why)
                    .await;
                self.state().failed.insert(origin.clone());
                return SignInReport {
                    text: format!("could not send the sign-in form on {origin}: {why}"),
                    acted: true,
                };
            }
        }
        let step = match sent {
            Sent::Username => "username",
            Sent::Password => "password",
            Sent::Code => "one-time code",
        };
        self.state().pending = Some(Pending {
            origin: origin.clone(),
            credential: c,
            sent,
        });
        SignInReport {
            text: format!("the host filled in the saved {step} on {origin} and sent it"),
            acted: true,
        }
    }

    /// Asks the user to do the part the host cannot (a CAPTCHA, a code without a saved seed) in
    /// the tab; the next page is judged as if the host had sent it.
    async fn user_finishes(
        &self,
        obs: &Observation,
        c: CredentialSummary,
        origin: String,
        ctx: &SignInCtx<'_>,
        step: UserStep,
    ) -> SignInReport {
        let (question, sent) = match step {
            UserStep::Code => (
                format!("{origin} asks for a one-time code and the saved sign-in has no TOTP seed: type the code in the tab and send it, then answer here."),
                Sent::Code,
            ),
            UserStep::Captcha(sent) => (
                format!("{origin} shows a CAPTCHA: I filled in the sign-in; solve the CAPTCHA in the tab and send the form, then answer here."),
                sent,
            ),
        };
        self.audit(&origin, &c.username, &obs.url, "asked the user", &question)
            .await;
        if ctx.panel.ask(&question, Ask::Question).await.is_none() {
            return SignInReport {
                text: format!("not signed in to {origin}: the task was stopped"),
                acted: false,
            };
        }
        self.state().pending = Some(Pending {
            origin: origin.clone(),
            credential: c,
            sent,
        });
        SignInReport {
            text: format!("the user finished the sign-in step on {origin} in the tab"),
            acted: true,
        }
    }
}

impl AutoLogin {
    /// Once per site and task, on a page without a form: where the site's sign-in page is (from
    /// `sites.toml`), when a sign-in is saved for it and the task is not signed in yet.
    async fn point_to_login_page(&self, obs: &Observation) -> Option<SignInReport> {
        let origin = origin_of(&obs.url)?;
        let login_url = self.overrides.for_origin(&origin)?.login_url.clone()?;
        {
            let st = self.state();
            if st.told.contains(&origin)
                || st.signed_in.contains_key(&origin)
                || st.declined.contains(&origin)
            {
                return None;
            }
        }
        let credentials = self.vault(|v| v.list()).await.ok()?;
        rules::candidates(&credentials, &origin).first()?;
        self.state().told.insert(origin.clone());
        Some(SignInReport {
            text: format!(
                "a sign-in is saved for {origin}: if the goal needs it, open {login_url} and the host signs in there"
            ),
            acted: false,
        })
    }
}

enum UserStep {
    Code,
    Captcha(Sent),
}

enum Judged {
    Done(SignInReport),
    /// The site moved on to the sign-in's next step: fill it.
    Next(Pending),
}

#[async_trait::async_trait]
impl SignIn for AutoLogin {
    async fn on_page(&self, obs: &Observation, ctx: &SignInCtx<'_>) -> Option<SignInReport> {
        let form = self.form(obs);
        let pending = self.state().pending.take();
        if let Some(p) = pending {
            match self.judge(p, form.as_ref(), obs).await {
                Judged::Done(report) => return Some(report),
                Judged::Next(p) => {
                    let form = form.as_ref()?;
                    return Some(self.fill(obs, form, p.credential, p.origin, ctx).await);
                }
            }
        }
        let Some(form) = form else {
            return self.point_to_login_page(obs).await;
        };
        let origin = frame_origin(obs, form.frame_id)?;
        {
            let st = self.state();
            if st.declined.contains(&origin)
                || st.failed.contains(&origin)
                || st.signed_in.contains_key(&origin)
            {
                return None;
            }
        }
        let credentials = match self.vault(|v| v.list()).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "cannot list the saved sign-ins");
                return None;
            }
        };
        let candidates = rules::candidates(&credentials, &origin);
        let Some(first) = candidates.first() else {
            let (c, why) = near_miss(&credentials, &origin)?;
            self.audit(&c.origin, &c.username, &obs.url, "refused", &why)
                .await;
            self.state().declined.insert(origin.clone());
            return Some(SignInReport {
                text: format!("did not use the saved sign-in on {origin}: {why}"),
                acted: false,
            });
        };
        let why = framed_by_another_site(obs, form.frame_id, &origin)
            .or_else(|| sends_elsewhere(obs, form.indices(), &origin));
        if let Some(why) = why {
            self.audit(&first.origin, &first.username, &obs.url, "refused", &why)
                .await;
            self.state().declined.insert(origin.clone());
            return Some(SignInReport {
                text: format!("did not use the saved sign-in on {origin}: {why}"),
                acted: false,
            });
        }
        // The sign-in whose username the page already shows, else the best match.
        let shown = obs.indexed().into_iter().find_map(|n| n.value.clone());
        let chosen = candidates
            .iter()
            .find(|c| shown.as_deref() == Some(c.username.as_str()))
            .unwrap_or(first);
        let chosen = (*chosen).clone();
        if !self.permitted(&origin, &chosen, ctx).await {
            self.audit(
                &origin,
                &chosen.username,
                &obs.url,
                "declined",
                "the user said no",
            )
            .await;
            return Some(SignInReport {
                text: format!("the user chose not to sign in to {origin}"),
                acted: false,
            });
        }
        Some(self.fill(obs, &form, chosen, origin, ctx).await)
    }

    async fn resolve(
        &self,
        action: &Action,
        obs: &Observation,
        ctx: &SignInCtx<'_>,
    ) -> Result<Option<(Action, SecretField)>, String> {
        let Action::Type {
            target,
            text,
            submit,
            clear,
        } = action
        else {
            return Ok(None);
        };
        if !itinero_shared::vault::mentions_secret(text) {
            return Ok(None);
        }
        let refused = |origin: &str, why: String| {
            let origin = origin.to_owned();
            async move {
                self.audit(&origin, "", &obs.url, "refused", &why).await;
                Err(why)
            }
        };
        let page = origin_of(&obs.url).unwrap_or_default();
        let Some(kind) = SecretKind::from_placeholder(text) else {
            return refused(
                &page,
                "a placeholder such as {{secret:password}} must be the whole text".into(),
            )
            .await;
        };
        let Some(node) = obs.find_indexed(target.index) else {
            return refused(&page, format!("there is no element [{}]", target.index)).await;
        };
        let Some(origin) = frame_origin(obs, node.frame_id.unwrap_or(0)) else {
            return refused(&page, "the field's frame has no known origin".into()).await;
        };
        let why = framed_by_another_site(obs, node.frame_id.unwrap_or(0), &origin)
            .or_else(|| sends_elsewhere(obs, [target.index], &origin));
        if let Some(why) = why {
            return refused(&origin, why).await;
        }
        if !takes(node, kind) || !login_form::visible(node, obs) {
            return refused(
                &origin,
                format!("[{}] is not a visible {} field", target.index, kind.word()),
            )
            .await;
        }
        let credentials = self.vault(|v| v.list()).await.map_err(|e| e.to_string())?;
        let Some(c) = rules::candidates(&credentials, &origin)
            .first()
            .map(|c| (*c).clone())
        else {
            let why = near_miss(&credentials, &origin)
                .map(|(_, why)| why)
                .unwrap_or_else(|| format!("there is no saved sign-in for {origin}"));
            return refused(&origin, why).await;
        };
        if self.state().declined.contains(&origin) || !self.permitted(&origin, &c, ctx).await {
            return refused(
                &origin,
                format!("the user chose not to sign in to {origin}"),
            )
            .await;
        }
        let secrets = self.secrets(&c, &origin, ctx).await?;
        let value = match kind {
            SecretKind::Username => c.username.clone(),
            SecretKind::Password => secrets.password.clone(),
            SecretKind::Totp => match secrets.totp_seed.as_deref() {
                Some(seed) => totp::code_now(seed)?,
                None => return refused(&origin, "the saved sign-in has no TOTP seed".into()).await,
            },
        };
        self.remember_typed(kind, Zeroizing::new(value.clone()));
        self.audit(
            &origin,
            &c.username,
            &obs.url,
            "filled",
            &format!("{} (the model's placeholder)", kind.word()),
        )
        .await;
        Ok(Some((
            Action::Type {
                target: target.clone(),
                text: value,
                submit: *submit,
                clear: *clear,
            },
            rules::secret_field(&origin, kind),
        )))
    }

    fn scrub(&self, obs: &mut Observation) {
        let scrubber = self.scrubber();
        if scrubber.is_empty() {
            return;
        }
        let clean = |s: &mut String| scrubber.clean(s);
        fn walk(node: &mut DomNode, clean: &dyn Fn(&mut String)) {
            for s in [
                &mut node.name,
                &mut node.text,
                &mut node.value,
                &mut node.href,
                &mut node.placeholder,
            ]
            .into_iter()
            .flatten()
            {
                clean(s);
            }
            for (_, v) in &mut node.attributes {
                clean(v);
            }
            if let Some(fp) = node.fingerprint.as_mut() {
                for s in [&mut fp.name, &mut fp.text].into_iter().flatten() {
                    clean(s);
                }
            }
            for c in &mut node.children {
                walk(c, clean);
            }
        }
        clean(&mut obs.text);
        clean(&mut obs.title);
        clean(&mut obs.url);
        walk(&mut obs.root, &clean);
    }

    fn scrub_text(&self, text: &mut String) {
        self.scrubber().clean(text);
    }
}

impl AutoLogin {
    /// Keeps a secret typed this task for the scrub; a username is no secret from the model.
    fn remember_typed(&self, kind: SecretKind, value: Zeroizing<String>) {
        if kind == SecretKind::Username {
            return;
        }
        let mut st = self.state();
        st.typed.push((kind, value));
        st.scrubber = None;
    }

    /// What finds the secrets typed so far this task: built once after each new secret, since
    /// every observation and every outcome of the task's steps is scrubbed with it.
    fn scrubber(&self) -> Arc<Scrubber> {
        let mut st = self.state();
        let State {
            typed, scrubber, ..
        } = &mut *st;
        scrubber
            .get_or_insert_with(|| {
                Arc::new(Scrubber::new(
                    typed.iter().map(|(k, v)| (v.as_str(), k.placeholder())),
                    SCRUB_MIN,
                ))
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::agent::run::{Browser, Panel};
    use crate::agent::test_support::{element, page_of};
    use crate::store::Store;
    use crate::vault::crypto::KdfParams;
    use crate::vault::key_store::NoKeyring;
    use crate::vault::NewCredential;
    use itinero_shared::messages::TaskEventKind;

    const PASSWORD: &str = "correct horse battery staple";
    const SHOP: &str = "https://shop.example";

    #[derive(Default)]
    struct FakeBrowser {
        sent: Mutex<Vec<(i64, Action, Option<SecretField>)>>,
        /// What the page says to each secret typed (default: done).
        refuse: Option<Outcome>,
    }

    #[async_trait::async_trait]
    impl Browser for FakeBrowser {
        async fn observe(&self, _: i64) -> Result<Observation, String> {
            Err("not used".into())
        }
        async fn perform(&self, _: i64, frame: i64, a: &Action) -> Result<(Outcome, u64), String> {
            self.sent.lock().unwrap().push((frame, a.clone(), None));
            Ok((
                Outcome::Navigated {
                    url: format!("{SHOP}/"),
                },
                1,
            ))
        }
        async fn perform_secret(
            &self,
            _: i64,
            frame: i64,
            a: &Action,
            f: &SecretField,
        ) -> Result<(Outcome, u64), String> {
            self.sent
                .lock()
                .unwrap()
                .push((frame, a.clone(), Some(f.clone())));
            Ok((self.refuse.clone().unwrap_or(Outcome::Done), 1))
        }
    }

    /// Answers questions in order; `unlock` unlocks the vault when the user is asked to.
    #[derive(Default)]
    struct FakePanel {
        answers: Mutex<VecDeque<String>>,
        asked: Mutex<Vec<String>>,
        unlock: Option<Vault>,
    }

    #[async_trait::async_trait]
    impl Panel for FakePanel {
        async fn event(&self, _: u32, _: TaskEventKind) {}
        async fn ask(&self, q: &str, _: Ask) -> Option<String> {
            self.asked.lock().unwrap().push(q.to_owned());
            if let Some(v) = self
                .unlock
                .as_ref()
                .filter(|_| q.starts_with("The vault is locked"))
            {
                v.unlock("a long passphrase").unwrap();
            }
            self.answers.lock().unwrap().pop_front()
        }
    }

    fn panel(answers: &[&str]) -> FakePanel {
        FakePanel {
            answers: Mutex::new(answers.iter().map(|a| (*a).to_owned()).collect()),
            ..Default::default()
        }
    }

    /// A vault (unlocked) with alice's sign-in for the shop, with a TOTP seed.
    fn vault() -> Vault {
        let store = Store::open_in_memory().unwrap();
        let vault =
            Vault::new(store, Box::new(NoKeyring("headless".into()))).with_kdf(KdfParams::FAST);
        vault.unlock("a long passphrase").unwrap();
        vault
            .add(NewCredential {
                origin: SHOP.into(),
                username: "alice".into(),
                password: Zeroizing::new(PASSWORD.into()),
                totp_seed: Some(Zeroizing::new("JBSWY3DPEHPK3PXP".into())),
                notes: String::new(),
                same_site: false,
                allow_http: false,
            })
            .unwrap();
        vault
    }

    fn sign_in_page(url: &str) -> Observation {
        let mut user = element(0, "input", Some("text"), None, "Username");
        user.attributes
            .push(("autocomplete".into(), "username".into()));
        let mut obs = page_of(
            url,
            "Sign in",
            vec![
                user,
                element(1, "input", Some("password"), None, "Password"),
                element(2, "button", Some("submit"), None, "Sign in"),
            ],
        );
        for n in &mut obs.root.children {
            n.rect.width = 100.0;
            n.rect.height = 20.0;
        }
        obs
    }

    fn ctx<'a>(b: &'a FakeBrowser, p: &'a FakePanel, stop: &'a AtomicBool) -> SignInCtx<'a> {
        SignInCtx {
            tab: 1,
            browser: b,
            panel: p,
            stop,
        }
    }

    fn audit(v: &Vault) -> Vec<String> {
        let mut a: Vec<String> = v
            .audit_list(50)
            .unwrap()
            .into_iter()
            .map(|e| e.what)
            .collect();
        a.reverse();
        a
    }

    #[tokio::test]
    async fn signs_in_after_the_users_consent_and_tells_the_model_only_the_site() {
        let vault = vault();
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let (b, p, stop) = (
            FakeBrowser::default(),
            panel(&["always"]),
            AtomicBool::new(false),
        );
        let report = hook
            .on_page(&sign_in_page(&format!("{SHOP}/login")), &ctx(&b, &p, &stop))
            .await
            .unwrap();
        assert!(report.acted);
        assert!(!report.text.contains(PASSWORD));
        assert!(p.asked.lock().unwrap()[0].starts_with("Sign in to https://shop.example as alice"));
        let sent = b.sent.lock().unwrap().clone();
        let fields: Vec<Option<SecretKind>> = sent
            .iter()
            .map(|(_, _, f)| f.as_ref().map(|f| f.kind))
            .collect();
        assert_eq!(
            fields,
            [Some(SecretKind::Username), Some(SecretKind::Password), None]
        );
        assert!(sent
            .iter()
            .all(|(_, _, f)| f.as_ref().is_none_or(|f| f.origin == SHOP)));
        assert!(matches!(&sent[1].1, Action::Type { text, submit: false, .. } if text == PASSWORD));
        assert!(matches!(&sent[2].1, Action::Click { target } if target.index == 2));

        // The next page has no form: signed in.
        let home = page_of(&format!("{SHOP}/"), "Shop", vec![]);
        let done = hook.on_page(&home, &ctx(&b, &p, &stop)).await.unwrap();
        assert_eq!(done.text, "signed in to https://shop.example");
        assert!(!done.acted);
        assert_eq!(audit(&vault)[1..], ["consented", "filled", "signed in"]);
        // "Always" is kept: a new task signs in without asking.
        let again = AutoLogin::new(vault.clone(), true, Overrides::default());
        let (b2, p2) = (FakeBrowser::default(), panel(&[]));
        again
            .on_page(
                &sign_in_page(&format!("{SHOP}/login")),
                &ctx(&b2, &p2, &stop),
            )
            .await
            .unwrap();
        assert!(p2.asked.lock().unwrap().is_empty());
        let done = again.on_page(&home, &ctx(&b2, &p2, &stop)).await.unwrap();
        assert_eq!(done.text, "signed in to https://shop.example as alice");
    }

    #[tokio::test]
    async fn a_refused_password_is_reported_with_the_sites_words_and_not_retried() {
        let vault = vault();
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let (b, p, stop) = (
            FakeBrowser::default(),
            panel(&["yes"]),
            AtomicBool::new(false),
        );
        let page = sign_in_page(&format!("{SHOP}/login"));
        hook.on_page(&page, &ctx(&b, &p, &stop)).await.unwrap();
        let mut again = page.clone();
        again.text = "Sign in Wrong username or password. Username".into();
        let failed = hook.on_page(&again, &ctx(&b, &p, &stop)).await.unwrap();
        assert!(failed.text.contains("did not accept"), "{}", failed.text);
        assert!(failed.text.contains("Wrong username or password."));
        assert_eq!(hook.on_page(&again, &ctx(&b, &p, &stop)).await, None);
        assert_eq!(b.sent.lock().unwrap().len(), 3, "not tried twice");
        assert_eq!(audit(&vault).last().map(String::as_str), Some("failed"));
    }

    #[tokio::test]
    async fn look_alike_origins_get_nothing() {
        let vault = vault();
        let stop = AtomicBool::new(false);
        for url in [
            "http://shop.example/login",
            "https://www.shop.example/login",
            "https://shop.example:8443/login",
            "https://shop.example.evil.test/login",
        ] {
            let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
            let (b, p) = (FakeBrowser::default(), panel(&["yes"]));
            let report = hook.on_page(&sign_in_page(url), &ctx(&b, &p, &stop)).await;
            assert!(b.sent.lock().unwrap().is_empty(), "{url}");
            assert!(p.asked.lock().unwrap().is_empty(), "{url}");
            // Near misses are explained; a stranger's site is not even told a sign-in exists.
            match url {
                "https://shop.example.evil.test/login" => assert_eq!(report, None),
                _ => assert!(
                    report
                        .unwrap()
                        .text
                        .contains("did not use the saved sign-in"),
                    "{url}"
                ),
            }
        }
        // A form in a frame from another origin, on the shop's own page.
        let mut framed = sign_in_page(&format!("{SHOP}/login"));
        for n in &mut framed.root.children {
            n.frame_id = Some(7);
        }
        framed.root.children.push(DomNode {
            tag: "iframe".into(),
            href: Some("https://evil.test/login".into()),
            frame_id: Some(7),
            ..Default::default()
        });
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let (b, p) = (FakeBrowser::default(), panel(&["yes"]));
        assert_eq!(hook.on_page(&framed, &ctx(&b, &p, &stop)).await, None);
        assert!(b.sent.lock().unwrap().is_empty());
        // The shop's own sign-in, framed by a stranger's page.
        let mut trap = sign_in_page(&format!("{SHOP}/login"));
        trap.url = "https://evil.test/win-a-prize".into();
        for n in &mut trap.root.children {
            n.frame_id = Some(7);
        }
        trap.root.children.push(DomNode {
            tag: "iframe".into(),
            href: Some(format!("{SHOP}/login")),
            frame_id: Some(7),
            ..Default::default()
        });
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let (b, p) = (FakeBrowser::default(), panel(&["yes"]));
        let report = hook.on_page(&trap, &ctx(&b, &p, &stop)).await.unwrap();
        assert!(
            !report.acted && report.text.contains("another site"),
            "{}",
            report.text
        );
        assert!(b.sent.lock().unwrap().is_empty());
        assert!(
            p.asked.lock().unwrap().is_empty(),
            "the user is not even asked"
        );
        // On the shop's own page, the same frame is the shop's.
        trap.url = format!("{SHOP}/account");
        assert_eq!(framed_by_another_site(&trap, 7, SHOP), None);
    }

    #[tokio::test]
    async fn a_locked_vault_asks_the_user_to_unlock_it() {
        let vault = vault();
        vault.lock();
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let stop = AtomicBool::new(false);
        let (b, mut p) = (FakeBrowser::default(), panel(&["yes", "unlocked"]));
        p.unlock = Some(vault.clone());
        let report = hook
            .on_page(&sign_in_page(&format!("{SHOP}/login")), &ctx(&b, &p, &stop))
            .await
            .unwrap();
        assert!(report.acted, "{}", report.text);
        let asked = p.asked.lock().unwrap().clone();
        assert!(asked[1].starts_with("The vault is locked"), "{asked:?}");

        // Still locked after the answer: not signed in, said so, not asked again.
        vault.lock();
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let (b, p) = (FakeBrowser::default(), panel(&["yes", "done"]));
        let report = hook
            .on_page(&sign_in_page(&format!("{SHOP}/login")), &ctx(&b, &p, &stop))
            .await
            .unwrap();
        assert_eq!(
            report.text,
            "not signed in to https://shop.example: the vault is still locked"
        );
        assert!(b.sent.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_models_placeholder_is_filled_only_into_the_right_field() {
        let vault = vault();
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let stop = AtomicBool::new(false);
        let (b, p) = (FakeBrowser::default(), panel(&["yes"]));
        let mut page = sign_in_page(&format!("{SHOP}/login"));
        let mut search = element(3, "input", Some("search"), None, "Search");
        search.rect.width = 100.0;
        search.rect.height = 20.0;
        page.root.children.push(search);
        let typing = |index: u32, text: &str| Action::Type {
            target: Target {
                index,
                fingerprint: Default::default(),
            },
            text: text.into(),
            submit: false,
            clear: true,
        };
        let c = ctx(&b, &p, &stop);
        assert_eq!(hook.resolve(&typing(3, "socks"), &page, &c).await, Ok(None));
        // The password into the search box, or inside other text: refused.
        let into_search = hook
            .resolve(&typing(3, "{{secret:password}}"), &page, &c)
            .await;
        assert!(into_search
            .unwrap_err()
            .contains("not a visible password field"));
        let inside = hook
            .resolve(&typing(1, "pw: {{secret:password}}"), &page, &c)
            .await;
        assert!(inside.is_err());
        let (action, field) = hook
            .resolve(&typing(1, "{{secret:password}}"), &page, &c)
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(action, Action::Type { text, .. } if text == PASSWORD));
        assert_eq!(
            field,
            SecretField {
                origin: SHOP.into(),
                kind: SecretKind::Password,
                site: rules::secret_field(SHOP, SecretKind::Password).site,
            }
        );
        // The same placeholder on another origin's page.
        let mut elsewhere = page.clone();
        elsewhere.url = "https://evil.test/login".into();
        let refused = hook
            .resolve(&typing(1, "{{secret:password}}"), &elsewhere, &c)
            .await;
        assert_eq!(
            refused,
            Err("there is no saved sign-in for https://evil.test".into())
        );
        assert!(audit(&vault).iter().filter(|w| *w == "refused").count() >= 3);

        // A page that shows the typed password back: the model reads the placeholder.
        let mut echo = page_of(
            &format!("{SHOP}/"),
            "Shop",
            vec![element(0, "a", None, None, PASSWORD)],
        );
        echo.text = format!("You typed {PASSWORD}");
        hook.scrub(&mut echo);
        assert_eq!(echo.text, "You typed {{secret:password}}");
        assert_eq!(
            echo.root.children[0].name.as_deref(),
            Some("{{secret:password}}")
        );
        assert!(!serde_json::to_string(&echo).unwrap().contains(PASSWORD));

        // A form sent with GET: the next page's address and title hold it form-encoded and
        // percent-encoded, and so does what the loop is told of the action.
        let form_encoded = PASSWORD.replace(' ', "+");
        let mut next = page_of(
            &format!("{SHOP}/account?user=alice&pw={form_encoded}"),
            &format!("Results for {}", PASSWORD.replace(' ', "%20")),
            vec![],
        );
        hook.scrub(&mut next);
        assert_eq!(
            next.url,
            format!("{SHOP}/account?user=alice&pw={{{{secret:password}}}}")
        );
        assert_eq!(next.title, "Results for {{secret:password}}");
        let mut outcome = format!("opened {SHOP}/account?pw={form_encoded}");
        hook.scrub_text(&mut outcome);
        assert!(!outcome.contains("horse"), "{outcome}");
    }

    #[tokio::test]
    async fn two_steps_and_a_code() {
        let vault = vault();
        let hook = AutoLogin::new(vault.clone(), false, Overrides::default());
        let stop = AtomicBool::new(false);
        let (b, p) = (FakeBrowser::default(), panel(&["yes"]));
        let sized = |mut n: DomNode| {
            n.rect.width = 100.0;
            n.rect.height = 20.0;
            n
        };
        let first = page_of(
            &format!("{SHOP}/signin"),
            "Sign in",
            vec![
                sized(element(0, "input", Some("email"), None, "Username")),
                sized(element(1, "button", None, None, "Next")),
            ],
        );
        let second = page_of(
            &format!("{SHOP}/signin"),
            "Sign in",
            vec![
                sized(element(0, "input", Some("password"), None, "Password")),
                sized(element(1, "button", None, None, "Sign in")),
            ],
        );
        let mut code = element(0, "input", Some("text"), None, "One-time code");
        code.attributes
            .push(("autocomplete".into(), "one-time-code".into()));
        let third = page_of(
            &format!("{SHOP}/signin/code"),
            "Two-step verification",
            vec![
                sized(code),
                sized(element(1, "button", None, None, "Verify")),
            ],
        );
        let c = ctx(&b, &p, &stop);
        for page in [&first, &second, &third] {
            assert!(hook.on_page(page, &c).await.unwrap().acted);
        }
        let done = hook
            .on_page(&page_of(&format!("{SHOP}/"), "Shop", vec![]), &c)
            .await;
        assert_eq!(done.unwrap().text, "signed in to https://shop.example");
        let kinds: Vec<SecretKind> = b
            .sent
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(_, _, f)| f.as_ref().map(|f| f.kind))
            .collect();
        assert_eq!(
            kinds,
            [SecretKind::Username, SecretKind::Password, SecretKind::Totp]
        );
        assert_eq!(
            p.asked.lock().unwrap().len(),
            1,
            "one consent for the whole sign-in"
        );
    }
}
