"""Building the `tui-agent-sandbox` image: from sandbox/Dockerfile, or offline from a Debian rootfs.

The kernel is not baked into the image: docker.py bind-mounts the installed kernel.py read-only
at KERNEL_PATH, so the in-container kernel always matches the host client and a code change never
needs a rebuild. The image is Python plus libraries only; its label RECIPE_LABEL holds a hash of
what went into it (suite, packages, settings), so `build_image` skips an up-to-date image.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import docker
import platformdirs
from docker.errors import APIError, BuildError, DockerException, ImageNotFound
from docker.models.images import Image

from tui_agent.sandbox.base import SandboxError
from tui_agent.sandbox.engine import IMAGE, RECIPE_LABEL, docker_client, first_line

SUITE = "bookworm"
PACKAGES = (
    "python3",
    "python3-numpy",
    "python3-pandas",
    "python3-matplotlib",
    "python3-requests",
    "python3-bs4",
    "python3-lxml",
    "python3-fitz",
    "python3-pypdf",
    # Satisfies python3-fonttools' "python3-scipy | python3-munkres" so apt does not pull scipy
    # and its compiler toolchain (about 900 MB).
    "python3-munkres",
)
KERNEL_PATH = "/opt/tui-agent/kernel.py"
WORKSPACE_PATH = "/workspace"
SANDBOX_USER = "65534:65534"
IMAGE_ENV = {
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "HOME": "/tmp",
    "MPLBACKEND": "Agg",
    "MPLCONFIGDIR": "/tmp/matplotlib",
    "LANG": "C.UTF-8",
}
IMAGE_CMD = ("python3", "-u", KERNEL_PATH)
DOCKERFILE_DIR = Path(__file__).resolve().parents[2] / "sandbox"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
TRIM_PATHS = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man")
# Bump when the build steps change in a way the hashed settings do not show.
RECIPE_VERSION = 1

Method = Literal["auto", "dockerfile", "debootstrap"]
Progress = Callable[[str], None]


def recipe() -> str:
    """A short hash of everything that goes into the image."""
    spec = {
        "version": RECIPE_VERSION,
        "suite": SUITE,
        "packages": PACKAGES,
        "env": IMAGE_ENV,
        "user": SANDBOX_USER,
        "workdir": WORKSPACE_PATH,
        "cmd": IMAGE_CMD,
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]


def cache_dir() -> Path:
    """Where the debootstrap rootfs tarball is kept between builds."""
    return platformdirs.user_cache_path("tui-agent", appauthor=False) / "sandbox"


def build_image(
    *,
    force: bool = False,
    method: Method = "auto",
    image: str = IMAGE,
    cache: Path | None = None,
    progress: Progress = print,
) -> str:
    """Build the sandbox image unless an up-to-date one exists; return its id.

    method "auto" uses sandbox/Dockerfile when its base image is local or a registry answers,
    else debootstrap (needs root and `debootstrap`). `force` rebuilds even when up to date; the
    cached rootfs tarball is reused either way. Raises SandboxError with one line on failure.
    """
    wanted = recipe()
    client = docker_client(timeout=600)
    try:
        previous = _existing(client, image)
        if previous is not None and not force and previous.labels.get(RECIPE_LABEL) == wanted:
            progress(f"image {image} is up to date (recipe {wanted}); nothing to do")
            return previous.id
        if method == "auto":
            method = "dockerfile" if _dockerfile_usable(client) else "debootstrap"
        progress(f"building {image} (recipe {wanted}) with {method}")
        labels = {RECIPE_LABEL: wanted, "tui-agent.build-method": method}
        if method == "dockerfile":
            _build_from_dockerfile(client, image, labels, progress)
        else:
            tarball = rootfs_tarball(cache or cache_dir(), progress)
            _import_rootfs(client, tarball, image, labels, progress)
        built = client.images.get(image)
        if previous is not None and previous.id != built.id:
            _remove_quietly(client, previous.id)
        progress(f"image {image} ready ({built.short_id}, {built.attrs['Size'] / 1e6:.0f} MB)")
        return built.id
    except (DockerException, subprocess.CalledProcessError, OSError) as exc:
        raise SandboxError(f"building {image} failed: {first_line(exc)}") from exc
    finally:
        client.close()


def rootfs_tarball(cache: Path, progress: Progress = print) -> Path:
    """The cached Debian rootfs tarball for PACKAGES, made with debootstrap when missing."""
    key = hashlib.sha256(f"{SUITE} {' '.join(PACKAGES)} {TRIM_PATHS}".encode()).hexdigest()[:12]
    tarball = cache / f"rootfs-{SUITE}-{key}.tar"
    if tarball.exists():
        progress(f"using cached rootfs {tarball}")
        return tarball
    if os.geteuid() != 0:
        raise SandboxError(
            "the offline image build runs debootstrap and needs root: "
            "run `sudo tui-agent sandbox build`, or build from sandbox/Dockerfile with a registry"
        )
    if shutil.which("debootstrap") is None:
        raise SandboxError("debootstrap is not installed: run `apt-get install -y debootstrap`")
    cache.mkdir(parents=True, exist_ok=True)
    mirror = debian_mirror()
    with tempfile.TemporaryDirectory(dir=cache, prefix="rootfs-") as work:
        root = Path(work) / "root"
        progress(f"debootstrap {SUITE} from {mirror} (a few minutes, done once)")
        _make_rootfs(root, mirror, progress)
        progress(f"packing rootfs into {tarball}")
        partial = Path(work) / "rootfs.tar"
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."], check=True
        )
        partial.replace(tarball)
    return tarball


def debian_mirror() -> str:
    """The Debian mirror this machine's apt uses (falls back to deb.debian.org)."""
    apt = Path("/etc/apt")
    files = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    files += sorted((apt / "sources.list.d").glob("*.sources"))
    for path in files:
        try:
            text = path.read_text()
        except OSError:
            continue
        for uri in _uris(text):
            if uri.rstrip("/").endswith("/debian"):
                return uri.rstrip("/")
    return DEFAULT_MIRROR


