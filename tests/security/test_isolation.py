"""What the code inside must not reach: the network, the host's files, processes and secrets.

Nothing here addresses a host beyond loopback: "no network" is shown by what the sandbox sees
(its interfaces, routes and resolver) and by a listener on the host's own loopback.
"""

import asyncio
import subprocess
import uuid
from pathlib import Path

from support.requirements import require_backend

from tui_agent.sandbox.bubblewrap import BubblewrapSandbox
from tui_agent.sandbox.process import KERNEL_FILE
from tui_agent.sandbox.wire import ExecuteRequest

PROJECT = Path(__file__).resolve().parents[2]

TRY_CONNECT = """
import socket

def main(targets):
    outcomes = {}
    for host, port in targets:
        try:
            socket.create_connection((host, port), timeout=2).close()
            outcomes[host] = "connected"
        except OSError as exc:
            outcomes[host] = f"{type(exc).__name__}: {exc}"
    return outcomes
"""

TRY_READ = """
import os

def main(paths):
    outcomes = {}
    for path in paths:
        try:
            if os.path.isdir(path):
                outcomes[path] = sorted(os.listdir(path))
            else:
                with open(path, "rb") as handle:
                    outcomes[path] = handle.read().decode("utf-8", "replace")
        except OSError as exc:
            outcomes[path] = f"{type(exc).__name__}"
    return outcomes
"""

TRY_WRITE = """
def main(paths):
    outcomes = {}
    for path in paths:
        try:
            with open(path, "w") as handle:
                handle.write("written from the sandbox")
            outcomes[path] = "written"
        except OSError as exc:
            outcomes[path] = f"{type(exc).__name__}"
    return outcomes
"""


NETWORK_VIEW = """
import socket

def lines(path):
    try:
        with open(path) as handle:
            return handle.read().splitlines()
    except OSError:
        return []

def main():
    resolv = [line.split() for line in lines("/etc/resolv.conf")]
    return {
        "interfaces": sorted(name for _, name in socket.if_nameindex()),
        "devices": sorted(line.split(":")[0].strip() for line in lines("/proc/net/dev")[2:]),
        "routes": lines("/proc/net/route")[1:],
        "ipv6_devices": sorted({line.split()[-1] for line in lines("/proc/net/if_inet6")}),
        "ipv6_route_devices": sorted({line.split()[-1] for line in lines("/proc/net/ipv6_route")}),
        "nameservers": [words[1] for words in resolv if words[:1] == ["nameserver"]],
    }
"""


async def test_the_only_interface_is_loopback_and_nothing_is_routed(run, assert_usable):
    # Seen from inside, without sending anything: no device but lo, no IPv4 route at all
    # (default or other), IPv6 only on lo.
    result = await run(NETWORK_VIEW)
    assert result.success, result.error
    seen = result.result
    assert seen["interfaces"] == ["lo"] and seen["devices"] == ["lo"], seen
    assert seen["routes"] == [], seen
    assert set(seen["ipv6_devices"]) <= {"lo"} and set(seen["ipv6_route_devices"]) <= {"lo"}, seen
    await assert_usable()


async def serve_loopback() -> tuple[asyncio.Server, list[str]]:
    """A TCP listener on the host's 127.0.0.1 and the peers it accepted."""
    accepted: list[str] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(str(writer.get_extra_info("peername")))
        writer.close()

    return await asyncio.start_server(on_connect, "127.0.0.1", 0), accepted


async def test_a_listener_on_the_hosts_loopback_is_not_reached(run, assert_usable):
    # In its own network namespace, 127.0.0.1 is the sandbox's own loopback: the connection is
    # refused there (nothing listens on that port inside) and the host's listener sees nothing.
    server, accepted = await serve_loopback()
    port = server.sockets[0].getsockname()[1]
    async with server:
        result = await run(TRY_CONNECT, args=[[["127.0.0.1", port]]])
    assert result.success, result.error
    assert result.result["127.0.0.1"].startswith("ConnectionRefusedError"), result.result
    assert accepted == []
    await assert_usable()


