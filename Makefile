# GroundedQA: `make run` starts everything on embedded defaults; `make test` runs the suite.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup run test lint bench clean-var

setup: $(STAMP)

# torch first and pinned: any other torch spec pulls several GB of CUDA wheels.
$(STAMP): requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

run: setup
	$(PY) -m groundedqa_site.launcher

test: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest

lint: setup
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

bench: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m bench

clean-var:
	$(PY) -c "from groundedqa_site import embedded_db; embedded_db.stop(__import__('pathlib').Path('var/pg'))" || true
	rm -rf var
