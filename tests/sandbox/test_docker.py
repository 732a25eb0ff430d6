"""The docker backend's own parts: the container's lockdown, the warm pool, labels and cleanup,
the attach-stream splitting and the image recipe. Behaviour and faults shared by all backends
are in test_behaviour.py and test_faults.py; escapes are in tests/security/.

Without a Docker engine and the sandbox image these tests skip, except under CI (CI=true),
where they fail.
"""

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker.errors import NotFound
from support.requirements import require_backend

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.docker import DockerSandbox, demultiplex
from tui_agent.sandbox.engine import (
    IMAGE,
    OWNER_LABEL,
    RECIPE_LABEL,
    SANDBOX_LABEL,
    cleanup_orphans,
)
from tui_agent.sandbox.folders.owner import sandbox_owner
from tui_agent.sandbox.image import (
    DOCKERFILE_DIR,
    IMAGE_CMD,
    IMAGE_ENV,
    KERNEL_PATH,
    PACKAGES,
    SANDBOX_USER,
    WORKSPACE_PATH,
    build_image,
    import_changes,
    recipe,
)
from tui_agent.sandbox.limits import Limits
from tui_agent.sandbox.pool import ContainerPool
from tui_agent.sandbox.wire import ExecuteRequest

LIMITS = Limits(memory_mb=256, processes=48, file_size_mb=8, cpu_seconds=20, tmp_size_mb=24)
WAIT = 60.0


@pytest.fixture(scope="module")
def docker_ready() -> None:
    require_backend("docker")


@pytest.fixture
def pool(docker_ready: None) -> Iterator[ContainerPool]:
    """A pool of this test's own; every container it made is gone afterwards."""
    made = ContainerPool(size=1)
    yield made
    made.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT:g} s for {what}")
        time.sleep(0.05)


def exists(pool: ContainerPool, container_id: str) -> bool:
    try:
        pool.client.containers.get(container_id)
    except NotFound:
        return False
    return True


async def run(sandbox: DockerSandbox, code: str, **fields):
    fields.setdefault("timeout", 30)
    return await sandbox.execute(ExecuteRequest(code=code, **fields))


# The container


@pytest.mark.docker
async def test_the_container_is_locked_down(pool: ContainerPool, workspace: Path):
    sandbox = DockerSandbox(workspace=workspace, limits=LIMITS, cpus=0.5, pool=pool)
    async with sandbox:
        attrs = pool.client.api.inspect_container(sandbox.container_id)
        code = (
            "import os\n"
            "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
            "open('made-inside.txt', 'w').write('hi')\n"
            "result = {'uid': os.getuid(), 'caps': status['CapEff'].strip(),\n"
            "          'no_new_privs': status['NoNewPrivs'].strip(), 'cwd': os.getcwd(),\n"
            "          'nets': sorted(os.listdir('/sys/class/net'))}"
        )
        inside = await run(sandbox, code)
    host = attrs["HostConfig"]
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["Memory"] == LIMITS.memory_mb << 20
    assert host["PidsLimit"] == LIMITS.processes
    assert host["NanoCpus"] == 500_000_000
    assert host["Init"] is True
    assert "size=24m" in host["Tmpfs"]["/tmp"]
    config = attrs["Config"]
    assert config["User"] not in ("", "0", "root") and not config["User"].startswith("0:")
    assert config["Env"] and not any(v.startswith("FAKE_") for v in config["Env"])
    assert config["Labels"][SANDBOX_LABEL] == "1"
    assert config["Labels"][OWNER_LABEL] == str(os.getpid())
    mounts = {m["Destination"]: m for m in attrs["Mounts"]}
    assert mounts[WORKSPACE_PATH]["Source"] == str(workspace) and mounts[WORKSPACE_PATH]["RW"]
    assert not mounts[KERNEL_PATH]["RW"]
    assert inside.success, inside.error
    assert inside.result == {
        "uid": int(config["User"].split(":")[0]),
        "caps": "0000000000000000",
        "no_new_privs": "1",
        "cwd": WORKSPACE_PATH,
        "nets": ["lo"],
    }
    assert (workspace / "made-inside.txt").read_text() == "hi"


@pytest.mark.docker
async def test_the_network_is_opt_in(pool: ContainerPool, workspace: Path):
    async with DockerSandbox(workspace=workspace, network=True, limits=LIMITS, pool=pool) as box:
        mode = pool.client.api.inspect_container(box.container_id)["HostConfig"]["NetworkMode"]
        nets = await run(box, "import os\nsorted(os.listdir('/sys/class/net'))")
    assert mode == "bridge"
    assert nets.success and set(nets.result) - {"lo"}, nets.result


