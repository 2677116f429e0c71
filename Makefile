# air: the two commands a new machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
LINTED := engine tests benchmarks $(wildcard rulepacks/*/data/*.py rulepacks/*/probes/*.py frameworks/*/*.py)

.PHONY: run test lint semgrep html-check bench bench-layers clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.dev: $(VENV)/.test
	$(BIN)/pip install --quiet -e '.[test,dev]'
	touch $@

## Check the bundled example backend and write its report to air-report/.
run: $(VENV)/.base
	$(BIN)/air check --pack pytorch-2.x examples/torch_toy

## The whole test suite, including the pack's fixtures (the semgrep kind's tests need `make semgrep`),
## on as many workers as the machine has cores.
test: $(VENV)/.test
	$(BIN)/python -m pytest -n auto

## ruff (lint and format) and mypy.
lint: $(VENV)/.dev
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy

## The HTML report in headless Chromium: the score, the chart and the rows render, every filter
## works; the screenshot is air-report/html-check.png.
html-check: $(VENV)/.test
	mkdir -p air-report
	AIR_SCREENSHOT=$(CURDIR)/air-report/html-check.png $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_html_report.py

## The optional engine of the `semgrep` evidence kind (about 360 MB).
semgrep: $(VENV)/.base
	$(BIN)/pip install --quiet -e '.[semgrep]'

## Time `air check` against a plain read of the same files (BENCH_PATH=dir to use a real tree).
bench: $(VENV)/.base
	$(BIN)/python -m benchmarks.bench $(BENCH_PATH)

## What each speed layer is worth: a cold check with each switched off in turn (BENCH_PATH=dir).
bench-layers: $(VENV)/.base
	$(BIN)/python -m benchmarks.layers $(BENCH_PATH)

clean:
	rm -rf $(VENV) air-report .pytest_cache .mypy_cache .ruff_cache
