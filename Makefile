# `make run` and `make test` each install everything they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed
RUN_DIR := runs/dynamic-$(shell date +%Y%m%d-%H%M%S)

.PHONY: install run test test-fast lint bench

install: $(STAMP)

$(STAMP): pyproject.toml scripts/apt-install.sh scripts/install-system-deps.sh scripts/install-ros1.sh
	bash scripts/install-system-deps.sh
	bash scripts/install-ros1.sh
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "twinsim needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev]'
	# Blender Cycles (`replay --renderer cycles`): bpy declares numpy<2, twinsim needs 2.4, so
	# it cannot be a pip extra; it renders with numpy 2.4 (docs/cycles.md)
	$(VENV)/bin/pip install --quiet --no-deps 'bpy==5.0.1'
	touch $(STAMP)

run: install
	$(VENV)/bin/twinsim run --out $(RUN_DIR)
	$(VENV)/bin/twinsim validate $(RUN_DIR)
	$(VENV)/bin/twinsim info $(RUN_DIR)
	$(VENV)/bin/twinsim preview $(RUN_DIR) --most-dynamic --out $(RUN_DIR)-preview.png
	@echo "recorded $(RUN_DIR); one frame of it: $(RUN_DIR)-preview.png; all of it in Rerun: $(VENV)/bin/twinsim view $(RUN_DIR)"

test: install
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/lint-imports --no-cache
	# the docs as a site (mkdocs.yml): --strict fails on a broken link or anchor; built outside the repository
	site=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir $$site && rm -rf $$site
	$(VENV)/bin/pytest -q -n 2 --dist loadfile

# the everyday tier: no test marked slow, ros, blender or ray (pyproject.toml lists the markers)
test-fast: install
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/pytest -q -n 2 --dist loadfile -m "not slow and not ros and not blender and not ray"

bench: install
	$(VENV)/bin/python benchmarks/frame_cost.py
