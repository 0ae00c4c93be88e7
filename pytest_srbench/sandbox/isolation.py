"""What isolates a run: the machine probe's plan and the launcher (namespaces, root, uid, rlimits).

Why one long module: the launcher runs as one file in its own interpreter (``python -I -S``),
so everything it needs must be in it."""

# The launcher runs in its own interpreter (`python -I -S`, see `main`) between the runner and
# the sandboxed program, so this module imports only light standard-library modules:
#   launcher (caller's uid) -> init (pid 1 of a new PID namespace) -> main (execs the program).
# Lines on the status descriptor: `uid N`, `error STAGE MESSAGE`, `exit CODE CPU_S`,
# `signal NUMBER CPU_S`.

from __future__ import annotations

import ctypes
import marshal
import os
import resource
import signal
import stat
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    # trial(mechanisms, read_only) -> (error or None, facts printed by TRIAL_CODE)
    Trial = Callable[[tuple[str, ...], tuple[str, ...]], tuple[str | None, dict[str, Any]]]

UID_BASE = 1_900_000_000  # as root, a run's uid is UID_BASE + its launcher's pid
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt")
NEWNS, NEWIPC, NEWUSER, NEWPID, NEWNET = 0x20000, 0x8000000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
_KEPT = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096  # locked by the kernel
SYSTEM_PATHS = [f"/{name}" for name in SYSTEM_DIRS]
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "i686": 217, "s390x": 217}
_libc: Any = None


class SetupError(Exception):
    """A sandbox mechanism failed: "STAGE MESSAGE"."""


class _Stage:
    """``with _Stage(name):`` turns an OSError into a SetupError for that mechanism."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        pass

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, OSError):
            raise SetupError(f"{self.name} {exc.strerror or exc} ({exc.filename or ''})") from exc


class _Terminate(Exception):
    """Raised in init by SIGTERM (the runner's wall-clock timeout)."""


def _call(name: str, *args: object) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    result: int = getattr(_libc, name)(*args)
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno), name)
    return result


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    src, kind = (None if s is None else s.encode() for s in (source, fstype))
    try:
        _call("mount", src, target.encode(), kind, ctypes.c_ulong(flags), data.encode())
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, f"mount {source or fstype} on {target}") from None


def _quiet(func: Callable[..., object], *args: object) -> None:
    try:  # noqa: SIM105 (contextlib costs the launcher's start-up time)
        func(*args)
    except OSError:
        pass


def _emit(fd: int, line: str) -> None:
    _quiet(os.write, fd, (line.replace("\n", " ") + "\n").encode("utf-8", "replace"))


