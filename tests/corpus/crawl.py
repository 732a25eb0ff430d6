"""The pages and stylesheets an app serves from a few start pages, fetched link by link on
its own origin, and the sockets its server listens on."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx

from corpus.offsite import PREFIX

LINK = re.compile(r"""href=["']([^"'#]+)|url\(["']?([^"')]+)""")
"""A link to a page or a stylesheet, or a stylesheet's url()."""


def crawl(base_url: str, starts: list[str], limit: int = 12) -> Iterator[tuple[str, str]]:
    """(url, body) of up to `limit` HTML pages and stylesheets reached from `starts`."""
    queue = [base_url + path for path in starts]
    seen = set(queue)
    with httpx.Client(timeout=30) as client:
        while queue and limit:
            url = queue.pop(0)
            response = client.get(url)
            kind = response.headers.get("content-type", "")
            if response.status_code != 200 or not ("html" in kind or "css" in kind):
                continue
            limit -= 1
            yield url, response.text
            for match in LINK.finditer(response.text):
                link = unescape(match.group(1) or match.group(2)).strip()
                found = str(response.url.join(link))
                if found.startswith(base_url) and PREFIX not in found and found not in seen:
                    seen.add(found)
                    queue.append(found)


def listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of each TCP socket process `pid` listens on (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = fd.readlink().name if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # LISTEN
                address, port = local.split(":")
                raw = bytes.fromhex(address)
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.add((socket.inet_ntop(family, words), int(port, 16)))
    return found
