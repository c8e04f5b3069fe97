//! `itinero-host`: started by the browser it speaks native messaging on stdio (and serves
//! the control socket); started by a person it is a CLI (`install`, `uninstall`, `doctor`,
//! `tabs`, `observe`, `act` and `run`, which reach the browser through the running host, and
//! `skills`, which works on the store and runs skills through the host; `vault`; `mcp`, a server
//! for other AI tools; `models`).

use std::ffi::OsString;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use itinero_host::cli::{
    act, doctor, install, mcp, models, observe, runs, skills, stats, tabs, task, vault,
};
use itinero_host::control::ControlServer;
use itinero_host::store::StoreSlot;
use itinero_host::{hardening, logging, origin, paths, session};
use itinero_shared::codec::Direction;
use itinero_shared::envelope::Envelope;
use itinero_shared::messages::ErrorReply;
use itinero_shared::{encode_frame, ErrorCode, ToBrowser};

#[derive(Parser)]
#[command(
    name = "itinero-host",
    version,
    about = "itinero's native-messaging host. Browsers start it by themselves; people use the subcommands.",
    after_help = "Exit status: 0 done; 1 the task, action or check did not succeed (its output says why); 2 itinero could not do what was asked (no browser or host to reach, a store or file it cannot use, wrong arguments).\n\nStarted by a browser, it is given the caller's origin (chrome-extension://<id>/) and speaks the native-messaging protocol on stdin/stdout."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Register the host with browsers (writes their native-messaging manifests).
    Install(install::InstallArgs),
    /// Remove the registrations `install` wrote.
    Uninstall(install::UninstallArgs),
    /// Check the installation and print a fix for each problem.
    Doctor(doctor::DoctorArgs),
    /// List the browser's open tabs (through the running host).
    Tabs(tabs::TabsArgs),
    /// Print what the agent sees of a tab.
    Observe(observe::ObserveArgs),
    /// Perform one action in a tab and print its outcome.
    Act(act::ActArgs),
    /// Run a goal in a tab with the agent, as the side panel does, printing each step.
    Run(task::GoalArgs),
    /// The skills library: list, show, run, export, import, delete, capture a run.
    Skills(skills::SkillsArgs),
    /// The credentials itinero signs in with: add, list, remove, import, audit, unlock, lock.
    Vault(vault::VaultArgs),
    /// The run history: list runs, show one, export its report with pictures (html, md, json), delete.
    Runs(runs::RunsArgs),
    /// How the runs went over time: tasks, success, model calls, who decided the steps.
    Stats(stats::StatsArgs),
    /// Serve the browser to other AI tools over the Model Context Protocol (stdio).
    Mcp(mcp::McpArgs),
    /// The models the built-in engine can run (itinero's cache, Ollama's store), and what a GGUF holds.
    Models(models::ModelsArgs),
}

/// A task, action or check that ran and did not succeed.
const EXIT_DID_NOT_SUCCEED: u8 = 1;
/// Nothing could be done: no host to reach, an unusable store or file, wrong arguments (clap's
/// own usage errors exit with 2 too).
const EXIT_COULD_NOT_RUN: u8 = 2;

fn main() -> ExitCode {
    hardening::harden_process();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if let Some(caller) = origin::caller_from_args(&args) {
        return run_host(caller);
    }
    let cli = Cli::parse();
    logging::to_stderr();
    let result = match &cli.command {
        Command::Install(a) => install::run_install(a).map(|()| true),
        Command::Uninstall(a) => install::run_uninstall(a).map(|()| true),
        Command::Doctor(a) => doctor::run_doctor(a),
        Command::Tabs(a) => tabs::run_tabs(a),
        Command::Observe(a) => observe::run_observe(a),
        Command::Act(a) => act::run_act(a),
        Command::Run(a) => task::run_goal(a),
        Command::Skills(a) => skills::run_skills(a),
        Command::Vault(a) => vault::run_vault(a),
        Command::Runs(a) => runs::run_runs(a),
        Command::Stats(a) => stats::run_stats(a),
        Command::Mcp(a) => mcp::run_mcp(a),
        Command::Models(a) => models::run_models(a),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(EXIT_DID_NOT_SUCCEED),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_COULD_NOT_RUN)
        }
    }
}

