"""The circuit breaker: one circuit per model server or sandbox, a short cool-down, one probe
after it, closed by any success or by the user's retry."""

from __future__ import annotations

import pytest

from tui_agent.agents.task.breaker import CircuitBreaker, CircuitOpen, model_server

SERVER = "the model server at http://127.0.0.1:8000/v1"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def breaker(clock: Clock) -> CircuitBreaker:
    return CircuitBreaker(cool_down=10, clock=clock, retry_hint="press R to retry at once")


def test_a_failure_opens_its_circuit_only_and_says_how_to_retry(
    breaker: CircuitBreaker, clock: Clock
):
    breaker.check(SERVER)  # closed: the call goes ahead
    breaker.failed(SERVER, "connection refused")
    clock.now += 3
    with pytest.raises(CircuitOpen) as raised:
        breaker.check(SERVER)
    assert str(raised.value) == (
        f"{SERVER} failed 3 s ago (connection refused); it is tried again in 7 s; "
        "press R to retry at once"
    )
    breaker.check("the model server at http://127.0.0.1:9000/v1")  # another server: unaffected
    breaker.check("the openai API")
    breaker.check("the docker sandbox")


def test_after_the_cool_down_one_probe_goes_through_and_a_success_closes_it(
    breaker: CircuitBreaker, clock: Clock
):
    breaker.failed(SERVER, "503")
    clock.now += 10
    breaker.check(SERVER)  # the probe
    with pytest.raises(CircuitOpen, match="tried again in 10 s"):
        breaker.check(SERVER)  # only one while it runs
    breaker.succeeded(SERVER)
    assert not breaker.is_open(SERVER)
    breaker.check(SERVER)
    breaker.check(SERVER)


def test_a_failed_probe_opens_it_again_and_a_lost_probe_blocks_one_cool_down_only(
    breaker: CircuitBreaker, clock: Clock
):
    breaker.failed(SERVER, "503")
    clock.now += 10
    breaker.check(SERVER)
    breaker.failed(SERVER, "still 503")
    clock.now += 5
    with pytest.raises(CircuitOpen, match=r"failed 5 s ago \(still 503\)"):
        breaker.check(SERVER)
    clock.now += 5
    breaker.check(SERVER)  # a probe that never reports (cancelled) ...
    clock.now += 10
    breaker.check(SERVER)  # ... lets another through one cool-down later


def test_closing_a_circuit_retries_at_once(breaker: CircuitBreaker):
    breaker.failed(SERVER, "connection refused")
    breaker.failed("the openai API", "connection refused")
    assert breaker.close(SERVER) is True
    breaker.check(SERVER)
    assert breaker.close(SERVER) is False  # closed already
    assert breaker.is_open("the openai API")  # the other server's stays open
    breaker.reset()
    assert not breaker.is_open("the openai API")


def test_the_server_is_the_api_base_else_the_provider():
    assert model_server("openai/x", "http://127.0.0.1:8000/v1/") == SERVER
    assert model_server("ollama/qwen", "http://127.0.0.1:8000/v1") == SERVER  # same server
    assert model_server("gpt-4o-mini", None) == "the openai API"
    assert model_server("anthropic/claude-3-5-haiku-latest", None) == "the anthropic API"
    assert model_server("nosuchprovider/m", None) == "the nosuchprovider API"
    with_key = model_server("openai/x", "http://user:secret@host:1/v1")
    assert "secret" not in with_key
