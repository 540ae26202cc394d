# Quick start: `make demo` and `make test`. Both bootstrap .venv from pyproject.toml when it is
# missing or older than pyproject.toml; nothing else needs installing by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Two workers on CI's two cores; override with `make test JOBS=1`.
JOBS   ?= auto

.PHONY: venv demo test regress verilog area fpga bench clean distclean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

demo: venv
	$(BIN)/ahasd demo

# pytest exits 5 when no test ran; that is a failure here (as is any other non-zero status).
test: venv
	$(BIN)/python -m pytest -n $(JOBS) -m "not regress" tests

regress: venv
	$(BIN)/python -m pytest -n $(JOBS) -m regress tests

verilog: venv
	$(BIN)/ahasd verilog all -o build/verilog

area: venv
	$(BIN)/ahasd area all

bench: venv
	$(BIN)/ahasd bench all

clean:
	rm -rf build .pytest_cache

distclean: clean
	rm -rf $(VENV) *.egg-info
