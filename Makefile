# benchvault — `make demo` and `make test` work on a fresh machine (they build .venv themselves).
VENV ?= .venv
PY := $(VENV)/bin/python
BV := $(VENV)/bin/benchvault
DEMO_DB ?= demo.db
PORT ?= 8001
DEMO_CAPTURES = $(shell find fixtures/contract/vllm-* fixtures/contract/llama.cpp-* -type f \
                  ! -name '*.truth.json' ! -name ABOUT.json | sort)

.PHONY: install test demo bench contract peers clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

test: install
	$(PY) -m pytest -q -p no:cacheprovider

demo: install
	rm -f $(DEMO_DB)
	@# The product's own inputs: the seed notes and the real-tool captures (not the test
	@# fixtures, not the contract's truth files).
	$(BV) ingest fixtures/seeds $(DEMO_CAPTURES) --db $(DEMO_DB)
	$(BV) report all --db $(DEMO_DB) --out report
	$(BV) serve --db $(DEMO_DB) --port $(PORT)

# The performance figures in one run: a 1 GB server log (BENCH_MB=100 for a quick look)
# beside grep and the naive loop, blocks/s on the blocks-only log, many files on both cores,
# a team's year of notes ingested at 10k, 50k and 100k runs with the reports on it, and
# ingest --watch on the 1 GB log (a block appended, idle CPU).
BENCH_MB ?= 1000
bench: install
	@# Byte-compiled as an installed wheel is (an editable install compiles on first import,
	@# and never where PYTHONDONTWRITEBYTECODE is set): start-up is part of what is measured.
	$(PY) -m compileall -q benchvault
	$(PY) bench/server_log_speed.py --size-mb $(BENCH_MB)
	$(PY) bench/ingest_speed.py --size-mb 200 --chatter-mb 0
	$(PY) bench/many_files.py
	$(PY) bench/scale.py
	$(PY) bench/watch.py --size-mb $(BENCH_MB)

# Real llama-bench / vLLM runs of tests/contract/matrix.toml (heavy: GBs under .contract/, not
# part of `make test`); `make contract VERSIONS=llama.cpp-0.3.36` runs one version.
contract: install
	$(PY) tests/contract/run.py $(VERSIONS)

# llama.cpp's compare-llama-bench.py (from the llama-cpp-python sdist, with pip) beside
# `benchvault compare` on the contract captures: the rows and values that agree (not part of
# `make test`; docs/analyses.md says why the rest differ).
peers: install
	$(PY) bench/peers.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache $(DEMO_DB) .peers
