//! Tasks over the native-messaging session, as the browser sees them: a `StartTask` in, then the
//! host's `Observe`/`Perform` requests (answered here, as the extension would), the task's events
//! and questions, and its result, all on pipes with the real framing. The model is the scripted
//! backend, named in the task's options.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use itinero_host::session::serve;
use itinero_shared::messages::{
    ActionOutcomeReport, ObservationReport, Outcome, StartTask, StopTask, TaskEventKind,
    TaskOptions, TaskStatus, UserReply,
};
use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::{
    encode_frame, Direction, Envelope, Fingerprint, FrameDecoder, ToBrowser, ToHost,
};
use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};

struct FakeBrowser {
    write: WriteHalf<DuplexStream>,
    read: ReadHalf<DuplexStream>,
    decoder: FrameDecoder,
    /// The search the page has seen, once typed.
    searched: Option<String>,
}

impl FakeBrowser {
    fn start() -> Self {
        let (browser, host) = duplex(1 << 20);
        let (host_read, host_write) = tokio::io::split(host);
        tokio::spawn(async move { serve(host_read, host_write).await });
        let (read, write) = tokio::io::split(browser);
        Self {
            write,
            read,
            decoder: FrameDecoder::new(Direction::ToBrowser),
            searched: None,
        }
    }

    async fn send(&mut self, id: u64, msg: ToHost) {
        let frame = encode_frame(&Envelope::new(id, msg).to_json(), Direction::ToHost).unwrap();
        self.write.write_all(&frame).await.unwrap();
    }