/// Native-messaging mode. Exit codes: 0 browser closed the port, 2 unreadable stream, 3 caller refused, 1 setup failure.
fn run_host(caller: origin::Caller) -> ExitCode {
    // Files an older host left readable by others are narrowed before anything is written.
    let private = paths::data_dir().map(|dir| {
        (
            hardening::make_private(&dir),
            hardening::make_private(&dir.join("logs")),
        )
    });
    // Logging must never touch stdout here; without a log file we stay silent rather than risk it.
    let _guard = paths::log_dir().and_then(|dir| logging::to_file(&dir));
    if let Ok((Err(e), _) | (_, Err(e))) = &private {
        tracing::warn!("could not make the data directory private: {e}");
    }
    let allowed = origin::allowed_ids(paths::allowed_extensions_file().ok().as_deref());
    if !origin::is_allowed(&caller, &allowed) {
        tracing::error!(
            ?caller,
            "refusing a caller that is not an allowed extension"
        );
        refuse(&caller);
        return ExitCode::from(3);
    }
    tracing::info!(?caller, pid = std::process::id(), "host started");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("{e:#}");
            return ExitCode::from(1);
        }
    };
    // Opened before the session: runs a killed host left running are marked interrupted, and
    // a store that cannot be opened is logged and the host goes on without it.
    let store = StoreSlot::open_default();
    let end = runtime.block_on(async {
        // Watched before the socket exists: a signal that came between the two would otherwise
        // end the process with the socket file left behind.
        let termination = termination();
        let mut control = None;
        let serving = session::serve_with(
            tokio::io::stdin(),
            tokio::io::stdout(),
            store,
            |link, tasks| match ControlServer::start(link, Some(tasks)) {
                Ok(server) => control = Some(server),
                Err(e) => tracing::warn!("serving without a control socket: {e:#}"),
            },
        );
        let end = tokio::select! {
            end = serving => end,
            signal = termination => {
                tracing::info!("{signal}; exiting");
                Ok(session::SessionEnd::Closed)
            }
        };
        // Clients waiting on the browser learn that the session ended; then the socket file goes,
        // so no client finds a host that is gone.
        if let Some(control) = control {
            control.shutdown().await;
        }
        end
    });
    // Stdin is read on a blocking thread that a signal leaves waiting: do not wait for it.
    runtime.shutdown_background();
    match end {
        Ok(session::SessionEnd::Closed) => {
            tracing::info!("browser closed the port; exiting");
            ExitCode::SUCCESS
        }
        Ok(session::SessionEnd::Truncated(why)) => {
            tracing::warn!("browser went away mid-frame ({why}); exiting");
            ExitCode::SUCCESS
        }
        Ok(session::SessionEnd::ProtocolViolation(why)) => {
            tracing::error!("unreadable stream ({why}); exiting");
            ExitCode::from(2)
        }
        Err(e) => {
            tracing::error!("stdio failed: {e}");
            ExitCode::from(2)
        }
    }
}

/// Resolves when the process is asked to stop, so the control socket is removed on the way out.
/// The handlers are installed when this is called, not when the future is first polled. Where a
/// signal cannot be watched, it never resolves: the session then ends only with the browser.
fn termination() -> impl std::future::Future<Output = &'static str> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let watch = |kind: SignalKind, name: &'static str| match signal(kind) {
            Ok(stream) => Some(stream),
            Err(e) => {
                tracing::warn!("cannot watch for {name}: {e}");
                None
            }
        };
        let mut terminate = watch(SignalKind::terminate(), "SIGTERM");
        let mut interrupt = watch(SignalKind::interrupt(), "SIGINT");
        async move {
            let term = async {
                match terminate.as_mut() {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            };
            let int = async {
                match interrupt.as_mut() {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = term => "SIGTERM",
                _ = int => "SIGINT",
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            "Ctrl-C"
        }
    }
}

/// Tells a refused caller why, in the protocol it expects, then the process exits.
fn refuse(caller: &origin::Caller) {
    use std::io::Write;
    let reply = Envelope::new(
        0,
        ToBrowser::Error(ErrorReply {
            code: ErrorCode::OriginRefused,
            message: format!(
                "extension {} is not allowed to use this host; run `itinero-host install --extension-id {}`",
                caller.extension_id(),
                caller.extension_id()
            ),
        }),
    );
    if let Ok(frame) = encode_frame(&reply.to_json(), Direction::ToBrowser) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(&frame);
        let _ = out.flush();
    }
}
