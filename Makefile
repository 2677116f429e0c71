# air: the two commands a new machine needs are `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[semgrep,test]'
	touch $(STAMP)

## Check the bundled example backend and write its report to air-report/.
run: $(STAMP)
	$(BIN)/air check --pack pytorch-2.x examples/torch_toy

## The whole test suite, including the pack's fixtures.
test: $(STAMP)
	$(BIN)/python -m pytest

## Time `air check` against a plain read of the same files (BENCH_PATH=dir to use a real tree).
bench: $(STAMP)
	$(BIN)/python -m benchmarks.bench $(BENCH_PATH)

clean:
	rm -rf $(VENV) air-report .pytest_cache
