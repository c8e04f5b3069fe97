//! What the host does to its own process and files so that a secret in its memory or its
//! records reaches no other user and no crash file.
//!
//! The host holds unsealed passwords while it fills a form and the vault key while the vault is
//! open. A core dump would write them to disk, where tools such as `systemd-coredump` keep them
//! for days; a process that can be traced lets any program of the same user read them. And the
//! data directory holds the store, the logs and the control socket, which are the user's alone.

use std::path::Path;

/// No core dumps, not traceable by other processes of the user (Linux), and every file and
/// directory the process creates readable by the user only. Called first thing in `main`.
pub fn harden_process() {
    #[cfg(unix)]
    // SAFETY: these calls take plain integers and a pointer to a local struct; none of them
    // touches memory the program owns.
    unsafe {
        libc::umask(0o077);
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::setrlimit(libc::RLIMIT_CORE, &none) != 0 {
            tracing::warn!(
                "could not turn core dumps off: {}",
                std::io::Error::last_os_error()
            );
        }
        #[cfg(target_os = "linux")]
        if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
            tracing::warn!(
                "could not make the process undumpable: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

/// Makes `dir` and the files directly in it private to the user: a data directory that an older
/// host or another tool created with wider permissions is narrowed. Missing is not an error.
pub fn make_private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if !dir.exists() {
            return Ok(());
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let mode = if kind.is_dir() {
                0o700
            } else if kind.is_file() {
                0o600
            } else {
                continue;
            };
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
