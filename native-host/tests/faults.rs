//! Faults a user's machine has, with the real binary: the host killed outright (SIGKILL, so no
//! clean-up of its own runs) while it writes, and two hosts (one per browser profile) writing
//! into one store at once. A user's decisions are what the store must not lose: an "always
//! allow" or a sign-in consent that vanished would make the agent ask again at best. The action
//! cache is written at the end of every successful run, and a run's entries kept only in part
//! would replay half of what worked.
//!
//! The writes are the host's own, driven from outside as a browser drives them: `vault import`
//! on the command line, and tasks over native messaging with an OpenAI-compatible stand-in for
//! the model, so no test-only code is in the binary. A kill waits for rows a reader beside the
//! host has seen committed, never for a fixed time. After it, every row that reader saw and
//! every row the host had acted on is still there, the store passes SQLite's integrity check,
//! and a fresh host on the same store writes on.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use itinero_host::store::{Store, FILE_NAME};
use itinero_host::vault::key_store::NoKeyring;
use itinero_host::vault::Vault;
use itinero_shared::messages::{
    ActionOutcomeReport, Captured, ObservationReport, Outcome, StartTask, TaskEventKind,
    TaskOptions, TaskStatus, UserReply,
};
use itinero_shared::observation::{DomNode, Observation, Rect};
use itinero_shared::{
    encode_frame, Action, Direction, Envelope, Fingerprint, FrameDecoder, ToBrowser, ToHost,
    DEV_EXTENSION_ID,
};
use serde_json::{json, Value};

const PASSPHRASE: &str = "tr0ub4dor&3 tr0ub4dor";
/// Generous: a row takes milliseconds; this is only how long a broken test waits.
const PATIENCE: Duration = Duration::from_secs(120);
/// How often a waiting test looks again at what it waits for.
const POLL: Duration = Duration::from_millis(2);

fn vault_cli(data: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_itinero-host"));
    cmd.arg("vault")
        .args(args)
        .env("ITINERO_DATA_DIR", data)
        .env("ITINERO_VAULT_KEYRING", "off")
        .env("ITINERO_VAULT_PASSPHRASE", PASSPHRASE)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Creates the vault with its passphrase (the first add does).
fn create(data: &Path) {
    let mut child = vault_cli(data, &["add", "https://first.example", "ann"])
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"first password\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Bitwarden-style export of `n` sign-ins on `site-{tag}-{i}.example`.
fn export(dir: &Path, tag: &str, n: usize) -> std::path::PathBuf {
    let mut csv = String::from("url,username,password\n");
    for i in 0..n {
        csv.push_str(&format!(
            "https://site-{tag}-{i}.example/,user{i},pw-{tag}-{i}\n"
        ));
    }
    let path = dir.join(format!("{tag}.csv"));
    std::fs::write(&path, csv).unwrap();
    path
}

fn import(data: &Path, csv: &Path) -> Child {
    vault_cli(data, &["import", csv.to_str().unwrap()])
        .spawn()
        .unwrap()
}

/// The sign-ins the store holds now, counted by a reader beside the writer.
fn saved(data: &Path) -> usize {
    let store = Store::open(&data.join("itinero.sqlite3")).unwrap();
    let vault = Vault::new(store, Box::new(NoKeyring("tests".into())));
    vault.list().unwrap().len()
}

/// The store is whole, and every sign-in in it opens with the passphrase's key.
fn check(data: &Path) -> usize {
    let store = Store::open(&data.join("itinero.sqlite3")).unwrap();
    assert_eq!(store.integrity_check().unwrap(), Ok(()));
    let vault = Vault::new(store, Box::new(NoKeyring("tests".into())));
    vault.unlock(PASSPHRASE).unwrap();
    let all = vault.list().unwrap();
    for c in &all {
        let (_, secrets) = vault
            .secrets(c.id)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", c.username, c.origin));
        assert!(!secrets.password.is_empty());
    }
    all.len()
}

#[test]
fn a_host_killed_in_the_middle_of_an_import_loses_no_committed_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    create(&data);
    let csv = export(dir.path(), "a", 3000);
    let mut child = import(&data, &csv);
    // Killed once it is well into the rows (and long before it is done).
    let started = Instant::now();
    let mut seen = saved(&data);
    while seen < 60 {
        assert!(started.elapsed() < PATIENCE, "the import never got going");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import finished before it could be killed ({seen} saved)"
        );
        std::thread::yield_now();
        seen = saved(&data);
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let after_kill = check(&data);
    assert!(
        after_kill > 1 && after_kill < 3001,
        "{after_kill} sign-ins after the kill"
    );

    // Running it again adds what was missing and updates the rest.
    let out = import(&data, &csv).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(check(&data), 3001);
}

#[test]
fn two_hosts_importing_into_one_store_at_once_both_finish() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    create(&data);
    let (a, b) = (export(dir.path(), "a", 400), export(dir.path(), "b", 400));
    let (one, two) = (import(&data, &a), import(&data, &b));
    for child in [one, two] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer failed beside the other: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(check(&data), 801);
}