@pytest.mark.docker
async def test_the_image_has_the_libraries_and_matplotlib_can_save(
    pool: ContainerPool, workspace: Path
):
    code = (
        "import numpy, pandas, requests, bs4, lxml, matplotlib\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3]); plt.savefig('plot.png')\n"
        "frame = pandas.DataFrame({'a': numpy.arange(3)})\n"
        "result = [int(frame.a.sum()), bs4.BeautifulSoup('<p>x</p>', 'lxml').p.text]"
    )
    async with DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool) as sandbox:
        result = await run(sandbox, code, timeout=60)
    assert result.success, result.error
    assert result.result == [3, "x"]
    assert (workspace / "plot.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.docker
async def test_out_of_memory_in_the_container_is_reported(pool: ContainerPool, workspace: Path):
    # /tmp (a tmpfs) is charged to the container's memory; filling it leaves the kernel to be
    # killed by the kernel's OOM killer when it then allocates, under its own RLIMIT_AS.
    limits = Limits(memory_mb=160, tmp_size_mb=150, file_size_mb=150, cpu_seconds=20)
    code = (
        "with open('/tmp/ballast', 'wb') as f:\n"
        "    for _ in range(140):\n"
        "        f.write(b'x' * (1 << 20))\n"
        "hoard = [b'y' * (1 << 20) for _ in range(60)]"
    )
    async with DockerSandbox(workspace=workspace, limits=limits, pool=pool) as sandbox:
        result = await run(sandbox, code)
        after = await run(sandbox, "1 + 1")
    assert not result.success and result.state_lost
    assert result.killed_reason == "kernel died (out of memory: the sandbox's 160 MiB limit)"
    assert after.success and after.result == 2


def test_a_root_owned_workspace_with_files_is_refused(workspace: Path):
    if os.geteuid() != 0:
        pytest.skip("only root hands workspaces to the sandbox user")
    (workspace / "mine.txt").write_text("root's")
    with pytest.raises(SandboxError, match="belongs to root and is not empty"):
        sandbox_owner(workspace)
    empty = workspace.parent / "empty"
    empty.mkdir()
    assert ":".join(str(part) for part in sandbox_owner(empty)) == SANDBOX_USER
    assert empty.stat().st_uid == 65534


# The pool, labels and cleanup


@pytest.mark.docker
async def test_a_prewarmed_pool_hands_out_a_started_container(pool: ContainerPool, workspace: Path):
    sandbox = DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool)
    pool.prewarm(sandbox.spec)
    await asyncio.to_thread(until, lambda: pool.warm_count(sandbox.spec) == 1, "a warm container")
    [warm_id] = pool.container_ids()
    async with sandbox:
        assert sandbox.container_id == warm_id
        assert (await run(sandbox, "x = 1\nx + 1")).result == 2
        await asyncio.to_thread(until, lambda: pool.warm_count(sandbox.spec) == 1, "a refill")
        assert len(pool.container_ids()) == 2
        await sandbox.reset()
        assert sandbox.container_id != warm_id and not exists(pool, warm_id)
        assert (await run(sandbox, "'x' in globals()")).result is False


@pytest.mark.docker
async def test_a_one_off_spec_gets_no_spare_container(pool: ContainerPool, workspace: Path):
    async with DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool) as sandbox:
        await run(sandbox, "1 + 1")
        assert pool.container_ids() == {sandbox.container_id}
        assert pool.warm_count(sandbox.spec) == 0


@pytest.mark.docker
async def test_a_timeout_replaces_the_container(pool: ContainerPool, workspace: Path):
    async with DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool) as sandbox:
        first = sandbox.container_id
        await run(sandbox, "kept = 1")
        result = await run(sandbox, "import time\ntime.sleep(600)", timeout=1)
        assert result.timed_out and result.state_lost
        assert sandbox.container_id != first and not exists(pool, first)
        assert (await run(sandbox, "'kept' in globals()")).result is False


@pytest.mark.docker
async def test_a_start_cancelled_while_its_container_is_made_leaves_nothing_behind(
    pool: ContainerPool, workspace: Path
):
    """The container a cancelled start was making (in a thread) is removed once made, and
    with it its hold on the workspace's quota: not kept until the pool closes."""
    sandbox = DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool)
    starting = asyncio.ensure_future(sandbox.start())
    await asyncio.to_thread(until, lambda: bool(pool.container_ids()), "a container being made")
    starting.cancel()
    await asyncio.gather(starting, return_exceptions=True)
    await sandbox.close()
    gone = lambda: not pool.container_ids() and not os.path.ismount(workspace)  # noqa: E731
    await asyncio.to_thread(until, gone, "the container and the quota gone")


@pytest.mark.docker
async def test_closing_the_pool_removes_every_container(docker_ready: None, workspace: Path):
    pool = ContainerPool(size=1)
    sandbox = DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool)
    pool.prewarm(sandbox.spec)
    await sandbox.start()
    await asyncio.to_thread(until, lambda: pool.warm_count(sandbox.spec) == 1, "a warm container")
    made = pool.container_ids()
    assert len(made) == 2
    pool.close()
    assert not any(exists(pool, container_id) for container_id in made)
    with pytest.raises(SandboxError, match="closed"):
        await pool.acquire(sandbox.spec)
    await sandbox.close()