    async fn next(&mut self) -> Envelope<ToBrowser> {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if let Some(frame) = self.decoder.next_frame().unwrap() {
                return Envelope::from_json(&frame).unwrap();
            }
            let n = tokio::time::timeout(Duration::from_secs(20), self.read.read(&mut buf))
                .await
                .expect("the host answers")
                .unwrap();
            assert!(n > 0, "the host closed the pipe");
            self.decoder.push(&buf[..n]);
        }
    }

    fn page(&self) -> Observation {
        let el = |i: u32, tag: &str, itype: Option<&str>, name: &str| DomNode {
            index: Some(i),
            tag: tag.into(),
            input_type: itype.map(Into::into),
            name: Some(name.into()),
            in_viewport: true,
            fingerprint: Some(Fingerprint {
                tag: tag.into(),
                name: Some(name.into()),
                path: format!(">{tag}[{i}]"),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut children = vec![
            el(0, "input", Some("search"), "Search"),
            el(1, "button", None, "Buy now"),
        ];
        if let Some(q) = &self.searched {
            children.push(DomNode {
                tag: "#text".into(),
                text: Some(format!("Results for {q}: Wool socks 12.99 EUR")),
                ..Default::default()
            });
        }
        Observation {
            url: "https://shop.example/".into(),
            title: "Shop".into(),
            root: DomNode {
                tag: "body".into(),
                children,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// Answers the host's requests as the extension would, until a task message arrives.
    async fn next_task_message(&mut self, task_request: u64) -> ToBrowser {
        self.next_message_of(&[task_request]).await.1
    }

    /// Like [`Self::next_task_message`], for a message under any of `ids` (a task's, and the
    /// acknowledgement of an answer, which comes under the answer's own id), with its id.
    async fn next_message_of(&mut self, ids: &[u64]) -> (u64, ToBrowser) {
        loop {
            let env = self.next().await;
            match env.msg {
                ToBrowser::Observe(o) => {
                    let observation = self.page();
                    self.send(
                        env.id,
                        ToHost::Observation(ObservationReport {
                            task_id: o.task_id,
                            tab_id: o.tab_id,
                            observation,
                        }),
                    )
                    .await;
                }
                ToBrowser::Perform(p) => {
                    if let itinero_shared::Action::Type { text, .. } = &p.action {
                        self.searched = Some(text.clone());
                    }
                    self.send(
                        env.id,
                        ToHost::ActionOutcome(ActionOutcomeReport {
                            task_id: p.task_id,
                            tab_id: p.tab_id,
                            outcome: Outcome::Done,
                            elapsed_ms: 3,
                        }),
                    )
                    .await;
                }
                // No picture of the page: the run keeps why.
                ToBrowser::Capture(_) => {
                    let why = itinero_shared::messages::ErrorReply {
                        code: itinero_shared::ErrorCode::NotImplemented,
                        message: "this stand-in takes no pictures".into(),
                    };
                    self.send(env.id, ToHost::Error(why)).await;
                }
                msg => {
                    assert!(
                        ids.contains(&env.id),
                        "task messages carry the StartTask's id: {msg:?}"
                    );
                    return (env.id, msg);
                }
            }
        }
    }
}

fn script(dir: &tempfile::TempDir, steps: &str) -> String {
    let path = dir.path().join("script.json");
    std::fs::write(&path, steps).unwrap();
    format!("scripted:{}", path.display())
}

fn start(goal: &str, backend: String) -> ToHost {
    ToHost::StartTask(StartTask {
        goal: goal.into(),
        tab_id: 5,
        options: TaskOptions {
            max_steps: Some(10),
            backend: Some(backend),
            ..Default::default()
        },
    })
}

#[tokio::test]
async fn a_task_runs_to_its_answer_and_reports_each_step() {
    let dir = tempfile::tempdir().unwrap();
    let backend = script(
        &dir,
        r#"[
          {"expect": ["Goal: What do wool socks cost?"], "reply": "{\"thought\": \"search\", \"action\": \"type\", \"index\": 0, \"text\": \"wool socks\", \"submit\": true}"},
          {"expect": ["12.99 EUR"], "reply": "{\"thought\": \"found it\", \"action\": \"done\", \"answer\": \"12.99 EUR\"}"}
        ]"#,
    );
    let mut b = FakeBrowser::start();
    b.send(41, start("What do wool socks cost?", backend)).await;
    let mut events = Vec::new();
    let finished = loop {
        match b.next_task_message(41).await {
            ToBrowser::TaskEvent(e) => events.push(e),
            ToBrowser::TaskFinished(f) => break f,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(finished.status, TaskStatus::Succeeded);
    assert_eq!(finished.answer.as_deref(), Some("12.99 EUR"));
    let kinds: Vec<String> = events
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e.step,
                serde_json::to_value(&e.kind).unwrap()["event"]
                    .as_str()
                    .unwrap()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "0:started",
            "1:observed",
            "1:decided",
            "1:acted",
            "2:observed",
            "2:decided"
        ]
    );
    assert!(events.iter().all(|e| e.task_id == finished.task_id));
    match &events[2].kind {
        TaskEventKind::Decided { reason, source, .. } => {
            assert_eq!((reason.as_str(), source.as_str()), ("search", "llm"))
        }
        k => panic!("{k:?}"),
    }
}

#[tokio::test]
async fn a_risky_step_waits_for_approval_and_no_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let backend = script(
        &dir,
        r#"[{"reply": "{\"action\": \"click\", \"index\": 1}"}]"#,
    );
    let mut b = FakeBrowser::start();
    b.send(7, start("buy the socks", backend)).await;
    let (task_id, question_id) = loop {
        match b.next_task_message(7).await {
            ToBrowser::AskUser(q) => {
                assert_eq!(q.kind, "approval");
                assert!(q.question.contains("Buy now"), "{q:?}");
                break (q.task_id, q.question_id);
            }
            ToBrowser::TaskEvent(_) => {}
            other => panic!("{other:?}"),
        }
    };
    b.send(
        8,
        ToHost::UserReply(UserReply {
            task_id,
            question_id,
            reply: "no".into(),
            remember: false,
        }),
    )
    .await;
    let finished = loop {
        match b.next_message_of(&[7, 8]).await.1 {
            ToBrowser::TaskFinished(f) => break f,
            ToBrowser::TaskEvent(_) => {}
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(finished.status, TaskStatus::Stopped);
    assert!(finished.answer.unwrap().contains("you did not allow"));
}

#[tokio::test]
async fn stop_ends_a_task_waiting_on_the_user_and_bad_requests_get_errors() {
    let dir = tempfile::tempdir().unwrap();
    let backend = script(
        &dir,
        r#"[{"reply": "{\"action\": \"ask_user\", \"question\": \"Which colour?\"}"}]"#,
    );
    let mut b = FakeBrowser::start();
    b.send(3, start("buy socks in my colour", backend)).await;
    let task_id = loop {
        match b.next_task_message(3).await {
            ToBrowser::AskUser(q) => break q.task_id,
            ToBrowser::TaskEvent(_) => {}
            other => panic!("{other:?}"),
        }
    };
    b.send(4, ToHost::StopTask(StopTask { task_id })).await;
    let mut stopped = false;
    loop {
        let env = b.next().await;
        match env.msg {
            ToBrowser::TaskEvent(e) if env.id == 4 => {
                stopped = matches!(e.kind, TaskEventKind::Note { .. })
            }
            ToBrowser::TaskFinished(f) => {
                assert_eq!((env.id, f.status), (3, TaskStatus::Stopped));
                break;
            }
            ToBrowser::TaskEvent(_) => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(stopped, "the StopTask was acknowledged");

    b.send(5, ToHost::StopTask(StopTask { task_id: 999 })).await;
    match b.next().await {
        Envelope {
            id: 5,
            msg: ToBrowser::Error(e),
            ..
        } => assert!(e.message.contains("no task 999")),
        other => panic!("{other:?}"),
    }
    b.send(6, start("  ", "scripted:/nonexistent".into())).await;
    match b.next().await {
        Envelope {
            id: 6,
            msg: ToBrowser::Error(e),
            ..
        } => assert!(e.message.contains("goal is empty")),
        other => panic!("{other:?}"),
    }
    // A missing script (or model) fails the task with the reason, not the session.
    b.send(9, start("g", "scripted:/nonexistent/script.json".into()))
        .await;
    let finished = loop {
        match b.next_task_message(9).await {
            ToBrowser::TaskFinished(f) => break f,
            ToBrowser::TaskEvent(_) => {}
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(finished.status, TaskStatus::Failed);
    assert!(finished
        .answer
        .unwrap()
        .contains("cannot read /nonexistent/script.json"));
}

/// The `Authorization` header of each request an [`openai_server`] got, by path.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// An OpenAI-compatible server on loopback: it lists two models, and its model says every goal
/// is done. It records each request's `Authorization` header, and answers whoever asks.
async fn openai_server() -> (std::net::SocketAddr, Seen) {
    use axum::http::HeaderMap;
    use axum::response::IntoResponse;
    let seen: Seen = Arc::default();
    let saw = |seen: &Seen, path: &str, headers: &HeaderMap| {
        let auth = headers.get("authorization").map(|v| {
            v.to_str()
                .expect("an Authorization header is ASCII")
                .to_owned()
        });
        seen.lock().unwrap().push((path.to_owned(), auth));
    };
    let app = axum::Router::new()
        .route(
            "/v1/models",
            axum::routing::get({
                let seen = seen.clone();
                move |headers: HeaderMap| async move {
                    saw(&seen, "/v1/models", &headers);
                    axum::Json(serde_json::json!({
                        "object": "list",
                        "data": [{"id": "qwen2.5-3b", "object": "model"}, {"id": "llama-3.2-3b", "object": "model"}]
                    }))
                }
            }),
        )
        .route(
            "/v1/chat/completions",
            axum::routing::post({
                let seen = seen.clone();
                move |headers: HeaderMap, axum::Json(body): axum::Json<serde_json::Value>| async move {
                    saw(&seen, "/v1/chat/completions", &headers);
                    let reply = r#"{"thought": "nothing to do", "action": "done", "answer": "finished"}"#;
                    if body["stream"] == serde_json::json!(true) {
                        let chunk = serde_json::json!({"choices": [{"delta": {"content": reply}, "finish_reason": "stop"}]});
                        (
                            [("content-type", "text/event-stream")],
                            format!("data: {chunk}\n\ndata: [DONE]\n\n"),
                        )
                            .into_response()
                    } else {
                        axum::Json(serde_json::json!({
                            "choices": [{"message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]
                        }))
                        .into_response()
                    }
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (addr, seen)
}

#[tokio::test]
async fn a_task_on_an_openai_server_sends_the_key_the_vault_keeps_for_it() {
    use itinero_shared::messages::{ListModels, SetSettings, VaultRequest, VaultResponse};
    use itinero_shared::records::{BackendChoice, PlanMode, Settings};
    const KEY: &str = "sk-vault-7e6d5c4b3a29";
    const PASSPHRASE: &str = "correct horse battery";
    let (addr, seen) = openai_server().await;
    let mut b = FakeBrowser::start();
    let mut replies = Vec::new();
    // As the panel does it: the vault unlocked, the key saved for the server's address, and the
    // settings naming that server.
    let server = format!("http://{addr}/v1");
    for (id, msg) in [
        (
            1,
            ToHost::Vault(VaultRequest::Unlock {
                passphrase: PASSPHRASE.into(),
            }),
        ),
        (
            2,
            ToHost::Vault(VaultRequest::SetApiKey {
                server: server.clone(),
                key: KEY.into(),
            }),
        ),
        (
            3,
            ToHost::SetSettings(SetSettings {
                settings: Settings {
                    backend: BackendChoice::OpenAi,
                    model: Some("qwen2.5-3b".into()),
                    openai_url: Some(server.clone()),
                    plan: PlanMode::Off,
                    ..Default::default()
                },
            }),
        ),
        (4, ToHost::Vault(VaultRequest::Status)),
        (5, ToHost::ListModels(ListModels::default())),
    ] {
        b.send(id, msg).await;
        let reply = b.next().await;
        assert_eq!(reply.id, id);
        replies.push(format!("{:?}", reply.msg));
        match (id, reply.msg) {
            (2, ToBrowser::Vault(VaultResponse::ApiKeySaved { server })) => {
                assert_eq!(server, format!("http://{addr}"))
            }
            (4, ToBrowser::Vault(VaultResponse::Status { status })) => {
                assert_eq!(status.api_key_servers, [format!("http://{addr}")])
            }
            (5, ToBrowser::Models(list)) => assert_eq!(list.models.len(), 2),
            (1 | 3, _) => {}
            (_, other) => panic!("{other:?}"),
        }
    }

    // A task: every request to the server carries the vault's key.
    let goal = |goal: &str| {
        ToHost::StartTask(StartTask {
            goal: goal.into(),
            tab_id: 5,
            options: TaskOptions {
                max_steps: Some(5),
                ..Default::default()
            },
        })
    };
    b.send(6, goal("Tell me whether the shop opens on Sundays"))
        .await;
    let finished = loop {
        match b.next_task_message(6).await {
            ToBrowser::TaskFinished(f) => break f,
            other => replies.push(format!("{other:?}")),
        }
    };
    assert_eq!(finished.status, TaskStatus::Succeeded, "{finished:?}");
    let bearer = format!("Bearer {KEY}");
    let calls = |seen: &Seen, path: &str| -> Vec<Option<String>> {
        seen.lock()
            .unwrap()
            .iter()
            .filter(|(p, _)| p == path)
            .map(|(_, auth)| auth.clone())
            .collect()
    };
    assert_eq!(calls(&seen, "/v1/models"), [Some(bearer.clone())]);
    let chats = calls(&seen, "/v1/chat/completions");
    assert!(!chats.is_empty(), "the model was asked");
    assert!(
        chats.iter().all(|a| a.as_deref() == Some(bearer.as_str())),
        "{chats:?}"
    );

    // Locked, the task asks for the vault to be unlocked (as auto-login does), and goes on
    // with the key once it is.
    seen.lock().unwrap().clear();
    b.send(7, ToHost::Vault(VaultRequest::Lock)).await;
    assert_eq!(b.next().await.id, 7);
    // Another goal: the action cache would finish the same one without the model.
    b.send(8, goal("Tell me whether the shop delivers abroad"))
        .await;
    let (task_id, question_id) = loop {
        match b.next_task_message(8).await {
            ToBrowser::AskUser(q) => {
                assert!(
                    q.question.contains("locked")
                        && q.question.contains("Vault page")
                        && q.question.contains(&format!("http://{addr}/v1")),
                    "{q:?}"
                );
                break (q.task_id, q.question_id);
            }
            ToBrowser::TaskEvent(e) => replies.push(format!("{e:?}")),
            other => panic!("{other:?}"),
        }
    };
    assert!(seen.lock().unwrap().is_empty(), "no request before the key");
    b.send(
        9,
        ToHost::Vault(VaultRequest::Unlock {
            passphrase: PASSPHRASE.into(),
        }),
    )
    .await;
    assert_eq!(b.next().await.id, 9);
    b.send(
        10,
        ToHost::UserReply(UserReply {
            task_id,
            question_id,
            reply: "unlocked".into(),
            remember: false,
        }),
    )
    .await;
    let finished = loop {
        match b.next_message_of(&[8, 10]).await {
            (8, ToBrowser::TaskFinished(f)) => break f,
            (_, other) => replies.push(format!("{other:?}")),
        }
    };
    assert_eq!(finished.status, TaskStatus::Succeeded, "{finished:?}");
    let chats = calls(&seen, "/v1/chat/completions");
    assert!(!chats.is_empty());
    assert!(
        chats.iter().all(|a| a.as_deref() == Some(bearer.as_str())),
        "{chats:?}"
    );
    // Nothing the browser was sent holds the key.
    for r in &replies {
        assert!(!r.contains(KEY), "{r}");
    }
}

#[tokio::test]
async fn the_settings_page_can_list_a_backends_models_or_hear_why_not() {
    use itinero_shared::messages::{ErrorCode, ListModels, ModelList};
    use itinero_shared::records::BackendChoice;
    let (addr, _) = openai_server().await;

    let mut browser = FakeBrowser::start();
    browser
        .send(
            1,
            ToHost::ListModels(ListModels {
                backend: Some(BackendChoice::OpenAi),
                openai_url: Some(format!("http://{addr}/v1")),
            }),
        )
        .await;
    let reply = browser.next().await;
    assert_eq!(reply.id, 1);
    assert_eq!(
        reply.msg,
        ToBrowser::Models(ModelList {
            backend: "openai".into(),
            models: vec!["qwen2.5-3b".into(), "llama-3.2-3b".into()],
        })
    );
    // Nothing listens on the discard port.
    browser
        .send(
            2,
            ToHost::ListModels(ListModels {
                backend: Some(BackendChoice::OpenAi),
                openai_url: Some("http://127.0.0.1:9/v1".into()),
            }),
        )
        .await;
    let reply = browser.next().await;
    match reply.msg {
        ToBrowser::Error(e) => {
            assert_eq!(e.code, ErrorCode::Backend);
            assert!(e.message.contains("127.0.0.1:9"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
}
