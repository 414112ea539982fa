# tensorbridge — one command to see it work (`make demo`), one to test everything (`make test`).
# Every target installs what it needs, idempotently (stamps skip work already done).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
# reticulate 1.28 (Debian's R) needs NumPy < 2 in the Python it embeds, so the main venv pins it;
# a second venv runs the runtime suite on NumPy 2 so both majors stay supported.
NUMPY1 := "numpy>=1.26,<2"
VENV2  := .venv-numpy2
PY2    := $(VENV2)/bin/python

JS     := js-client
# R from Debian only (CRAN is unreachable); rpy2 for Debian's R 4.2 is pinned in the `r` extra
R_DEBS := r-base-core r-base-dev r-cran-reticulate r-cran-testthat r-cran-coda r-cran-posterior \
	r-cran-jsonlite
R_ENV  := TENSORBRIDGE_PYTHON=$(CURDIR)/$(PY) TENSORBRIDGE_REQUIRE_PYTHON=1
RPY2   := RPY2_CFFI_MODE=API
# apt waits for a dpkg lock held by another install (unattended upgrades, a parallel make)
# instead of failing at once
APT    := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600

.PHONY: demo demo-python test test-python test-numpy2 test-js test-browser test-r js lint bench bench-r \
	setup setup-test clean

## demo: the showcase — eight schools sampled from Python, from R (Rscript) and from a headless
## browser page, summaries side by side and a trace plot (demo-output/); installs R, Chromium,
## the npm packages and the runtime as needed. `make demo-python` is the Python part alone.
demo: $(VENV)/.demo-deps $(VENV)/.cc $(VENV)/.r-demo-deps js /usr/bin/chromium
	$(PY) examples/demo.py
	$(PY) examples/showcase.py

demo-python: $(VENV)/.demo-deps $(VENV)/.cc
	$(PY) examples/demo.py
	$(PY) examples/showcase.py --only python

## test: install every suite's dependencies, then run every suite (tests/suites/run.py): one
## failing suite never hides the others; a table of passed/failed/skipped/seconds per suite at the
## end (also test-output/summary.md), exit 1 if any failed. `tests/suites/run.py --list` shows them.
test:
	@$(MAKE) --no-print-directory -k setup-test || \
	  echo "make test: some dependencies did not install; the suites needing them will fail"
	$(PYTHON) tests/suites/run.py

setup-test: $(VENV)/.test-deps $(VENV)/.cc $(VENV2)/.test-deps $(VENV)/.r-deps js /usr/bin/chromium

lint: $(VENV)/.test-deps
	$(PYTHON) tests/suites/run.py lint

test-python: $(VENV)/.test-deps
	$(PYTHON) tests/suites/run.py python python-openblas-haswell python-openblas-prescott

test-numpy2: $(VENV2)/.test-deps
	$(PYTHON) tests/suites/run.py numpy2

## test-r: install the R package, R CMD check it, run testthat (also under two forced OpenBLAS
## kernel families) and the rpy2-hosted pytest suite
$(VENV)/.r-deps: $(VENV)/.test-deps pyproject.toml
	dpkg -s $(R_DEBS) >/dev/null 2>&1 || { $(APT) update -qq && \
	  $(APT) install -y -qq --no-install-recommends $(R_DEBS); }
	$(RPY2) $(PIP) install $(NUMPY1) -e ".[dev,tensorflow,r]"
	touch $@

test-r: $(VENV)/.r-deps
	$(PYTHON) tests/suites/run.py r-check r-testthat r-openblas-haswell r-openblas-prescott r-rpy2

## js: the npm package's dependencies and the offline Pyodide folder with the runtime's wheel
js: $(JS)/node_modules/.stamp $(JS)/dist/build-info.json

$(JS)/node_modules/.stamp: $(JS)/package.json $(JS)/package-lock.json
	cd $(JS) && npm ci --no-audit --no-fund
	touch $@

$(JS)/dist/build-info.json: $(JS)/node_modules/.stamp $(VENV)/.demo-deps pyproject.toml \
		$(JS)/scripts/build.mjs $(shell find runtime bridge package -name '*.py' -o -name '*.js')
	cd $(JS) && PYTHON=$(abspath $(PY)) node scripts/build.mjs