// ---- the host serving a browser: consents and the action cache ----

/// The text of a page where the goal is reached: the fake model says `done` once it sees it.
const DONE_TEXT: &str = "Thank you, all is done here.";
/// Rows a host writes before it is killed: enough that the kill lands in a stream of writes,
/// not before the first.
const ROWS_BEFORE_KILL: usize = 20;
/// Sign-ins saved for the sign-in scene. The killed host gets the first ones and the fresh host
/// the last ones: a site whose consent is kept is not asked again, so the fresh host's sites
/// must be new.
const SIGN_INS: usize = 300;
const FRESH_SIGN_INS: std::ops::Range<usize> = 290..300;

/// An OpenAI-compatible server standing in for the model, on its own runtime for as long as the
/// test holds it: deterministic, and it needs no test-only backend in the binary.
struct Model {
    url: String,
    _runtime: tokio::runtime::Runtime,
}

impl Model {
    fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let app = axum::Router::new().route("/v1/chat/completions", axum::routing::post(decide));
        runtime.spawn(async move { axum::serve(listener, app).await });
        Self {
            url: format!("http://{addr}/v1"),
            _runtime: runtime,
        }
    }
}

/// The model's one rule: click the page's first element until the page says it is done.
async fn decide(axum::Json(body): axum::Json<Value>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let prompt: String = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_str())
        .collect();
    let reply = if prompt.contains(DONE_TEXT) {
        r#"{"thought": "the page says it is done", "action": "done", "answer": "finished"}"#
    } else {
        r#"{"thought": "the button does it", "action": "click", "index": 0}"#
    };
    if body["stream"] == json!(true) {
        let chunk = json!({"choices": [{"delta": {"content": reply}, "finish_reason": "stop"}]});
        (
            [("content-type", "text/event-stream")],
            format!("data: {chunk}\n\ndata: [DONE]\n\n"),
        )
            .into_response()
    } else {
        axum::Json(json!({
            "choices": [{"message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}]
        }))
        .into_response()
    }
}

/// What the browser shows on each site, and so which row the host writes there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scene {
    /// "Buy now" waits for approval; the user answers "always": a row in `site_approvals`.
    Shop,
    /// A harmless "Show details", then done: the run's steps go to `action_cache`.
    Details,
    /// A sign-in form for a saved sign-in; the user answers "always" to signing in (a row in
    /// `vault_consent`) and skips unlocking the vault.
    SignIn,
}

impl Scene {
    fn goal(self) -> &'static str {
        match self {
            Scene::Shop => "buy the socks",
            Scene::Details => "open the details",
            Scene::SignIn => "sign in to my account",
        }
    }

    /// The site's page, before and after the first element was clicked.
    fn page(self, origin: &str, clicked: bool) -> Observation {
        let mut nodes = match (self, clicked) {
            (Scene::Shop, false) => vec![element(0, "button", None, "Buy now")],
            (Scene::Details, false) => vec![element(0, "button", None, "Show details")],
            (Scene::Shop | Scene::Details, true) => Vec::new(),
            (Scene::SignIn, _) => vec![
                element(0, "input", Some("text"), "Username"),
                element(1, "input", Some("password"), "Password"),
                element(2, "button", None, "Sign in"),
            ],
        };
        let done = clicked || self == Scene::SignIn;
        if done {
            nodes.push(DomNode {
                tag: "#text".into(),
                text: Some(DONE_TEXT.into()),
                ..Default::default()
            });
        }
        Observation {
            url: format!("{origin}/page"),
            title: "A site".into(),
            viewport: Rect {
                x: 0.0,
                y: 0.0,
                width: 1280.0,
                height: 800.0,
            },
            root: DomNode {
                tag: "body".into(),
                children: nodes,
                ..Default::default()
            },
            text: if done {
                DONE_TEXT.into()
            } else {
                String::new()
            },
            ..Default::default()
        }
    }

    /// The origins the scene's table holds, read beside the host.
    fn rows(self, db: &rusqlite::Connection) -> BTreeSet<String> {
        let sql = match self {
            Scene::Shop => "SELECT origin FROM site_approvals WHERE kind = 'buy'",
            Scene::Details => "SELECT DISTINCT origin FROM action_cache",
            Scene::SignIn => "SELECT origin FROM vault_consent",
        };
        let mut stmt = db.prepare(sql).unwrap();
        let rows = stmt
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        rows
    }
}

