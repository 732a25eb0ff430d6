"""The seccomp filter of the bubblewrap backend: Docker's default profile, a little stricter.

An allowlist, as Docker's is: any system call not named here fails with EPERM. It is Docker's
default list (moby profiles/seccomp/default.json, for a container without capabilities) minus
`ptrace`, `process_vm_readv/writev`, `name_to_handle_at` and the `io_uring_*` calls; `clone` is
allowed only without namespace flags, `clone3` (whose flags a filter cannot read) answers ENOSYS
so that libc falls back to `clone`, `personality` takes only the harmless personas, and `socket`
refuses AF_VSOCK. Only the machine's own ABI passes: a 32-bit or x32 call from inside kills the
process. Built with libseccomp (through pyseccomp) for x86_64 and aarch64.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import platform
import tempfile

from tui_agent.sandbox.base import SandboxError

ALLOWED = """
accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown clock_adjtime
clock_getres clock_gettime clock_nanosleep close close_range connect copy_file_range creat dup
dup2 dup3 epoll_create epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait
epoll_wait_old eventfd eventfd2 execve execveat exit exit_group faccessat faccessat2 fadvise64
fallocate fanotify_mark fchdir fchmod fchmodat fchown fchownat fcntl fdatasync fgetxattr
flistxattr flock fork fremovexattr fsetxattr fstat fstatfs fsync ftruncate futex futex_waitv
futimesat getcpu getcwd getdents getdents64 getegid geteuid getgid getgroups getitimer
getpeername getpgid getpgrp getpid getppid getpriority getrandom getresgid getresuid getrlimit
get_robust_list getrusage getsid getsockname getsockopt get_thread_area gettid gettimeofday
getuid getxattr inotify_add_watch inotify_init inotify_init1 inotify_rm_watch io_cancel ioctl
io_destroy io_getevents io_pgetevents ioprio_get ioprio_set io_setup io_submit kill
landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown lgetxattr link linkat
listen listxattr llistxattr lremovexattr lseek lsetxattr lstat madvise membarrier memfd_create
memfd_secret mincore mkdir mkdirat mknod mknodat mlock mlock2 mlockall mmap mprotect
mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedsend mq_unlink mremap msgctl msgget
msgrcv msgsnd msync munlock munlockall munmap nanosleep newfstatat open openat openat2 pause
pidfd_open pidfd_send_signal pipe pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll prctl
pread64 preadv preadv2 prlimit64 process_mrelease pselect6 pwrite64 pwritev pwritev2 read
readahead readlink readlinkat readv recvfrom recvmmsg recvmsg remap_file_pages removexattr rename
renameat renameat2 restart_syscall rmdir rseq rt_sigaction rt_sigpending rt_sigprocmask
rt_sigqueueinfo rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_tgsigqueueinfo sched_getaffinity
sched_getattr sched_getparam sched_get_priority_max sched_get_priority_min sched_getscheduler
sched_rr_get_interval sched_setaffinity sched_setattr sched_setparam sched_setscheduler
sched_yield seccomp select semctl semget semop semtimedop sendfile sendmmsg sendmsg sendto
setfsgid setfsuid setgid setgroups setitimer setpgid setpriority setregid setresgid setresuid
setreuid setrlimit set_robust_list setsid setsockopt set_thread_area set_tid_address setuid
setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4 socketpair splice stat
statfs statx symlink symlinkat sync sync_file_range syncfs sysinfo tee tgkill time timer_create
timer_delete timer_getoverrun timer_gettime timer_settime timerfd_create timerfd_gettime
timerfd_settime times tkill truncate umask uname unlink unlinkat utime utimensat utimes vfork
vmsplice wait4 waitid write writev
""".split()  # noqa: SIM905 (a block of names reads better than 300 lines)
"""Allowed whatever their arguments (names the machine's ABI lacks are skipped)."""

ARCH_ALLOWED = {"x86_64": ("arch_prctl", "modify_ldt"), "aarch64": ()}
"""Architecture-specific calls Docker's profile allows, per supported machine."""

NAMESPACE_FLAGS = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET."""
PERSONAS = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)
"""PER_LINUX, PER_LINUX32, UNAME26 and both, and the query: what `personality` may set."""
AF_VSOCK = 40


def seccomp_status() -> tuple[bool, str]:
    """(ok, reason): whether the filter can be built on this machine."""
    try:
        program()
    except SandboxError as exc:
        return False, str(exc)
    return True, "seccomp filter like Docker's default"


@functools.cache
def program() -> bytes:
    """The filter as a BPF program for `bwrap --seccomp` (built once per process)."""
    machine = platform.machine()
    if machine not in ARCH_ALLOWED:
        raise SandboxError(f"no seccomp filter for {machine}; bubblewrap needs x86_64 or aarch64")
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so.2 is missing
        raise SandboxError(
            f"libseccomp is not usable ({exc}); install it with `apt-get install libseccomp2`"
        ) from exc
    rules = seccomp.SyscallFilter(seccomp.ERRNO(errno.EPERM))
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    for name in (*ALLOWED, *ARCH_ALLOWED[machine]):
        with contextlib.suppress(OSError):  # a name this ABI does not have
            rules.add_rule(seccomp.ALLOW, name)
    rules.add_rule(seccomp.ALLOW, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, NAMESPACE_FLAGS, 0))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    for persona in PERSONAS:
        rules.add_rule(seccomp.ALLOW, "personality", seccomp.Arg(0, seccomp.EQ, persona))
    rules.add_rule(seccomp.ALLOW, "socket", seccomp.Arg(0, seccomp.NE, AF_VSOCK))
    with tempfile.TemporaryFile() as exported:
        rules.export_bpf(exported)
        exported.seek(0)
        return exported.read()


def program_fd() -> int:
    """A new file descriptor holding the filter from its start (bwrap reads it to the end)."""
    fd = os.memfd_create("tui-agent-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