def chown_tree(root: str, uid: int, gid: int, skip_hardlinks: bool) -> None:
    """Give ``root`` and everything under it to uid:gid, never following a symlink."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for _path, dirnames, filenames, dirfd in os.fwalk(root, follow_symlinks=False):
        for name in dirnames + filenames:
            try:
                info = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
                if skip_hardlinks and info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                    continue  # never hand over a file that is also linked from elsewhere
                os.chown(name, uid, gid, dir_fd=dirfd, follow_symlinks=False)
            except FileNotFoundError:
                continue


def _build_root(workdir: str, read_only: list[str], tmp_mb: int) -> None:
    """Pivot into a tmpfs holding read-only system and Python trees, private /tmp, /var/tmp
    and /dev/shm, a fresh /proc, /dev and /sys read-only, and the working directory."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    links = [(f"/{n}", os.readlink(f"/{n}")) for n in SYSTEM_DIRS if os.path.islink(f"/{n}")]
    entries = [(f"/{n}", "ro") for n in SYSTEM_DIRS if not os.path.islink(f"/{n}")]
    entries += [(path, "ro") for path in read_only] + [("/sys", "ro"), ("/dev", "dev")]
    entries += [("/proc", "proc"), ("/tmp", "tmpfs"), ("/var/tmp", "tmpfs")]
    entries += [("/dev/shm", "tmpfs"), (workdir, "rw")]
    order = {"tmpfs": 0, "proc": 0, "dev": 0, "ro": 1, "rw": 2}
    entries.sort(key=lambda entry: (entry[0].rstrip("/").count("/"), order[entry[1]]))
    # Open every source first: the staging tmpfs is mounted over the host's /tmp.
    binds = {
        t: os.open(t, os.O_PATH | os.O_CLOEXEC)
        for t, k in entries
        if k in ("ro", "dev", "rw")
        if k == "rw" or os.path.isdir(t)
    }
    new = "/tmp"
    _mount("tmpfs", new, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for path, link in links:
        os.symlink(link, new + path)
    extra = {"ro": MS_RDONLY | MS_NODEV, "dev": MS_RDONLY | MS_NOEXEC, "rw": MS_NODEV}
    for target, kind in entries:
        where = new + target
        if kind in extra and target not in binds:
            continue
        os.makedirs(where, mode=0o755, exist_ok=True)
        if kind == "tmpfs":
            _mount("tmpfs", where, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={tmp_mb}m")
        elif kind == "proc":
            _mount("proc", where, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        else:
            fd = binds[target]  # recursive: a user namespace locks a mount to its children
            _mount(f"/proc/self/fd/{fd}", where, None, MS_BIND | MS_REC)
            kept = os.fstatvfs(fd).f_flag & _KEPT
            _mount(None, where, None, MS_REMOUNT | MS_BIND | MS_NOSUID | extra[kind] | kept)
            os.close(fd)
            if kind != "rw":  # the children too, where mount_setattr(2) exists (Linux 5.12)
                attr = (ctypes.c_uint64 * 4)(extra[kind] | MS_NOSUID, 0, 0, 0)  # MOUNT_ATTR_*
                flags = (ctypes.c_int(-100), where.encode(), ctypes.c_uint(0x8000))  # AT_RECURSIVE
                _quiet(_call, "syscall", ctypes.c_long(442), *flags, attr, ctypes.c_size_t(32))
    os.chdir(new)
    number = _PIVOT_ROOT.get(os.uname().machine)
    if number is not None:  # pivot_root(".", ".") then detach the old root stacked on top
        _call("syscall", ctypes.c_long(number), b".", b".")
        _call("umount2", b".", 2)
    else:
        os.chroot(".")
    os.chdir("/")
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _loopback_up() -> None:
    """Bring up `lo` in the new network namespace (a program may still talk to itself)."""
    sock = _call("socket", 2, 2, 0)  # AF_INET, SOCK_DGRAM
    try:
        flags = (0x1 | 0x8 | 0x40).to_bytes(2, sys.byteorder)  # IFF_UP | LOOPBACK | RUNNING
        request = ctypes.create_string_buffer(b"lo".ljust(16, b"\0") + flags, 40)  # ifreq
        _call("ioctl", sock, 0x8914, request)  # SIOCSIFFLAGS
    finally:
        os.close(sock)


def _drop_capabilities() -> None:
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    _call("capset", header, (ctypes.c_uint32 * 6)())


def _tasks_of(uid: int) -> int:
    """Processes and threads of ``uid`` now: RLIMIT_NPROC counts them all."""
    count = 0
    for entry in (e for e in os.listdir("/proc") if e.isdigit()):
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                count += len(os.listdir(f"/proc/{entry}/task"))
        except OSError:
            continue
    return count


def _exec_main(cfg: dict[str, Any], nproc: int, fd: int) -> None:
    """The main child: default signal dispositions, rlimits, then exec; never returns."""
    try:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        with _Stage("workdir"):
            os.chdir(cfg["workdir"])
        with _Stage("rlimit"):
            _call("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            cpu, memory, fsize = (cfg["limits"][key] for key in ("cpu", "memory", "fsize"))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        with _Stage("exec"):
            os.execve(cfg["argv"][0], cfg["argv"], cfg["env"])
    except BaseException as exc:
        _emit(fd, f"error {exc}" if isinstance(exc, SetupError) else f"error exec {exc!r}")
    os._exit(127)


def _kill_leftovers(mechanisms: set[str]) -> None:
    """Kill what the program left behind (a PID namespace dies with its init anyway)."""
    if "pidns" not in mechanisms:
        if "setuid" in mechanisms:
            _quiet(os.kill, -1, signal.SIGKILL)  # every process of this run's own uid
        _quiet(os.killpg, 0, signal.SIGKILL)  # the run's process group, launcher and init too


def _init(cfg: dict[str, Any], mechanisms: set[str], ids: tuple[int, int], fd: int) -> int:
    """Pid 1: finish the namespaces, drop privileges, run main and report how it ended."""

    def on_term(_signum: int, _frame: object) -> None:
        raise _Terminate

    signal.signal(signal.SIGTERM, on_term)
    if "netns" in mechanisms:
        with _Stage("netns"):
            _call("unshare", NEWNET)
            _loopback_up()
    if "mountns" in mechanisms:
        with _Stage("mountns"):
            _call("unshare", NEWNS | NEWIPC)
            _build_root(cfg["workdir"], cfg["read_only"], cfg["tmp_mb"])
    with _Stage("setuid" if "setuid" in mechanisms else "privileges"):
        if "setuid" in mechanisms:
            os.setgroups([])
            os.setresgid(ids[1], ids[1], ids[1])
            os.setresuid(ids[0], ids[0], ids[0])
        elif "userns" in mechanisms:
            _drop_capabilities()
        for option, value in ((PR_SET_NO_NEW_PRIVS, 1), (PR_SET_DUMPABLE, 0)):
            _call("prctl", option, value, 0, 0, 0)
        _call("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    nproc = cfg["limits"]["processes"]
    if "setuid" in mechanisms or "userns" in mechanisms:
        nproc += 1 if "setuid" in mechanisms else 2  # init (and the launcher) count as well
    else:
        nproc += _tasks_of(os.getuid())  # without a uid of its own, every process counts
    main = os.fork()
    if main == 0:
        _exec_main(cfg, nproc, fd)
    try:
        while True:
            pid, status, usage = os.wait4(-1, 0)
            if pid == main:
                cpu = usage.ru_utime + usage.ru_stime
                if os.WIFSIGNALED(status):
                    _emit(fd, f"signal {os.WTERMSIG(status)} {cpu:.3f}")
                else:
                    _emit(fd, f"exit {os.WEXITSTATUS(status)} {cpu:.3f}")
                break
    except (_Terminate, ChildProcessError):
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_leftovers(mechanisms)
    return 0


def launch(cfg: dict[str, Any]) -> int:
    """Launcher: hand the workdir to the run's uid, create the namespaces, fork init."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # init decides; SIGKILL follows the grace
    fd: int = cfg["status_fd"]
    os.set_inheritable(fd, False)
    os.umask(0o022)
    mechanisms = set(cfg["mechanisms"])
    uid, gid = os.getuid(), os.getgid()
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if "setuid" in mechanisms:
            ids = (UID_BASE + os.getpid(),) * 2
            with _Stage("setuid"):
                chown_tree(cfg["workdir"], *ids, skip_hardlinks=True)
            _emit(fd, f"uid {ids[0]}")
        else:
            ids = (uid, gid)
        if "userns" in mechanisms:
            with _Stage("userns"):
                _call("unshare", NEWUSER | (NEWPID if "pidns" in mechanisms else 0))
                maps = {
                    "setgroups": "deny",
                    "uid_map": f"{uid} {uid} 1",
                    "gid_map": f"{gid} {gid} 1",
                }
                for name, text in maps.items():
                    with open(f"/proc/self/{name}", "w") as handle:
                        handle.write(text)
        elif "pidns" in mechanisms:
            with _Stage("pidns"):
                _call("unshare", NEWPID)
        with _Stage("fork"):  # not dumpable only now: it makes /proc/self/*_map root's
            _call("prctl", PR_SET_DUMPABLE, 0, 0, 0, 0)
            child = os.fork()
    except SetupError as exc:
        _emit(fd, f"error {exc}")
        return 1
    if child == 0:
        code = 1
        try:
            code = _init(cfg, mechanisms, ids, fd)
        except BaseException as exc:
            _emit(fd, f"error {exc}" if isinstance(exc, SetupError) else f"error init {exc!r}")
        os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) & 0xFF


def launcher_argv(config: dict[str, Any]) -> list[str]:
    """The command that runs ``launch(config)`` (bytecode cached, no site, no environment)."""
    boot = "import sys; sys.path[:0] = [sys.argv[1]]; import isolation; isolation.main()"
    here = os.path.dirname(os.path.abspath(__file__))
    return [sys.executable, "-I", "-S", "-B", "-c", boot, here, marshal.dumps(config).hex()]


def main() -> None:
    """Entry point of the launcher interpreter."""
    sys.exit(launch(marshal.loads(bytes.fromhex(sys.argv[2]))))


# ---- the probe: which mechanisms work on this machine (parent side) ----

MECHANISMS = {
    "setuid": f"runs as its own unprivileged uid ({UID_BASE} + launcher pid); RLIMIT_NPROC "
    "counts this run only",
    "userns": "a user namespace mapping the caller's uid to itself owns the other namespaces; "
    "RLIMIT_NPROC counts this namespace only",
    "pidns": "a PID namespace: the program sees only its own processes; all die with the run",
    "netns": "a network namespace with only a loopback interface: no network",
    "mountns": "a private root: read-only system and Python directories, private /tmp, /var/tmp "
    "and /dev/shm, the working directory read-write, everything else hidden",
}
_NEEDS = {"userns": ("pidns", "netns", "mountns"), "pidns": ("mountns",)}
_EFFECT = {"network": "netns", "filesystem": "mountns", "user": "setuid", "processes": "pidns"}
TRIAL_CODE = """import json, os, sys
ifaces = sorted(line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:])
try:
    open(sys.argv[1], "w").write("x")
except OSError:
    pass
print(json.dumps({"uid": os.getuid(), "pid": os.getpid(), "ifaces": ifaces}))
"""


def python_paths() -> tuple[str, ...]:
    """Directories this interpreter needs besides the system directories (bound read-only)."""
    import sysconfig

    paths = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    paths |= {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    found = [p for p in paths if p and os.path.isdir(p) and not inside(p, SYSTEM_PATHS)]
    return tuple(sorted(p for p in found if not inside(p, [q for q in found if q != p])))


def inside(path: str, roots: list[str]) -> bool:
    """True when ``path`` is one of ``roots`` or lies below one."""
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def choose_plan(trial: Trial) -> tuple[tuple[str, ...], dict[str, bool], dict[str, object]]:
    """Try the strongest set of mechanisms and drop each one that fails here: returns the
    mechanisms that work, what they isolate and the report for ``isolation_report()``."""
    started = time.monotonic()
    wanted = ["setuid" if os.geteuid() == 0 else "userns", "pidns", "netns", "mountns"]
    mechanisms, details, read_only = list(wanted), {}, python_paths()
    while True:
        error, facts = trial(tuple(mechanisms), read_only)
        if error is None:
            break
        stage = error.partition(" ")[0]
        fallback = [m for m in ("setuid", "mountns", "netns", "pidns", "userns") if m in mechanisms]
        drop = stage if stage in mechanisms else next(iter(fallback), "")
        if not drop:
            raise RuntimeError(f"the sandbox cannot run on this machine: {error}")
        details[drop] = f"does not work here: {error}"
        mechanisms.remove(drop)
        for other in (m for m in _NEEDS.get(drop, ()) if m in mechanisms):
            mechanisms.remove(other)
            details[other] = f"needs {drop}, which does not work here"
    effective = {
        "network": facts.get("ifaces") == ["lo"],
        "filesystem": facts.get("outside_write") is False,
        "user": facts.get("uid", 0) >= UID_BASE,
        "processes": facts.get("pid", 99) <= 3,
    }
    # The program never inherits the environment; without a PID namespace or a uid of its own
    # it could still read the caller's /proc/PID/environ.
    isolation = {"environment": "pidns" in mechanisms or "setuid" in mechanisms}
    for what, mechanism in _EFFECT.items():
        isolation[what] = mechanism in mechanisms and effective[what]
        if mechanism in mechanisms and not effective[what]:
            details[mechanism] = f"set up, but the trial run showed it ineffective: {facts}"
    works = {m: m in mechanisms and m not in details for m in wanted}
    report: dict[str, object] = {
        **isolation,
        "euid": os.geteuid(),
        "mechanisms": {
            m: {"works": works[m], "detail": details.get(m, MECHANISMS[m])} for m in wanted
        },
        "notes": _notes(isolation, mechanisms),
        "read_only_python_dirs": list(read_only),
        "probe_s": round(time.monotonic() - started, 3),
    }
    return tuple(mechanisms), isolation, report


def _notes(isolation: dict[str, bool], mechanisms: list[str]) -> list[str]:
    notes = ["always: a fresh environment; setrlimit CPU and AS (per process), FSIZE, NPROC, CORE"]
    if isolation["filesystem"]:
        notes.append(
            "readable: system and Python directories; disk use in the working directory "
            "is bounded per file (file_size_mb), not in total"
        )
    else:
        who = "any user" if isolation["user"] else "the caller"
        notes.append(f"no private root: what {who} may read or write stays readable or writable")
    if not isolation["network"]:
        notes.append("network access is NOT blocked")
    if "setuid" not in mechanisms and "userns" not in mechanisms:
        notes.append("max_processes is added to the caller's process count (none for root)")
    if not isolation["environment"]:
        notes.append("the caller's /proc/PID/environ may be readable (same uid, no PID namespace)")
    if not isolation["processes"]:
        notes.append("no PID namespace: leftovers are killed by process group (and run uid)")
    return notes