/usr/bin/chromium:
	$(APT) update -qq
	$(APT) install -y -q --no-install-recommends \
		chromium fonts-dejavu-core

test-js: js
	$(PYTHON) tests/suites/run.py node

test-browser: js /usr/bin/chromium
	$(PYTHON) tests/suites/run.py browser

## bench: speed targets, printed as ratios against the peers named in the issues, recorded in
## bench/RESULTS.md (the R and JS rows too: bench/r_bridge.py, bench/js_bridge.py; Node and
## Chromium sampling: bench/browser_ppl_bench.py).
## BENCH_ROUNDS=n / BENCH_SEEDS=n (>= 3) shorten a run; `make bench-r` runs the R part alone.
bench: bench/.venv/.deps bench/.venv-ppl/.deps $(VENV)/.r-deps js /usr/bin/chromium
	R CMD INSTALL --no-multiarch r-client >/dev/null
	TENSORBRIDGE_PYTHON=$(CURDIR)/$(PY) bench/.venv/bin/python bench/run.py

bench-r: $(VENV)/.r-deps
	R CMD INSTALL --no-multiarch r-client
	TENSORBRIDGE_PYTHON=$(CURDIR)/$(PY) Rscript bench/r_bridge.R

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# compiled sampling (runtime/compiled) builds C through cffi: a C compiler and the headers of the
# Python the venv runs on (python3-dev only matters when that Python is Debian's)
$(VENV)/.cc: $(VENV)/bin/python
	command -v cc >/dev/null && test -f "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')/Python.h" || { \
	  $(APT) update -qq && $(APT) install -y -qq --no-install-recommends gcc libc6-dev python3-dev; }
	touch $@

$(VENV)/.demo-deps: $(VENV)/bin/python pyproject.toml
	$(PIP) install $(NUMPY1) build -e ".[demo]"
	touch $@

$(VENV)/.test-deps: $(VENV)/bin/python pyproject.toml
	$(PIP) install $(NUMPY1) -e ".[dev,tensorflow,demo]"
	touch $@ $(VENV)/.demo-deps

# the R package and what it needs, without the test suites' extras
$(VENV)/.r-demo-deps: $(VENV)/.demo-deps $(shell find r-client/R r-client/src -type f) \
		r-client/DESCRIPTION r-client/NAMESPACE
	dpkg -s $(R_DEBS) >/dev/null 2>&1 || { $(APT) update -qq && \
	  $(APT) install -y -qq --no-install-recommends $(R_DEBS); }
	$(RPY2) $(PIP) install $(NUMPY1) -e ".[demo,r]"
	R CMD INSTALL --no-multiarch r-client >/dev/null
	touch $@

$(VENV2)/.test-deps: pyproject.toml
	test -x $(PY2) || $(PYTHON) -m venv $(VENV2)
	$(PY2) -m pip --disable-pip-version-check -q install "numpy>=2" -e ".[dev]"
	touch $@

bench/.venv/.deps: bench/requirements.txt pyproject.toml
	test -x bench/.venv/bin/python || $(PYTHON) -m venv bench/.venv
	bench/.venv/bin/python -m pip --disable-pip-version-check -q install -r bench/requirements.txt -e .
	touch $@

# NUTS side by side (bench/ppl_bench.py): NumPyro's jax 0.10 needs NumPy >= 2, bench/.venv pins
# NumPy < 2 for R, so the inference peers get their own venv; ppl_bench re-runs itself there
bench/.venv-ppl/.deps: bench/requirements-ppl.txt pyproject.toml
	test -x bench/.venv-ppl/bin/python || $(PYTHON) -m venv bench/.venv-ppl
	bench/.venv-ppl/bin/python -m pip --disable-pip-version-check -q install \
		-r bench/requirements-ppl.txt -e .
	touch $@

clean:
	rm -rf $(VENV) $(VENV2) bench/.venv bench/.venv-ppl bench/results build dist *.egg-info \
		test-output
