//! Whether the host process that started a run is still alive.
//!
//! Several hosts can share one store (each browser profile starts its own). When a host opens
//! the store, the runs still marked `running` belong either to a host that died mid-run
//! (interrupted) or to another host that is working right now (left alone): the process id
//! kept with each run tells them apart.
//!
//! A recycled process id makes a dead host's run look alive; it is then marked interrupted by
//! a later open, once that process is gone too. The reverse, a live host's run marked
//! interrupted, cannot happen.

/// Whether a process with this id exists (a zombie that nobody has reaped counts as existing).
#[cfg(unix)]
pub fn is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // Signal 0 checks that the process exists and may be signalled, and sends nothing.
    // SAFETY: kill with signal 0 has no effect besides its return value.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    // EPERM: it exists, but belongs to another user.
    std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether a process with this id exists and has not exited.
#[cfg(windows)]
pub fn is_alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{
        CloseHandle, GetLastError, ERROR_ACCESS_DENIED, STILL_ACTIVE,
    };
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    if pid == 0 {
        return false;
    }
    // SAFETY: plain Win32 calls on a handle this function opens and closes.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if handle.is_null() {
            // Access denied: it exists, and is not ours.
            return GetLastError() == ERROR_ACCESS_DENIED;
        }
        let mut code = 0u32;
        let read = GetExitCodeProcess(handle, &mut code) != 0;
        CloseHandle(handle);
        // When the code cannot be read, leave the run alone. (A process that exited with
        // code 259, STILL_ACTIVE's value, also counts as alive: the safe side.)
        !read || code == STILL_ACTIVE as u32
    }
}

/// Elsewhere a run's host cannot be checked: every earlier run counts as interrupted.
#[cfg(not(any(unix, windows)))]
pub fn is_alive(pid: u32) -> bool {
    pid == std::process::id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_finished_child_is_not() {
        assert!(is_alive(std::process::id()));
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_alive(pid));
        assert!(!is_alive(0));
    }
}
