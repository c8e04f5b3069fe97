//! What the session does with each message from the browser: a reply to one of the host's
//! requests goes to the link that waits for it; a request is answered, one handler each. Work
//! that may take a while (a model server, the vault's key derivation, the store) runs off the
//! read loop, which must stay free to hand replies to waiting tasks.

use itinero_shared::envelope::{Envelope, MessageSet};
use itinero_shared::messages::{
    HelloAck, ListModels, Ping, Pong, StartTask, StopTask, TaskEvent, TaskEventKind, UserReply,
    VaultRequest,
};
use itinero_shared::records::BackendChoice;
use itinero_shared::{is_host_request_id, words, ErrorCode, ToBrowser, ToHost, PROTOCOL_VERSION};
use tracing::{info, warn};

use super::link::BrowserLink;
use super::outbox::Outbox;
use super::tasks::Tasks;
use super::{api_key, panel_requests, task_setup};
use crate::llm::choose::{list_models, openai_url};
use crate::store::StoreSlot;

/// What this host build can do, announced in `HelloAck`. The store's features are announced
/// even when the store could not be opened: their requests then say why, which tells the
/// user more than a missing page would.
pub const CAPABILITIES: &[&str] = &[
    "ping",
    "tasks",
    "settings",
    "history",
    "lessons",
    "site_approvals",
    "models",
];

/// What a message is handled with.
pub struct Session<'a> {
    pub out: &'a Outbox,
    pub link: &'a BrowserLink,
    pub tasks: &'a Tasks,
    pub store: &'a StoreSlot,
}

impl Session<'_> {
    /// Handles one decoded message of `received_bytes` bytes.
    pub async fn dispatch(&self, env: Envelope<ToHost>, received_bytes: usize) {
        let id = env.id;
        match env.msg {
            reply @ (ToHost::Observation(_)
            | ToHost::ActionOutcome(_)
            | ToHost::TabList(_)
            | ToHost::Captured(_)
            | ToHost::Error(_)) => self.reply_to_host(id, reply).await,
            ToHost::Hello(hello) => {
                info!(extension = %hello.extension_version, browser = %hello.browser, "hello");
                self.out.send(id, ToBrowser::HelloAck(hello_ack())).await;
            }
            ToHost::StartTask(start) => self.start_task(id, start).await,
            ToHost::StopTask(stop) => self.stop_task(id, stop).await,
            ToHost::UserReply(reply) => self.user_reply(id, reply).await,
            ToHost::Ping(ping) => self.pong(id, ping, received_bytes).await,
            ToHost::ListModels(request) => self.list_models(id, request),
            ToHost::Vault(request) => self.vault(id, request).await,
            other => self.store_request(id, other).await,
        }
    }

    /// A reply from the browser goes to the request that waits for it.
    async fn reply_to_host(&self, id: u64, reply: ToHost) {
        let Some(unclaimed) = self.link.resolve(id, reply) else {
            return;
        };
        let kind = unclaimed.type_name();
        warn!(
            id,
            kind, "a reply nobody waits for (it came too late, or answers no request); dropped"
        );
        // A reply is never answered, except a stray one from a panel, which should learn why.
        if !is_host_request_id(id) && !matches!(unclaimed, ToHost::Error(_)) {
            self.out
                .error(
                    id,
                    ErrorCode::BadMessage,
                    format!(
                        "{kind} answers a request of the host, and the host made none with id {id}"
                    ),
                )
                .await;
        }
    }

    async fn start_task(&self, id: u64, start: StartTask) {
        if start.goal.trim().is_empty() {
            self.out
                .error(id, ErrorCode::BadBody, "the goal is empty: say what to do")
                .await;
            return;
        }
        // Its events, questions and result all come with this request's id.
        self.tasks.start(id, start);
    }

    async fn stop_task(&self, id: u64, stop: StopTask) {
        match self.tasks.stop(stop.task_id) {
            Ok(()) => self.note(id, stop.task_id, words::STOP_RECEIVED).await,
            Err(e) => self.out.error(id, ErrorCode::BadBody, e).await,
        }
    }

    async fn user_reply(&self, id: u64, reply: UserReply) {
        let task_id = reply.task_id;
        match self.tasks.reply(reply) {
            Ok(()) => self.note(id, task_id, "answer received").await,
            Err(e) => self.out.error(id, ErrorCode::BadBody, e).await,
        }
    }

    /// Tells the panel that sent request `id` what became of it, as a note of task `task_id`.
    async fn note(&self, id: u64, task_id: u64, text: &str) {
        let kind = TaskEventKind::Note { text: text.into() };
        let event = TaskEvent {
            task_id,
            step: 0,
            kind,
        };
        self.out.send(id, ToBrowser::TaskEvent(event)).await;
    }

    async fn pong(&self, id: u64, ping: Ping, received_bytes: usize) {
        let pong = Pong {
            payload: ping.echo.then_some(ping.payload),
            received_bytes: received_bytes as u64,
        };
        self.out.send(id, ToBrowser::Pong(pong)).await;
    }

    fn list_models(&self, id: u64, request: ListModels) {
        // Asking a model server may take its connect timeout: not in the read loop.
        let (out, store) = (self.out.clone(), self.store.clone());
        let vault = self.tasks.vault().cloned();
        tokio::spawn(async move {
            let settings = task_setup::settings(store.get().ok()).await;
            let url = request.openai_url.as_deref();
            let key = match request.backend.unwrap_or(settings.backend) {
                BackendChoice::OpenAi => {
                    let server = openai_url(url.or(settings.openai_url.as_deref()));
                    api_key::for_listing(vault.as_ref(), server).await
                }
                _ => None,
            };
            match list_models(request.backend, url, key, &settings).await {
                Ok(list) => out.send(id, ToBrowser::Models(list)).await,
                Err(e) => out.error(id, ErrorCode::Backend, e).await,
            }
        });
    }

    async fn vault(&self, id: u64, request: VaultRequest) {
        match self.tasks.vault_line() {
            Some(line) => line.submit(id, request, self.out.clone()),
            None => {
                let why = "the vault needs the store, which could not be opened";
                self.out.error(id, ErrorCode::StoreUnavailable, why).await;
            }
        }
    }

    /// Settings, history, lessons, approvals and skills are the store's to answer; anything
    /// else this host does not know.
    async fn store_request(&self, id: u64, request: ToHost) {
        let other = match panel_requests::answer(self.store, request).await {
            Ok(reply) => return self.out.send(id, reply).await,
            Err(other) => other,
        };
        let kind = other.type_name();
        self.out
            .error(
                id,
                ErrorCode::NotImplemented,
                format!(
                    "{kind} is not available in this version of itinero-host ({})",
                    env!("CARGO_PKG_VERSION")
                ),
            )
            .await;
    }
}

fn hello_ack() -> HelloAck {
    HelloAck {
        protocol: PROTOCOL_VERSION,
        host_version: env!("CARGO_PKG_VERSION").to_owned(),
        capabilities: CAPABILITIES.iter().map(|c| (*c).to_owned()).collect(),
        pid: std::process::id(),
    }
}