def registry_reachable(timeout: float = 3.0) -> bool:
    """Whether Docker Hub's registry answers at all (an auth challenge counts)."""
    try:
        urllib.request.urlopen("https://registry-1.docker.io/v2/", timeout=timeout)
    except urllib.error.HTTPError:
        return True
    except (OSError, ValueError):
        return False
    return True


def import_changes(labels: dict[str, str]) -> list[str]:
    """Dockerfile instructions applied on `docker import`, mirroring sandbox/Dockerfile."""
    changes = [f"ENV {key}={value}" for key, value in IMAGE_ENV.items()]
    changes += [f"USER {SANDBOX_USER}", f"WORKDIR {WORKSPACE_PATH}", f"CMD {json.dumps(IMAGE_CMD)}"]
    changes += [f"LABEL {key}={value}" for key, value in labels.items()]
    return changes


def _uris(text: str) -> list[str]:
    uris = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words[:1] == ["deb"]:
            uris += [w for w in words[1:] if "://" in w][:1]
        elif words[:1] == ["URIs:"]:
            uris += words[1:]
    return uris


def _existing(client: docker.DockerClient, image: str) -> Image | None:
    try:
        return client.images.get(image)
    except ImageNotFound:
        return None


def _dockerfile_usable(client: docker.DockerClient) -> bool:
    dockerfile = DOCKERFILE_DIR / "Dockerfile"
    if not dockerfile.exists():
        return False
    lines = dockerfile.read_text().splitlines()
    base = next((line.split()[1] for line in lines if line.startswith("FROM ")), None)
    return base is not None and (_existing(client, base) is not None or registry_reachable())


def _build_from_dockerfile(
    client: docker.DockerClient, image: str, labels: dict[str, str], progress: Progress
) -> None:
    if not (DOCKERFILE_DIR / "Dockerfile").exists():
        raise SandboxError(f"no Dockerfile at {DOCKERFILE_DIR}; use method 'debootstrap'")
    stream = client.api.build(
        path=str(DOCKERFILE_DIR), tag=image, labels=labels, rm=True, forcerm=True, decode=True
    )
    for chunk in stream:
        if "error" in chunk:
            raise BuildError(chunk["error"].strip(), build_log=[])
        line = (chunk.get("stream") or chunk.get("status") or "").strip()
        if line:
            progress(line)


def _make_rootfs(root: Path, mirror: str, progress: Progress) -> None:
    """A minimal Debian with python3, then PACKAGES through apt (which honours alternatives)."""
    try:
        _run_logged(
            ["debootstrap", "--variant=minbase", "--include=python3", SUITE, str(root), mirror],
            "debootstrap",
            progress,
        )
        subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)
        _run_logged(
            ["chroot", str(root), "apt-get", "install", "-y", "--no-install-recommends", *PACKAGES],
            "apt-get install",
            progress,
        )
    finally:
        _unmount_below(root)
    for rel in TRIM_PATHS:
        shutil.rmtree(root / rel, ignore_errors=True)


def _run_logged(command: list[str], what: str, progress: Progress) -> None:
    """Run `command`, reporting the first line of each kind (its first word) as progress."""
    tail: deque[str] = deque(maxlen=20)
    seen: set[str] = set()
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip()
            tail.append(line)
            words = line.removeprefix("I: ").split()
            if words and words[0] not in seen:
                seen.add(words[0])
                progress(line)
    if proc.returncode != 0:
        raise SandboxError(f"{what} failed (exit {proc.returncode}): {' | '.join(tail)}")


def _unmount_below(root: Path) -> None:
    """Lazily unmount whatever debootstrap or we left mounted inside `root`."""
    prefix = str(root.resolve()) + "/"
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for point in sorted((m for m in mounts if m.startswith(prefix)), reverse=True):
        subprocess.run(["umount", "-l", point], check=False)


def _import_rootfs(
    client: docker.DockerClient,
    tarball: Path,
    image: str,
    labels: dict[str, str],
    progress: Progress,
) -> None:
    progress(f"importing {tarball.name} ({tarball.stat().st_size / 1e6:.0f} MB) as {image}")
    repository, _, tag = image.partition(":")
    client.api.import_image_from_file(
        str(tarball), repository=repository, tag=tag or "latest", changes=import_changes(labels)
    )


def _remove_quietly(client: docker.DockerClient, image_id: str) -> None:
    # An image still used by a container stays; the engine's prune takes it later.
    with contextlib.suppress(APIError):
        client.images.remove(image_id)
