"""Finding 6: the secrets in a task's (or an exec run's) context stay out of every prompt and
everything recorded or shown, nested ones and copies included, while the code in the sandbox
still reads their real values.

The scripted model records the prompts it receives; the task runs in a real sandbox (docker
and bubblewrap), is recorded in a real SQLite file, and is read back through the real
`sessions show --json` and `sessions export` commands.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support.scripted_model import ScriptedModel, text
from support.sessions import scripted_settings

from tui_agent.agents.launch import prepare
from tui_agent.agents.requests import TaskRequest
from tui_agent.agents.task.breaker import CircuitBreaker
from tui_agent.events import TaskResult
from tui_agent.recorder import SessionRecorder
from tui_agent.redaction import MASK, is_secret_key
from tui_agent.store import Store

DROPPED_ENV = ("TUI_AGENT_MODEL", "TUI_AGENT_API_BASE", "TUI_AGENT_SANDBOX", "TUI_AGENT_DB")


def _secret(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:16]}"


@pytest.fixture
def secrets() -> dict[str, str]:
    """Fresh secret values, long enough to be masked wherever they appear."""
    return {
        name: _secret(name)
        for name in ("api", "auth", "row", "dsn", "passcode", "ssh", "bearer", "pat", "db")
    }


def _context(s: dict[str, str]) -> dict:
    """A context whose secrets sit at every depth and under the newly recognised key names."""
    return {
        "headers": {"X-Api-Key": s["api"], "Accept": "application/json"},
        "nested": {"authToken": s["auth"]},
        "rows": [{"account": "a1", "creds": {"client_secret": s["row"]}}],
        "dsn": f"postgres://app:{s['dsn']}@127.0.0.1:5432/shop",
        "passcode": s["passcode"],
        "ssh_private": s["ssh"],
        "bearer": s["bearer"],
        "pat": s["pat"],
        "database": {"url": f"postgres://reader:{s['db']}@127.0.0.1/shop"},
        "n": 3,
    }


def _code(body: str, stage: str = "TASK") -> str:
    return f"```python\n# STAGE: {stage}\n{body.strip()}\n```"


LEAKING = _code(
    """
key = context['headers']['X-Api-Key']
print('calling with', key, 'and', context['passcode'])
raise RuntimeError('the server refused token ' + context['nested']['authToken'])
"""
)
"""Attempt 1: prints two secrets and fails with a third in its error."""
COPYING = _code(
    """
