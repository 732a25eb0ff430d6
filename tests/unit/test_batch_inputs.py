"""A batch as a form gives it, checked into a plan: each problem names the input it is about."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.agents.requests import RequestError
from tui_agent.batch.engines import LocalEngine
from tui_agent.batch.inputs import BatchInputs, prepare_batch
from tui_agent.config import Settings

RECIPE = Path(__file__).parents[2] / "recipes" / "demo-pagination.json"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(db=tmp_path / "s.db", sandbox="local", model=None)


def refused(given: BatchInputs, settings: Settings) -> RequestError:
    with pytest.raises(RequestError) as caught:
        prepare_batch(given, settings)
    return caught.value


def test_a_recipe_batch_has_an_item_per_url_on_the_engine_named(
    tmp_path: Path, settings: Settings
) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("# shops\nhttp://127.0.0.1:8000/a\n\nhttp://127.0.0.1:8000/b\n")
    given = BatchInputs("recipe", str(RECIPE), str(urls), engine="local:2", max_in_flight=1)
    start = prepare_batch(given, settings)
    assert [item.label for item in start.plan.items] == [
        "http://127.0.0.1:8000/a",
        "http://127.0.0.1:8000/b",
    ]
    assert start.plan.request(1).url == "http://127.0.0.1:8000/b"  # type: ignore[attr-defined]
    assert isinstance(start.engine, LocalEngine) and start.engine.slots == 2
    assert start.options.max_in_flight == 1


def test_a_task_batch_takes_a_model_when_one_is_typed(tmp_path: Path, settings: Settings) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"price": 10}\n{"price": 20}\n')
    at_a_server = settings.model_copy(update={"api_base": "http://127.0.0.1:9/v1"})
    start = prepare_batch(BatchInputs("task", "Add tax", str(rows), model="openai/m1"), at_a_server)
    assert start.plan.base["model"] == "openai/m1"
    assert [item.sets["context"] for item in start.plan.items] == [{"price": 10}, {"price": 20}]
    untyped = prepare_batch(BatchInputs("task", "Add tax", str(rows)), settings)
    assert untyped.plan.base["model"] is None  # the configured one, when the items run


@pytest.mark.parametrize(
    ("given", "field", "said"),
    [
        (BatchInputs("recipe", "", "urls.txt"), "source", "no recipe file given"),
        (BatchInputs("recipe", str(RECIPE), ""), "inputs", "no URLs file given"),
        (BatchInputs("task", " ", "rows.jsonl"), "source", "the task is empty"),
        (BatchInputs("eval", "tasks.jsonl"), "model", "an eval batch needs a model"),
        (BatchInputs("recipe", str(RECIPE), "u", engine="spark"), "engine", "'spark'"),
        (BatchInputs("recipe", str(RECIPE), "u", max_in_flight=0), "max_in_flight", "at least"),
    ],
)
def test_each_problem_names_its_input(
    given: BatchInputs, field: str, said: str, settings: Settings
) -> None:
    error = refused(given, settings)
    assert error.field == field
    assert said in str(error)


def test_a_recipe_file_that_is_not_there_is_said_at_its_field(
    tmp_path: Path, settings: Settings
) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:8000/a\n")
    error = refused(BatchInputs("recipe", str(tmp_path / "missing.json"), str(urls)), settings)
    assert error.field == "source" and "missing.json" in str(error)


def test_a_bad_line_names_its_file_and_line(tmp_path: Path, settings: Settings) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:8000/a\nnot a page\n")
    error = refused(BatchInputs("recipe", str(RECIPE), str(urls)), settings)
    assert error.field == "inputs" and f"{urls} line 2" in str(error)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"price": 10}\n[1, 2]\n')
    error = refused(BatchInputs("task", "Add tax", str(rows)), settings)
    assert error.field == "inputs" and str(error).endswith("line 2: a row must be a JSON object")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "add 2 and 2"}\n')
    error = refused(BatchInputs("eval", str(tasks), model="m1"), settings)
    assert error.field == "source" and "line 1: a task needs `check`" in str(error)


def test_a_model_no_item_could_call_is_refused_before_anything_runs(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"price": 10}\n')
    unknown = refused(BatchInputs("task", "Add tax", str(rows), model="nosuch/zzz"), settings)
    assert unknown.field == "model" and "unknown model 'nosuch/zzz'" in str(unknown)
    keyless = BatchInputs("task", "Add tax", str(rows), model="openai/gpt-4o-mini")
    assert "OPENAI_API_KEY is not set" in str(refused(keyless, settings))
    # workers a scheduler elsewhere reaches read their own keys
    remote = BatchInputs(
        "task", "Add tax", str(rows), model="openai/gpt-4o-mini", engine="tcp://127.0.0.1:8786"
    )
    assert prepare_batch(remote, settings).plan.base["model"] == "openai/gpt-4o-mini"
    recipe = BatchInputs("recipe", str(RECIPE), str(rows), model="nosuch/zzz")
    assert refused(recipe, settings).field == "inputs"  # a recipe calls no model: not asked


def test_the_model_server_typed_goes_with_the_batch_and_a_bad_one_is_said_at_its_field(
    tmp_path: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"price": 10}\n')
    at_a_server = BatchInputs(
        "task", "Add tax", str(rows), model="openai/m1", api_base="http://127.0.0.1:9/v1"
    )
    start = prepare_batch(at_a_server, settings)  # a server of one's own needs no provider key
    assert start.plan.base["api_base"] == "http://127.0.0.1:9/v1"
    assert start.plan.request(0).model_dump()["api_base"] == "http://127.0.0.1:9/v1"
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "add 2 and 2", "check": "assert 1"}\n')
    bad = BatchInputs("eval", str(tasks), model="openai/m1", api_base="127.0.0.1:9")
    error = refused(bad, settings)
    assert error.field == "api_base" and "must be an http:// or https:// URL" in str(error)