fn element(index: u32, tag: &str, input_type: Option<&str>, name: &str) -> DomNode {
    DomNode {
        index: Some(index),
        tag: tag.into(),
        input_type: input_type.map(Into::into),
        name: Some(name.into()),
        rect: Rect {
            x: 20.0,
            y: 20.0 + 50.0 * f64::from(index),
            width: 240.0,
            height: 32.0,
        },
        in_viewport: true,
        fingerprint: Some(Fingerprint {
            tag: tag.into(),
            name: Some(name.into()),
            path: format!(">{tag}[{index}]"),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The sites of `tag`, named as `export` names them, so a sign-in is saved for each.
fn sites(tag: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range
        .map(|i| format!("https://site-{tag}-{i}.example"))
        .collect()
}

/// A host as the browser starts it, on pipes, with the fake model.
fn serve(data: &Path, model: &Model) -> Child {
    Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg(format!("chrome-extension://{DEV_EXTENSION_ID}/"))
        .env("ITINERO_DATA_DIR", data)
        // No OS secret store: the vault stays locked, and its consent is asked all the same.
        .env("ITINERO_VAULT_KEYRING", "off")
        .env("ITINERO_OPENAI_URL", &model.url)
        .env_remove("ITINERO_OPENAI_KEY")
        // The model decides every step, so what it is told to do is what happens.
        .env("ITINERO_GROUNDING", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The extension's side of one host's pipes.
struct Browser {
    stdin: ChildStdin,
    stdout: ChildStdout,
    decoder: FrameDecoder,
    next_id: u64,
}

impl Browser {
    fn of(host: &mut Child) -> Self {
        Self {
            stdin: host.stdin.take().unwrap(),
            stdout: host.stdout.take().unwrap(),
            decoder: FrameDecoder::new(Direction::ToBrowser),
            next_id: 1,
        }
    }

    fn send(&mut self, id: u64, msg: ToHost) -> Result<(), String> {
        let frame = encode_frame(&Envelope::new(id, msg).to_json(), Direction::ToHost).unwrap();
        self.stdin
            .write_all(&frame)
            .map_err(|e| format!("the host stopped reading: {e}"))
    }

    /// A request of the browser's own, with a new id.
    fn request(&mut self, msg: ToHost) -> Result<u64, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(id, msg).map(|()| id)
    }

    fn next(&mut self) -> Result<Envelope<ToBrowser>, String> {
        let mut buf = [0u8; 64 * 1024];
        loop {
            if let Some(frame) = self.decoder.next_frame().unwrap() {
                return Ok(Envelope::from_json(&frame).unwrap());
            }
            match self.stdout.read(&mut buf) {
                Ok(0) => return Err("the host closed its output".into()),
                Ok(n) => self.decoder.push(&buf[..n]),
                Err(e) => return Err(format!("the host's output failed: {e}")),
            }
        }
    }

    /// Runs one task per site in `origins`, answering as the extension and the user would.
    /// Pushes each site onto `confirmed` once the host has shown its row is committed: it
    /// performed the approved step (the approval is written before), asked its next question
    /// after the sign-in consent, or reported the task finished (the cache is written before).
    /// Calls `writing` when the host is about to write the row (the "always" is sent, or the
    /// model's `done` is decided), so a kill can land on the write. `Err` once the host is gone.
    fn tasks(
        &mut self,
        scene: Scene,
        origins: &[String],
        confirmed: &mut Vec<String>,
        writing: &dyn Fn(),
    ) -> Result<(), String> {
        for origin in origins {
            let start = self.request(ToHost::StartTask(StartTask {
                goal: scene.goal().into(),
                tab_id: 1,
                options: TaskOptions {
                    max_steps: Some(6),
                    backend: Some("openai".into()),
                    model: Some("fake".into()),
                    ..Default::default()
                },
            }))?;
            let (mut clicked, mut always) = (false, false);
            loop {
                let env = self.next()?;
                match env.msg {
                    ToBrowser::Observe(o) => self.send(
                        env.id,
                        ToHost::Observation(ObservationReport {
                            task_id: o.task_id,
                            tab_id: o.tab_id,
                            observation: scene.page(origin, clicked),
                        }),
                    )?,
                    ToBrowser::Perform(p) => {
                        if scene == Scene::Shop && always {
                            confirmed.push(origin.clone());
                            always = false;
                        }
                        clicked |=
                            matches!(&p.action, Action::Click { target } if target.index == 0);
                        self.send(
                            env.id,
                            ToHost::ActionOutcome(ActionOutcomeReport {
                                task_id: p.task_id,
                                tab_id: p.tab_id,
                                outcome: Outcome::Done,
                                elapsed_ms: 1,
                            }),
                        )?;
                    }
                    // A picture (a JPEG's first and last bytes): the host writes it down
                    // after each step, so the kills land among those writes too.
                    ToBrowser::Capture(c) => self.send(
                        env.id,
                        ToHost::Captured(Captured {
                            tab_id: c.tab_id,
                            jpeg_base64: "/9j/2Q==".into(),
                        }),
                    )?,
                    ToBrowser::AskUser(q) => {
                        let reply = match (scene, q.kind.as_str()) {
                            (Scene::Shop | Scene::SignIn, "approval") if q.can_always => "always",
                            (Scene::SignIn, "question") if always => {
                                confirmed.push(origin.clone());
                                "skip"
                            }
                            _ => return Err(format!("{origin}: an unexpected question: {q:?}")),
                        };
                        always = reply == "always";
                        self.request(ToHost::UserReply(UserReply {
                            task_id: q.task_id,
                            question_id: q.question_id,
                            reply: reply.into(),
                            remember: false,
                        }))?;
                        if always {
                            writing();
                        }
                    }
                    ToBrowser::TaskEvent(e) => {
                        let done = matches!(
                            &e.kind,
                            TaskEventKind::Decided {
                                action: Action::Done { .. },
                                ..
                            }
                        );
                        if scene == Scene::Details && done {
                            writing();
                        }
                    }
                    ToBrowser::TaskFinished(f) if env.id == start => {
                        if f.status != TaskStatus::Succeeded {
                            return Err(format!("{origin}: the task ended {f:?}"));
                        }
                        if scene == Scene::Details {
                            confirmed.push(origin.clone());
                        }
                        break;
                    }
                    other => return Err(format!("{origin}: unexpected {other:?}")),
                }
            }
        }
        Ok(())
    }
}

/// A browser driving `host` through `origins` on a thread of its own; joined, it gives the
/// sites confirmed and how the drive ended. `writing` hears of each write about to happen.
fn drive(
    host: &mut Child,
    scene: Scene,
    origins: Vec<String>,
    writing: Option<Sender<()>>,
) -> std::thread::JoinHandle<(Vec<String>, Result<(), String>)> {
    let mut browser = Browser::of(host);
    std::thread::spawn(move || {
        let mut confirmed = Vec::new();
        let writing = || {
            if let Some(tx) = &writing {
                // Nobody listens once the kill is done.
                let _ = tx.send(());
            }
        };
        let end = browser.tasks(scene, &origins, &mut confirmed, &writing);
        (confirmed, end)
    })
}

/// Drives a fresh host through `origins` to the end, and closes it as the browser does.
fn drive_to_the_end(data: &Path, model: &Model, scene: Scene, origins: &[String]) {
    let mut host = serve(data, model);
    let (confirmed, end) = drive(&mut host, scene, origins.to_vec(), None)
        .join()
        .unwrap();
    end.unwrap();
    assert_eq!(confirmed, origins);
    // The browser went away (stdin closed with the driver): the host ends by itself.
    assert!(host.wait().unwrap().success());
}

/// A connection beside the hosts that only reads: it sees each commit and writes nothing.
fn reader(data: &Path) -> rusqlite::Connection {
    let db = rusqlite::Connection::open_with_flags(
        data.join(FILE_NAME),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    db.busy_timeout(PATIENCE).unwrap();
    db
}

/// The store is whole, and each run's cache entries (one transaction) are all there or none
/// is; returns the scene's rows in it.
fn sound(data: &Path, scene: Scene) -> BTreeSet<String> {
    let store = Store::open(&data.join(FILE_NAME)).unwrap();
    assert_eq!(store.integrity_check().unwrap(), Ok(()));
    let db = reader(data);
    // Every task takes the same steps on its own site, so every site has as many entries.
    let mut stmt = db
        .prepare("SELECT count(*) FROM action_cache GROUP BY origin")
        .unwrap();
    let per_site: BTreeSet<i64> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert!(per_site.len() <= 1, "entries per site: {per_site:?}");
    scene.rows(&db)
}

/// A host writing `scene`'s rows one task after another, killed (SIGKILL) as it starts the next
/// write once the reader has seen `ROWS_BEFORE_KILL` of them: every row committed before the
/// kill is still there, the store is whole, and a fresh host writes on. Where in that write the
/// kill lands varies from run to run; what must hold does not.
fn killed_while_writing(scene: Scene) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (doomed, fresh) = if scene == Scene::SignIn {
        create(&data);
        let csv = export(dir.path(), "c", SIGN_INS);
        let out = import(&data, &csv).wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            sites("c", 0..FRESH_SIGN_INS.start),
            sites("c", FRESH_SIGN_INS),
        )
    } else {
        drop(Store::open(&data.join(FILE_NAME)).unwrap());
        (sites("k", 0..10_000), sites("f", 0..10))
    };
    let model = Model::start();
    let mut host = serve(&data, &model);
    let (tx, writing) = std::sync::mpsc::channel();
    let browser = drive(&mut host, scene, doomed, Some(tx));
    let db = reader(&data);
    let started = Instant::now();
    while scene.rows(&db).len() < ROWS_BEFORE_KILL {
        assert!(started.elapsed() < PATIENCE, "the host never got going");
        if let Some(status) = host.try_wait().unwrap() {
            let (confirmed, end) = browser.join().unwrap();
            panic!(
                "the host ended ({status}) before it could be killed, {} confirmed: {end:?}",
                confirmed.len()
            );
        }
        // Only the pace of looking; what is waited for is the rows.
        std::thread::sleep(POLL);
    }
    let seen = scene.rows(&db);
    // The next write to start is the one the kill lands on.
    while writing.try_recv().is_ok() {}
    if let Err(e) = writing.recv_timeout(PATIENCE) {
        let _ = host.kill();
        let (confirmed, end) = browser.join().unwrap();
        panic!(
            "no write came ({e}); {} confirmed: {end:?}",
            confirmed.len()
        );
    }
    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    drop(db);
    let (confirmed, end) = browser.join().unwrap();
    assert!(
        end.is_err(),
        "the browser finished before the host was killed"
    );
    assert!(confirmed.len() >= ROWS_BEFORE_KILL - 1, "{confirmed:?}");

    let kept = sound(&data, scene);
    let lost: BTreeSet<&String> = seen
        .iter()
        .chain(&confirmed)
        .filter(|o| !kept.contains(*o))
        .collect();
    assert!(
        lost.is_empty(),
        "committed before the kill, gone after it: {lost:?}"
    );

    drive_to_the_end(&data, &model, scene, &fresh);
    let after = sound(&data, scene);
    assert!(after.is_superset(&kept));
    assert!(fresh.iter().all(|o| after.contains(o)), "{after:?}");
}

#[test]
fn a_host_killed_while_writing_approvals_loses_no_committed_one() {
    killed_while_writing(Scene::Shop);
}

#[test]
fn a_host_killed_while_writing_the_action_cache_loses_no_committed_entry() {
    killed_while_writing(Scene::Details);
}

#[test]
fn a_host_killed_while_writing_sign_in_consents_loses_no_committed_one() {
    killed_while_writing(Scene::SignIn);
}

#[test]
fn two_hosts_writing_approvals_and_the_cache_into_one_store_at_once_both_finish() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    drop(Store::open(&data.join(FILE_NAME)).unwrap());
    let model = Model::start();
    let (a, b) = (sites("a", 0..30), sites("b", 0..30));
    let (mut one, mut two) = (serve(&data, &model), serve(&data, &model));
    let browsers = [
        drive(&mut one, Scene::Shop, a.clone(), None),
        drive(&mut two, Scene::Shop, b.clone(), None),
    ];
    for (browser, origins) in browsers.into_iter().zip([&a, &b]) {
        let (confirmed, end) = browser.join().unwrap();
        end.unwrap_or_else(|e| panic!("a host failed beside the other: {e}"));
        assert_eq!(&confirmed, origins);
    }
    for mut host in [one, two] {
        assert!(host.wait().unwrap().success());
    }
    let all: BTreeSet<String> = a.into_iter().chain(b).collect();
    assert_eq!(sound(&data, Scene::Shop), all);
    // Each task succeeded, so each wrote its steps to the cache as well.
    assert_eq!(sound(&data, Scene::Details), all);
}
