# gpuroof: the two first commands are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
OUTDIR ?= demo-output
# pytest-xdist: off by default (JOBS=0): the suite's budget is CPU, and two workers spend more
# of it (each collects and imports everything, and compiles again what the other's files
# compiled). On a compile-heavy slice (tests/occupancy, test_docs, test_cli_resources,
# test_cli_kernel; 2026-12-05, the 2-core machine) two workers took 188-192 s of CPU against
# 147 s serial, for 96-104 s of wall time against 135 s. `make test JOBS=2` for wall time: each
# file's tests stay on one worker (tests/conftest.py), and the files that share the compiled
# corpus on one (their xdist_group), so it is built once.
JOBS ?= 0
XDIST = -n $(JOBS) --dist loadgroup

.PHONY: demo test test-full docs bench clean

# The package alone: all that `gpuroof demo` needs (numpy, pydantic, matplotlib, pyelftools).
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

# The test extra on top: pytest, xdist, hypothesis, NVIDIA's compiler wheels, Triton and numba-cuda.
$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/gpuroof demo --out $(OUTDIR)

# The default suite (about 5 minutes of CPU on 2 cores): the long differential sweeps run a fixed
# sample of their cases (architectures, the doc walkthrough's processes, SASS reads, the traffic
# sweeps' hypothesis examples, the recorded sweeps' calibration fits, the costliest corpus
# recounts); docs/contributing.md lists them. test-full runs them whole.
test: $(VENV)/.installed-test
	$(PY) -m pytest -q $(XDIST)

# Everything, the differential sweeps whole.
test-full: $(VENV)/.installed-test
	GPUROOF_TEST_FULL=1 $(PY) -m pytest -q $(XDIST)

# The outputs the docs show (and the files they publish: the demo's figure, the H200 corpus and
# families tables), written fresh into README.md and docs/ by tests/test_docs.py: every line,
# the sampled ones too, on one worker (the pages are rewritten in place). Read the diff.
docs: $(VENV)/.installed-test
	GPUROOF_UPDATE_DOCS=1 GPUROOF_TEST_FULL=1 $(PY) -m pytest -q -n 0 -p no:cacheprovider tests/test_docs.py

bench: $(VENV)/.installed
	$(PY) benchmarks/bench_startup.py
	$(PY) benchmarks/bench_occupancy.py
	$(PY) benchmarks/bench_traffic.py

clean:
	rm -rf $(VENV) $(OUTDIR) build *.egg-info
