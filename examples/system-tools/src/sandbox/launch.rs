//! The last step inside a command's namespaces, run as `system-tools-mcp --sandbox-exec …`
//! by bubblewrap once it has built the command's user, mount, pid, IPC, UTS and network
//! namespaces and its view of the file system.
//!
//! In this order, then `execve` of the program (nothing of this process survives the exec):
//!
//! 1. remount the listed mount points `noexec` (the sandbox tree, the system paths, the
//!    namespace's root): only the files bubblewrap bound one by one on top of them (the
//!    allowed programs, their loader and libraries) can be executed or mapped executable, so
//!    the loader (`ld.so FILE`) cannot run anything else;
//! 2. resource limits (`RLIMIT_NPROC`, counted per user namespace, so per call; `RLIMIT_AS`;
//!    `RLIMIT_CPU`; no core files);
//! 3. drop every capability (effective, permitted, inheritable, ambient, bounding set), keep
//!    `no_new_privs`;
//! 4. the Landlock ruleset the server prepared (its descriptor is inherited);
//! 5. the seccomp filters (`seccomp_filters`).
//!
//! Any failure prints `system-tools-mcp sandbox: …` on stderr and exits with
//! [`SETUP_FAILED`]: the program is never run half-confined.

use std::collections::BTreeMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// First argument that selects this mode of the binary.
pub const SANDBOX_EXEC_ARG: &str = "--sandbox-exec";
/// Exit status of a command whose sandbox could not be set up.
pub const SETUP_FAILED: i32 = 125;
/// Prefix of the launcher's own messages on the command's stderr.
pub const SETUP_PREFIX: &str = "system-tools-mcp sandbox: ";

/// What the launcher applies, passed on its command line.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LaunchSpec {
    pub noexec: Vec<OsString>,
    pub landlock_fd: Option<i32>,
    pub nproc: u64,
    pub address_space: u64,
    pub cpu_secs: u64,
    /// Whether TCP `listen` is allowed (the operator allowed bind ports).
    pub allow_listen: bool,
    pub program: OsString,
    pub args: Vec<OsString>,
}

impl LaunchSpec {
    /// The launcher's arguments (after the launcher path).
    pub(crate) fn to_args(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = vec![SANDBOX_EXEC_ARG.into()];
        for p in &self.noexec {
            out.push("--noexec".into());
            out.push(p.clone());
        }
        if let Some(fd) = self.landlock_fd {
            out.push("--landlock-fd".into());
            out.push(fd.to_string().into());
        }
        for (k, v) in [
            ("--nproc", self.nproc),
            ("--as", self.address_space),
            ("--cpu", self.cpu_secs),
        ] {
            out.push(k.into());
            out.push(v.to_string().into());
        }
        if self.allow_listen {
            out.push("--allow-listen".into());
        }
        out.push("--".into());
        out.push(self.program.clone());
        out.extend(self.args.iter().cloned());
        out
    }

    pub(crate) fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Self, String> {
        let mut spec = LaunchSpec::default();
        let number = |v: Option<OsString>, what: &str| -> Result<u64, String> {
            v.and_then(|v| v.to_str().and_then(|s| s.parse().ok()))
                .ok_or_else(|| format!("{what} needs a number"))
        };
        loop {
            let Some(a) = args.next() else {
                return Err("no program after --".to_string());
            };
            match a.to_str() {
                Some("--noexec") => spec
                    .noexec
                    .push(args.next().ok_or("--noexec needs a path")?),
                Some("--landlock-fd") => {
                    spec.landlock_fd = Some(
                        i32::try_from(number(args.next(), "--landlock-fd")?)
                            .map_err(|e| e.to_string())?,
                    )
                }
                Some("--nproc") => spec.nproc = number(args.next(), "--nproc")?,
                Some("--as") => spec.address_space = number(args.next(), "--as")?,
                Some("--cpu") => spec.cpu_secs = number(args.next(), "--cpu")?,
                Some("--allow-listen") => spec.allow_listen = true,
                Some("--") => break,
                _ => return Err(format!("unknown argument {a:?}")),
            }
        }
        spec.program = args.next().ok_or("no program after --")?;
        spec.args = args.collect();
        Ok(spec)
    }
}

/// Runs the launcher when the process was started as one (`args[1] == --sandbox-exec`), or
/// the sandbox holder (`src/sandbox/holder.rs`, `args[1] == --sandbox-holder`); returns only when
/// it was neither.
pub fn run_if_launcher() {
    let mut args = std::env::args_os();
    let _argv0 = args.next();
    let mut rest = args.peekable();
    let mode = rest.peek().map(|a| a.as_bytes().to_vec());
    if mode.as_deref() == Some(super::holder::HOLDER_ARG.as_bytes()) {
        rest.next();
        super::holder::run_holder(rest);
    }
    if mode.as_deref() != Some(SANDBOX_EXEC_ARG.as_bytes()) {
        return;
    }
    rest.next();
    let err = match LaunchSpec::parse(rest) {
        Ok(spec) => launch(&spec, None, false),
        Err(e) => format!("bad launcher arguments: {e}"),
    };
    eprintln!("{SETUP_PREFIX}{err}");
    std::process::exit(SETUP_FAILED);
}

