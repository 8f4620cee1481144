# gpuroof: the two first commands are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
OUTDIR ?= demo-output

.PHONY: demo test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/gpuroof demo --out $(OUTDIR)

test: $(VENV)/.installed
	$(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) benchmarks/bench_occupancy.py
	$(PY) benchmarks/bench_traffic.py

clean:
	rm -rf $(VENV) $(OUTDIR) build *.egg-info
