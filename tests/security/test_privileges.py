"""Who the code inside is on the host and what the kernel lets it do: the first probes an
attacker runs (uid_map, capability sets, seccomp, forbidden system calls)."""

import os
import platform
import struct
from pathlib import Path

import pyseccomp
import pytest

from tui_agent.sandbox import seccomp

PROBE = """
import os

def main():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    with open("/proc/self/uid_map") as handle:
        uid_map = [[int(part) for part in line.split()] for line in handle]
    with open("/workspace/made-inside", "w") as handle:
        handle.write("x")
    wanted = ("CapBnd", "CapEff", "CapPrm", "CapAmb", "Seccomp", "NoNewPrivs")
    return {"uid": os.getuid(), "uid_map": uid_map, **{k: status[k].strip() for k in wanted}}
"""

SYSCALLS = """
import ctypes, errno, json, os

def main(calls):
    # In a child: a call the filter should have refused changes nothing of the kernel's.
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        outcomes = {}
        for name, number, args in calls:
            value = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
            outcomes[name] = "allowed" if value >= 0 else errno.errorcode[ctypes.get_errno()]
        os.write(write_end, json.dumps(outcomes).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        outcomes = json.loads(handle.read())
    os.waitpid(child, 0)
    return outcomes
"""

CLONE_NEWUSER = 0x10000000
KEY_SPEC_SESSION_KEYRING = -3
ADDR_NO_RANDOMIZE = 0x0040000
UFFD_USER_MODE_ONLY = 1
AF_VSOCK = 40
AT_FDCWD = -100
REFUSED = {
    # Each of these works (or fails otherwise) for an unprivileged process without a filter.
    "unshare": ([CLONE_NEWUSER], "EPERM"),
    "setns": ([-1, 0], "EPERM"),
    "keyctl": ([0, KEY_SPEC_SESSION_KEYRING, 0], "EPERM"),
    "personality": ([ADDR_NO_RANDOMIZE], "EPERM"),
    "userfaultfd": ([UFFD_USER_MODE_ONLY], "EPERM"),
    "settimeofday": ([0, 0], "EPERM"),
    "clone3": ([0, 0], "ENOSYS"),
    # These need privileges the sandbox does not have either.
    "mount": ([0, 0, 0, 0, 0], "EPERM"),
    "umount2": ([0, 0], "EPERM"),
    "bpf": ([0, 0, 0], "EPERM"),
    "perf_event_open": ([0, 0, -1, -1, 0], "EPERM"),
    "kexec_load": ([0, 0, 0, 0], "EPERM"),
    "init_module": ([0, 0, 0], "EPERM"),
    "swapon": ([0, 0], "EPERM"),
    "acct": ([0], "EPERM"),
    "reboot": ([0, 0, 0, 0], "EPERM"),
}
REFUSED_BY_BUBBLEWRAP_ONLY = {
    # Docker's default profile allows these (ptrace on kernels from 4.8, AF_VSOCK sockets before
    # Docker 23); bubblewrap's does not.
    "socket": ([AF_VSOCK, 1, 0], "EPERM"),
    "ptrace": ([0, 0, 0, 0], "EPERM"),
    "process_vm_readv": ([1, 0, 0, 0, 0, 0], "EPERM"),
    "name_to_handle_at": ([AT_FDCWD, 0, 0, 0, 0], "EPERM"),
    "io_uring_setup": ([1, 0], "EPERM"),
}


async def test_the_sandbox_user_is_not_root_on_the_host(run, workspace: Path):
    result = await run(PROBE)
    assert result.success, result.error
    uid, uid_map = result.result["uid"], result.result["uid_map"]
    [host_uid] = [out + uid - inside for inside, out, count in uid_map if 0 <= uid - inside < count]
    assert uid != 0 and host_uid != 0, uid_map
    assert (workspace / "made-inside").stat().st_uid == host_uid


async def test_no_capabilities_and_a_seccomp_filter(run):
    result = await run(PROBE)
    assert result.success, result.error
    seen = result.result
    assert {seen[k] for k in ("CapBnd", "CapEff", "CapPrm", "CapAmb")} == {"0" * 16}, seen
    assert seen["Seccomp"] == "2" and seen["NoNewPrivs"] == "1", seen


async def test_a_root_only_file_in_the_workspace_stays_unreadable(run, workspace: Path):
    if os.geteuid() != 0:
        pytest.skip("only root's files can be kept from the sandbox user")
    secret = workspace / "root-only.txt"
    secret.write_text("root's")
    secret.chmod(0o600)
    result = await run("open('root-only.txt').read()")
    assert result.error and result.error.type == "PermissionError", result


async def test_forbidden_system_calls_fail(run, backend: str, assert_usable):
    expected = dict(REFUSED)
    if backend == "bubblewrap":
        expected |= REFUSED_BY_BUBBLEWRAP_ONLY
    arch = pyseccomp.system_arch()
    calls = [
        [name, pyseccomp.resolve_syscall(arch, name), args] for name, (args, _) in expected.items()
    ]
    result = await run(SYSCALLS, args=[calls])
    assert result.success, result.error
    assert result.result == {name: outcome for name, (_, outcome) in expected.items()}
    await assert_usable()


def test_the_filter_kills_a_call_made_through_another_abi():
    # The program's first instructions: load the arch, compare with this machine's, and on any
    # other (32-bit x86 through int 0x80, for one) return SECCOMP_RET_KILL_PROCESS.
    audit_arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[platform.machine()]
    program = seccomp.program()
    code = [struct.unpack("<HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    load_arch, compare = code[0], code[1]
    assert load_arch == (0x20, 0, 0, 4)  # BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data.arch)
    assert compare[0] == 0x15 and compare[3] == audit_arch  # BPF_JMP | BPF_JEQ | BPF_K
    foreign = code[2 + compare[2]]
    assert foreign == (0x06, 0, 0, 0x80000000)  # BPF_RET: SECCOMP_RET_KILL_PROCESS