EXITING_APP = """
import asyncio, os, sys
from pathlib import Path
from tui_agent.sandbox.choose import open_sandbox

async def main():
    sandbox = open_sandbox("docker", workspace=Path(sys.argv[1]))
    await sandbox.start()
    print(sandbox.container_id, flush=True)  # exits without closing it

asyncio.run(main())
"""


@pytest.mark.docker
def test_no_container_outlives_an_app_that_exits_without_closing(
    pool: ContainerPool, workspace: Path
):
    app = subprocess.run(
        [sys.executable, "-c", EXITING_APP, str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert not exists(pool, app.stdout.split()[-1])


ORPHAN_MAKER = """
import asyncio, os, sys
from pathlib import Path
from tui_agent.sandbox.docker import DockerSandbox
from tui_agent.sandbox.pool import ContainerPool
from tui_agent.sandbox.folders.owner import sandbox_owner

async def main():
    box = DockerSandbox(workspace=Path(sys.argv[1]), pool=ContainerPool(size=1))
    await box.start()
    print(os.getpid(), box.container_id, flush=True)
    os._exit(0)  # a crash: no close, no atexit

asyncio.run(main())
"""


@pytest.mark.docker
async def test_containers_of_a_crashed_owner_stop_and_are_cleaned_up(
    pool: ContainerPool, workspace: Path
):
    crashed = subprocess.run(
        [sys.executable, "-c", ORPHAN_MAKER, str(workspace)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    crashed_pid, orphan_id = crashed.stdout.split()
    async with DockerSandbox(workspace=workspace, limits=LIMITS, pool=pool) as mine:
        try:
            orphan = pool.client.containers.get(orphan_id)
        except NotFound:
            orphan = None  # another test process's cleanup_orphans() was quicker
        if orphan is not None:
            assert orphan.labels[OWNER_LABEL] == str(crashed_pid)
            # Its attach socket closed with its owner: the kernel read end-of-file and stopped.
            exit_status = await asyncio.to_thread(orphan.wait, timeout=WAIT)
            assert exit_status["StatusCode"] == 0
        await asyncio.to_thread(cleanup_orphans, pool.client)
        assert not exists(pool, orphan_id)
        assert exists(pool, mine.container_id)  # a live owner's container stays
        assert (await run(mine, "1 + 1")).result == 2


# The attach stream and the image (no engine needed)


async def test_the_attach_stream_is_split_into_stdout_and_stderr():
    def frame(stream: int, payload: bytes) -> bytes:
        return bytes([stream, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload

    source = asyncio.StreamReader()
    source.feed_data(frame(1, b'{"type":') + frame(2, b"warning\n") + frame(1, b'"ready"}\n'))
    source.feed_data(frame(1, b"") + frame(1, b"cut sho")[:-3])
    source.feed_eof()
    stdout, stderr = asyncio.StreamReader(), asyncio.StreamReader()
    await demultiplex(source, stdout, stderr)
    assert await stdout.read() == b'{"type":"ready"}\n'
    assert await stderr.read() == b"warning\n"


def test_the_dockerfile_and_the_offline_build_make_the_same_image():
    text = (DOCKERFILE_DIR / "Dockerfile").read_text()
    lines = [line.strip() for line in text.replace("\\\n", " ").splitlines()]
    install = next(line for line in lines if "apt-get install" in line)
    installed = install.split("--no-install-recommends", 1)[1].split("&&")[0].split()
    assert sorted(installed) == sorted(PACKAGES)
    env_line = next(line for line in lines if line.startswith("ENV "))
    assert dict(pair.split("=", 1) for pair in env_line.split()[1:]) == IMAGE_ENV
    assert f"USER {SANDBOX_USER}" in lines
    assert f"WORKDIR {WORKSPACE_PATH}" in lines
    cmd = next(line for line in lines if line.startswith("CMD "))
    assert tuple(json.loads(cmd[4:])) == IMAGE_CMD
    changes = import_changes({RECIPE_LABEL: "r"})
    assert [c for c in changes if not c.startswith("ENV ")] == [
        f"USER {SANDBOX_USER}",
        f"WORKDIR {WORKSPACE_PATH}",
        f"CMD {json.dumps(IMAGE_CMD)}",
        f"LABEL {RECIPE_LABEL}=r",
    ]
    assert sorted(c for c in changes if c.startswith("ENV ")) == sorted(
        f"ENV {key}={value}" for key, value in IMAGE_ENV.items()
    )


@pytest.mark.docker
def test_building_an_up_to_date_image_does_nothing(docker_ready: None, pool: ContainerPool):
    image = pool.client.images.get(IMAGE)
    if image.labels.get(RECIPE_LABEL) != recipe():
        pytest.skip("the image was built from another recipe; `tui-agent sandbox build` updates it")
    lines: list[str] = []
    assert build_image(progress=lines.append) == image.id
    assert lines == [f"image {IMAGE} is up to date (recipe {recipe()}); nothing to do"]