async def test_names_do_not_resolve_and_only_loopback_is_asked(run, assert_usable):
    code = """
        import socket
        try:
            result = socket.getaddrinfo("deb.debian.org", 80)
        except socket.gaierror as exc:
            result = f"gaierror: {exc}"
    """
    view = await run(NETWORK_VIEW)
    assert all(ns.startswith("127.") or ns == "::1" for ns in view.result["nameservers"]), view
    result = await run(code)
    assert result.success, result.error
    assert isinstance(result.result, str) and result.result.startswith("gaierror"), result.result
    await assert_usable()


async def test_the_network_when_asked_for_reaches_the_hosts_loopback(workspace, limits):
    # The same probe that is refused above connects when bubblewrap shares the host's network.
    require_backend("bubblewrap")
    server, accepted = await serve_loopback()
    port = server.sockets[0].getsockname()[1]
    async with server, BubblewrapSandbox(workspace=workspace, network=True, limits=limits) as box:
        request = ExecuteRequest(code=TRY_CONNECT, args=[[["127.0.0.1", port]]], timeout=10)
        result = await box.execute(request)
        for _ in range(100):  # the listener's accept callback runs on this loop
            if accepted:
                break
            await asyncio.sleep(0.01)
    assert result.result == {"127.0.0.1": "connected"}, result.result
    assert len(accepted) == 1


async def test_host_files_are_out_of_reach(run, assert_usable, tmp_path: Path):
    beside = tmp_path / "beside-the-workspace.txt"
    beside.write_text("host data next to the workspace")
    home = Path.home()
    shadow = Path("/etc/shadow")
    paths = [str(shadow), str(home), str(PROJECT / "pyproject.toml"), str(beside)]
    paths.append("/workspace/../beside-the-workspace.txt")
    result = await run(TRY_READ, args=[paths])
    assert result.success, result.error
    seen = result.result
    if shadow.exists():
        assert seen[str(shadow)] in ("PermissionError", "FileNotFoundError"), seen[str(shadow)]
    host_home = set(p.name for p in home.iterdir()) if home.is_dir() else set()
    inside_home = seen[str(home)]
    assert isinstance(inside_home, str) or not host_home & set(inside_home), inside_home
    for path in paths[2:]:
        assert seen[path] == "FileNotFoundError", (path, seen[path])
    await assert_usable()


async def test_other_processes_and_the_host_environment_are_invisible(
    run, assert_usable, host_secret: str
):
    code = """
        import os

        def main(secret, host_pid):
            found = []
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/environ", "rb") as handle:
                        if secret.encode() in handle.read():
                            found.append(pid)
                except OSError:
                    pass
            return {
                "in_environ": "FAKE_API_KEY" in os.environ or secret in os.environ.values(),
                "processes_with_it": found,
                "host_process_visible": os.path.exists(f"/proc/{host_pid}/environ"),
            }
    """
    with subprocess.Popen(["sleep", "60"]) as host_process:  # inherits FAKE_API_KEY
        try:
            result = await run(code, args=[host_secret, host_process.pid])
        finally:
            host_process.kill()
    assert result.success, result.error
    assert result.result == {
        "in_environ": False,
        "processes_with_it": [],
        "host_process_visible": False,
    }
    await assert_usable()


async def test_writes_outside_the_workspace_fail(run, assert_usable, workspace: Path, tmp_path):
    marker = f"tui-agent-probe-{uuid.uuid4().hex}"
    outside = [
        f"/etc/{marker}",
        f"/usr/{marker}",
        f"/{marker}",
        f"/opt/tui-agent/{marker}",
        str(PROJECT / marker),
        str(tmp_path / marker),
    ]
    kernel_before = KERNEL_FILE.read_bytes()
    inside = [f"/workspace/{marker}", f"/tmp/{marker}"]
    result = await run(TRY_WRITE, args=[[*outside, "/opt/tui-agent/kernel.py", *inside]])
    assert result.success, result.error
    for path in outside:  # a sandbox may have a scratch root of its own, but nothing lands here
        assert not Path(path).exists(), (path, result.result[path])
    for path in (f"/usr/{marker}", "/opt/tui-agent/kernel.py"):  # host folders seen inside
        assert result.result[path] != "written", path
    assert KERNEL_FILE.read_bytes() == kernel_before
    assert result.result[inside[0]] == "written"
    assert (workspace / marker).read_text() == "written from the sandbox"
    assert result.result[inside[1]] == "written"
    assert not Path("/tmp", marker).exists()  # the sandbox's /tmp is its own
    await assert_usable()
