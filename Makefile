# Set-up and the two entry points.  Only Python >= 3.11 with pip (and make) is assumed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install clean-results

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,traces,peer]'
	@# Optuna's GP sampler needs PyTorch; install the CPU build when it is available offline
	@# (no multi-GB download); otherwise the GP tests are skipped and the sampler says why.
	-@$(BIN)/python -m pip install --quiet --no-index 'torch==2.13.0' >/dev/null 2>&1 \
	  || echo "note: PyTorch not available offline; the GP sampler is disabled"
	touch $(STAMP)

install: $(STAMP)

# The main job: sweep every shipped space, validate every claims file (with out-of-fit errors), build the site.
run: $(STAMP)
	$(BIN)/dse reproduce --all --cv

# The test suite.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup --timeout 900

clean-results:
	rm -rf results/reproduce dashboards/site
