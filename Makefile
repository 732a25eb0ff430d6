# The two commands: `make demo` and `make test`. Both set everything up idempotently first.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: demo test setup system docker image lint

demo: setup
	@scripts/demo.sh

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(VENV)/bin/pytest -n 2 -q --durations=25

setup: system $(STAMP) image

system:
	@scripts/ensure-system.sh

docker: system
	@sh scripts/ensure-docker.sh

# Cached: a no-op when the image is up to date (first build from a debootstrap rootfs: minutes).
image: docker $(STAMP)
	@$(VENV)/bin/tui-agent sandbox build

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