import hashlib
key = context['headers']['X-Api-Key']
print('key is', key)
print('db at', context['database']['url'])
print('row secret', context['rows'][0]['creds']['client_secret'])
context['header_line'] = 'Key ' + key
context['copied'] = context['nested']['authToken']
context['seen'] = [context['ssh_private'], context['bearer'], context['pat']]
context['key_sha256'] = hashlib.sha256(key.encode()).hexdigest()
context['url_sha256'] = hashlib.sha256(context['dsn'].encode()).hexdigest()
"""
)
"""Attempt 2: prints secrets, copies them into other keys, and proves it read the real ones."""
VALID = json.dumps({"valid": True, "reason": "the header was built"})


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _leaked(data: bytes | str, s: dict[str, str]) -> list[str]:
    raw = data if isinstance(data, bytes) else data.encode()
    return [name for name, value in s.items() if value.encode() in raw]


def _database_bytes(db: Path) -> bytes:
    """The SQLite file and its -wal / -shm companions, as stored on disk."""
    return b"".join(path.read_bytes() for path in sorted(db.parent.glob(db.name + "*")))


def tui_agent(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command, on the test's own database, config and workspace."""
    env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
    env["TUI_AGENT_CONFIG_FILE"] = str(tmp_path / "none.toml")
    env["TUI_AGENT_WORKSPACE"] = str(tmp_path / "workspace")
    env["COLUMNS"] = "160"
    return subprocess.run(
        [sys.executable, "-m", "tui_agent", "--db", str(tmp_path / "s.db"), *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )


def _shown_and_exported(tmp_path: Path, session_id: str) -> str:
    """What `sessions show --json` prints and `sessions export` writes for the session."""
    shown = tui_agent(tmp_path, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    exported = tmp_path / "export.jsonl"
    done = tui_agent(tmp_path, "sessions", "export", session_id, "-o", str(exported))
    assert done.returncode == 0, done.stderr
    return shown.stdout + exported.read_text()


async def test_secrets_never_reach_a_prompt_yet_the_code_reads_them(
    tmp_path: Path, server: ScriptedModel, backend: str, secrets: dict[str, str]
):
    """First, retry and validator prompts hold placeholders (nested keys, printed output, an
    error, copies under other keys, URL passwords); the sandbox got the real values; the
    store holds none of them."""
    server.push(text(LEAKING), text(COPYING), text(VALID))
    settings = scripted_settings(server, tmp_path, backend).model_copy(
        update={"db": tmp_path / "s.db"}
    )
    context = _context(secrets)
    launch = prepare(
        TaskRequest(task="Build the API header", context=context, use_cache=False),
        settings,
        session_id="secret000001",
        breaker=CircuitBreaker(),
    )
    session = launch.task
    assert session is not None
    async with await Store.open(settings.db) as store:
        state = await SessionRecorder(store, "secret000001").run(launch.started, launch.events)
        stored = await store.events("secret000001")

    assert state.status == "completed", state.errors
    # the code in the sandbox read the real values (the model never saw them)
    assert session.context["key_sha256"] == _sha(secrets["api"])
    assert session.context["url_sha256"] == _sha(context["dsn"])
    assert session.context["copied"] == secrets["auth"]  # the caller's own copy (-o)

    first, retry, validator = (request.messages for request in server.requests)
    for messages in (first, retry, validator):
        assert _leaked(json.dumps(messages), secrets) == []
    prompt = first[0]["content"]
    assert "<secret:headers.X-Api-Key>" in prompt
    assert "context['headers']['X-Api-Key']" in prompt
    assert "<secret:nested.authToken>" in prompt
    assert "context['rows'][0]['creds']['client_secret']" in prompt
    assert "<secret:database.url#password>" in prompt
    history = retry[-1]["content"]
    assert "RuntimeError: the server refused token <secret:nested.authToken>" in history
    judged = validator[-1]["content"]
    assert "key is <secret:headers.X-Api-Key>" in judged
    assert '"Key <secret:headers.X-Api-Key>"' in judged
    assert "copied" in judged and '"<secret:nested.authToken>"' in judged

    # nothing stored holds them: the events, the chain of work, the file's bytes
    assert _leaked("".join(e.model_dump_json() for e in stored), secrets) == []
    [result] = [e for e in stored if isinstance(e, TaskResult)]
    assert result.context["headers"]["X-Api-Key"] == MASK
    assert result.context["copied"] == "<secret:nested.authToken>"
    assert _leaked(json.dumps(result.context["_ai_metadata"]), secrets) == []
    assert _leaked(_database_bytes(settings.db), secrets) == []
    assert _leaked(_shown_and_exported(tmp_path, "secret000001"), secrets) == []


def test_headless_output_show_and_export_hold_no_secret_and_o_holds_them(
    tmp_path: Path, server: ScriptedModel, backend: str, secrets: dict[str, str]
):
    """`tui-agent task --headless`: the printed stream and context, the store, `sessions show
    --json` and `sessions export` are masked; only the `-o` file carries the real values."""
    (tmp_path / "ctx.json").write_text(json.dumps(_context(secrets)))
    server.push(text(LEAKING), text(COPYING), text(VALID))
    out = tmp_path / "out.json"
    done = tui_agent(
        tmp_path,
        "task",
        "Build the API header",
        "--context",
        str(tmp_path / "ctx.json"),
        "--model",
        "openai/gpt-4o-mini",
        "--api-base",
        server.api_base,
        "--sandbox",
        backend,
        "--no-cache",
        "--headless",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    assert _leaked(done.stdout + done.stderr, secrets) == []
    assert "<secret:headers.X-Api-Key>" in done.stdout  # the printed line, masked
    saved = json.loads(out.read_text())
    assert saved["headers"]["X-Api-Key"] == secrets["api"]
    assert saved["copied"] == secrets["auth"]
    assert saved["key_sha256"] == _sha(secrets["api"])
    assert _leaked(json.dumps(saved["_ai_metadata"]), secrets) == []
    assert _leaked(_database_bytes(tmp_path / "s.db"), secrets) == []
    listed = tui_agent(tmp_path, "sessions", "list", "--json")
    [session] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert _leaked(_shown_and_exported(tmp_path, session["session_id"]), secrets) == []


def test_exec_with_a_context_file_masks_its_secrets(
    tmp_path: Path, backend: str, secrets: dict[str, str]
):
    """`tui-agent exec --context`: the program gets the real values; what it prints, returns
    and raises is masked in the output, the store, show and export."""
    (tmp_path / "ctx.json").write_text(json.dumps(_context(secrets)))
    program = tmp_path / "prog.py"
    program.write_text(
        "import hashlib\n"
        "def main():\n"
        "    key = context['headers']['X-Api-Key']\n"
        "    print('key', key, 'sha', hashlib.sha256(key.encode()).hexdigest())\n"
        "    print(context['database']['url'])\n"
        "    return [{'copied': context['nested']['authToken'], 'pat': context['pat']}]\n"
    )
    done = tui_agent(
        tmp_path,
        "exec",
        str(program),
        "--context",
        str(tmp_path / "ctx.json"),
        "--sandbox",
        backend,
        "--headless",
    )
    assert done.returncode == 0, done.stderr
    assert _sha(secrets["api"]) in done.stdout  # it read the real key
    assert _leaked(done.stdout + done.stderr, secrets) == []
    assert _leaked(_database_bytes(tmp_path / "s.db"), secrets) == []
    listed = tui_agent(tmp_path, "sessions", "list", "--json")
    [session] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert _leaked(_shown_and_exported(tmp_path, session["session_id"]), secrets) == []


@pytest.mark.parametrize(
    "key",
    [
        "dsn", "database_dsn", "passcode", "bearer", "pat", "github_pat", "ssh_private",
        "sessionid", "csrftoken", "dbpassword", "connection_string", "jwt", "otp",
    ],
)  # fmt: skip
def test_more_secret_key_names_are_recognised(key: str):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["keyword", "author", "max_tokens", "sort_key", "passenger", "pattern", "is_private"]
)
def test_ordinary_key_names_stay_unmasked(key: str):
    assert not is_secret_key(key)


def test_short_values_are_masked_by_key_only_url_passwords_always():
    """The documented rule: a value shorter than MIN_SECRET_CHARS is masked under its key but
    not in other text (it would mask innocent words); a URL's password always is."""
    from tui_agent.redaction import MIN_SECRET_CHARS, SecretMask

    mask = SecretMask.of({"pin": "4321", "password": "correct-horse"})
    assert MIN_SECRET_CHARS == 6
    assert mask.masked({"pin": "4321", "note": "4321 correct-horse"}) == {
        "pin": MASK,
        "note": "4321 <secret:password>",
    }
    shown = mask.text("see redis://:pw@127.0.0.1:6379/0 and ftp://u:longer-one@host/x")
    assert shown == (
        "see redis://:<secret:url-password>@127.0.0.1:6379/0 "
        "and ftp://u:<secret:url-password>@host/x"
    )