/// Applies the spec and executes the program, with `env` as its environment when given (else
/// the process's own); returns only the reason it could not. `filtered`: the process has the
/// seccomp filters of `spec` already (the sandbox holder's spare call process applied them,
/// and they are inherited), so they are not stacked a second time.
pub(crate) fn launch(spec: &LaunchSpec, env: Option<&[CString]>, filtered: bool) -> String {
    for p in &spec.noexec {
        if let Err(e) = remount_noexec(p) {
            return format!("remounting {} noexec: {e}", p.to_string_lossy());
        }
    }
    let limits = [
        (libc::RLIMIT_NPROC, spec.nproc),
        (libc::RLIMIT_AS, spec.address_space),
        (libc::RLIMIT_CPU, spec.cpu_secs),
        (libc::RLIMIT_CORE, 0),
    ];
    for (resource, value) in limits {
        // SIGXCPU at the soft CPU limit, SIGKILL one second later.
        let hard = if resource == libc::RLIMIT_CPU {
            value.saturating_add(1)
        } else {
            value
        };
        let lim = libc::rlimit {
            rlim_cur: value,
            rlim_max: hard,
        };
        // SAFETY: setrlimit with a valid struct.
        if unsafe { libc::setrlimit(resource, &lim) } != 0 {
            return format!("setrlimit: {}", std::io::Error::last_os_error());
        }
    }
    // The Rust runtime of this binary ignores SIGPIPE, and an ignored signal stays ignored
    // across execve: the program gets the default (a writer to a closed pipe ends, as
    // `yes | head` expects).
    // SAFETY: setting a signal disposition in a single-threaded process about to exec.
    if unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) } == libc::SIG_ERR {
        return format!("resetting SIGPIPE: {}", std::io::Error::last_os_error());
    }
    if let Err(e) = drop_capabilities() {
        return format!("dropping capabilities: {e}");
    }
    if let Err(e) = super::kernel::restrict_self(spec.landlock_fd) {
        return format!("applying the Landlock ruleset: {e}");
    }
    // The ruleset's descriptor and anything else inherited past stdin/stdout/stderr (the
    // server's `/dev/null` for bubblewrap): the program gets none of them.
    // SAFETY: close_range on descriptors this process owns; nothing uses them afterwards.
    if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) } != 0
        && let Some(fd) = spec.landlock_fd
    {
        // SAFETY: as above (kernels before 5.9 have no close_range).
        unsafe { libc::close(fd) };
    }
    if !filtered {
        let filters = match compiled_filters(spec.allow_listen) {
            Ok(f) => f,
            Err(e) => return format!("building the seccomp filter: {e}"),
        };
        for f in filters {
            if let Err(e) = seccompiler::apply_filter(f) {
                return format!("applying the seccomp filter: {e}");
            }
        }
    }
    let Ok(program) = CString::new(spec.program.clone().into_vec()) else {
        return "the program path holds a NUL byte".to_string();
    };
    let mut argv = vec![program.clone()];
    for a in &spec.args {
        match CString::new(a.clone().into_vec()) {
            Ok(c) => argv.push(c),
            Err(_) => return "an argument holds a NUL byte".to_string(),
        }
    }
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    if let Some(env) = env {
        let mut envp: Vec<*const libc::c_char> = env.iter().map(|c| c.as_ptr()).collect();
        envp.push(std::ptr::null());
        // SAFETY: NUL-terminated strings and null-terminated arrays that outlive the call.
        unsafe { libc::execve(program.as_ptr(), ptrs.as_ptr(), envp.as_ptr()) };
        return format!(
            "cannot execute {}: {}",
            spec.program.to_string_lossy(),
            std::io::Error::last_os_error()
        );
    }
    // bubblewrap sets PWD for its --chdir; the program gets exactly the configured variables.
    // SAFETY: the launcher is single-threaded.
    unsafe { libc::unsetenv(c"PWD".as_ptr()) };
    // SAFETY: NUL-terminated strings and a null-terminated array that outlive the call;
    // `environ` is the environment bubblewrap passed on.
    unsafe { libc::execv(program.as_ptr(), ptrs.as_ptr()) };
    format!(
        "cannot execute {}: {}",
        spec.program.to_string_lossy(),
        std::io::Error::last_os_error()
    )
}

/// The seccomp filters, compiled once per process (the sandbox holder compiles them before
/// its first call, so each call's command inherits them compiled).
pub(crate) fn compiled_filters(allow_listen: bool) -> &'static Result<Vec<BpfProgram>, String> {
    static COMPILED: [std::sync::OnceLock<Result<Vec<BpfProgram>, String>>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    COMPILED[usize::from(allow_listen)].get_or_init(|| seccomp_filters(allow_listen))
}

/// Adds `noexec` (and keeps `nosuid`, `nodev`, read-only and the other flags the mount has).
pub(crate) fn remount_noexec(path: &std::ffi::OsStr) -> std::io::Result<()> {
    let c = CString::new(path.as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: statvfs/mount on a valid C string and a zeroed struct.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let keep = [
            (libc::ST_RDONLY, libc::MS_RDONLY),
            (libc::ST_NOSUID, libc::MS_NOSUID),
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOATIME, libc::MS_NOATIME),
            (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
            (libc::ST_RELATIME, libc::MS_RELATIME),
        ];
        let mut flags =
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOEXEC | libc::MS_NOSUID | libc::MS_NODEV;
        for (st_flag, ms_flag) in keep {
            if st.f_flag & st_flag != 0 {
                flags |= ms_flag;
            }
        }
        if libc::mount(
            std::ptr::null(),
            c.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Clears the bounding and ambient sets, then every capability set of the process.
fn drop_capabilities() -> std::io::Result<()> {
    // SAFETY: prctl and capset with integers and zeroed structs.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        for cap in 0..=63 {
            // Ends with EINVAL past the last capability the kernel knows.
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(e);
            }
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
        let mut header = Header {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;

/// Namespace flags a command may not pass to `clone` (`0x80` is `CLONE_NEWTIME`).
const NAMESPACE_FLAGS: [u64; 8] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80,
];

/// The seccomp filters every command runs under (the kernel stacks them):
///
/// - `clone3` answers `ENOSYS` (its flags sit in memory, out of a filter's reach), so the C
///   library falls back to `clone`, whose flags are checked;
/// - `EPERM` for: sockets other than `AF_UNIX`, and for `AF_INET`/`AF_INET6` other than
///   `SOCK_STREAM` with protocol 0 or TCP (no UDP, raw, packet, netlink or MPTCP sockets);
///   `listen` unless the operator allowed TCP bind ports; `clone` with a namespace flag;
///   `unshare`, `setns`, the mount family, `pivot_root`, `chroot`; `ptrace`,
///   `process_vm_readv/writev`, `kcmp`; kernel keyrings; `bpf`, `perf_event_open`,
///   `userfaultfd`, `io_uring_*`, `fanotify_init`; modules, `kexec_*`, `reboot`, swap,
///   `acct`, `quotactl`; clock and host-name setters; `syslog`, `iopl`, `ioperm`, `vhangup`;
///   `open_by_handle_at`, `name_to_handle_at`.
pub(crate) fn seccomp_filters(allow_listen: bool) -> Result<Vec<BpfProgram>, String> {
    let cond = |arg: u8, op: SeccompCmpOp, value: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(|e| e.to_string())
    };
    let rule = |c: Vec<SeccompCondition>| SeccompRule::new(c).map_err(|e| e.to_string());
    let mut deny: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let always = [
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_kcmp,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_fanotify_init,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_settimeofday,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_syslog,
        libc::SYS_vhangup,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_iopl,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_ioperm,
    ];
    for nr in always {
        deny.insert(nr, Vec::new());
    }
    if !allow_listen {
        deny.insert(libc::SYS_listen, Vec::new());
    }
    let (unix, inet, inet6) = (
        libc::AF_UNIX as u64,
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
    );
    let mut socket = vec![rule(vec![
        cond(0, SeccompCmpOp::Ne, unix)?,
        cond(0, SeccompCmpOp::Ne, inet)?,
        cond(0, SeccompCmpOp::Ne, inet6)?,
    ])?];
    for family in [inet, inet6] {
        // The type's low bits are the kind (SOCK_NONBLOCK/SOCK_CLOEXEC sit above them):
        // every kind but SOCK_STREAM is refused.
        for kind in [
            libc::SOCK_DGRAM,
            libc::SOCK_RAW,
            libc::SOCK_RDM,
            libc::SOCK_SEQPACKET,
            libc::SOCK_DCCP,
            10, // SOCK_PACKET (obsolete form of a packet socket)
        ] {
            socket.push(rule(vec![
                cond(0, SeccompCmpOp::Eq, family)?,
                cond(1, SeccompCmpOp::MaskedEq(0xf), kind as u64)?,
            ])?);
        }
        // Protocol 0 or TCP only (MPTCP, SCTP… refused).
        socket.push(rule(vec![
            cond(0, SeccompCmpOp::Eq, family)?,
            cond(2, SeccompCmpOp::Ne, 0)?,
            cond(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
        ])?);
    }
    deny.insert(libc::SYS_socket, socket);
    let mut clone = Vec::new();
    for flag in NAMESPACE_FLAGS {
        clone.push(rule(vec![
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .map_err(|e| e.to_string())?,
        ])?);
    }
    deny.insert(libc::SYS_clone, clone);
    let main = SeccompFilter::new(
        deny,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )
    .map_err(|e| e.to_string())?;
    let mut enosys = BTreeMap::new();
    enosys.insert(libc::SYS_clone3, Vec::new());
    let clone3 = SeccompFilter::new(
        enosys,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        ARCH,
    )
    .map_err(|e| e.to_string())?;
    Ok(vec![
        BpfProgram::try_from(clone3).map_err(|e| e.to_string())?,
        BpfProgram::try_from(main).map_err(|e| e.to_string())?,
    ])
}
