# Quick start: `make demo` and `make test`. Both bootstrap .venv from pyproject.toml when it is
# missing or older than pyproject.toml; nothing else needs installing by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Two workers on CI's two cores; override with `make test JOBS=1`.
JOBS   ?= auto

.PHONY: venv demo lint test cocotb formal regress coverage mutate verilog area fpga board fw-test reproduce readme-plots claims bench \
        clean distclean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip 'setuptools>=68' wheel
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

demo: venv
	$(BIN)/ahasd demo

# ruff (rule selection in pyproject.toml) over the tree, mypy over the spec layer and sim/,
# run from the repository root (no import hook: docs/architecture.md section 8).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/python -m mypy -p ahasd.spec -p ahasd.sim

# pytest exits 5 when no test ran; that is a failure here (as is any other non-zero status).
test: venv lint
	$(BIN)/python -m pytest -n $(JOBS) -m "not regress" tests

# Only the cocotb + Verilator tier. AHASD_WAVES=1 writes a VCD per test under build/waves/.
cocotb: venv
	$(BIN)/python -m pytest -n $(JOBS) -m "cocotb and not regress" tests

# Formal proofs (yowasp-sby, smtbmc yices): GTS, CSR, divider, queues, TVC, the UART bridge and
# the queues across their clock crossing, each property also on its broken copy; README table.
formal: venv
	PATH=$(BIN):$$PATH nice $(BIN)/python -m ahasd.formal all --readme README.md

regress: venv
	$(BIN)/python -m pytest -n $(JOBS) -m regress tests

# The cocotb tier built with Verilator line + toggle coverage; a per-block summary.md in
# build/coverage.
coverage: venv
	rm -rf build/coverage
	AHASD_COVERAGE=build/coverage $(BIN)/python -m pytest -n $(JOBS) -m "cocotb and not regress" tests
	$(BIN)/python -m ahasd.synth.coverage build/coverage

# Mutation campaign (ahasd/mutation/catalogue.toml): survivors, then "mutation score: K/N killed".
mutate: venv
	nice $(BIN)/python -m ahasd.mutation run --jobs 2

verilog: venv
	$(BIN)/ahasd verilog all -o build/verilog

# Area of every block (mm² at 28 nm beside the published figures) and FPGA place-and-route.
area: venv
	$(BIN)/ahasd area all --anchors --readme README.md
	$(BIN)/ahasd timing all --readme README.md

fpga: venv
	$(BIN)/ahasd fpga ecp5 all --readme README.md
	$(BIN)/ahasd fpga ecp5 state_commit --param config.burst_bytes=8 --param max_rank=2 \
	  --name state_commit_4lane_r2 --readme README.md
	$(BIN)/ahasd fpga ice40 all --readme README.md

# The controller behind a UART-to-AXI4-Lite bridge on the ULX3S, to a bitstream.
board: venv
	$(BIN)/ahasd fpga ecp5 --board ulx3s

# Firmware: RV32 build with its size, sanitizer unit tests, firmware in the loop (also in `make test`).
fw-test: venv
	$(BIN)/python -m ahasd.firmware.build build/firmware-riscv32
	$(BIN)/python -m pytest -n 0 tests/firmware tests/cli/test_regs.py

# The paper's grid on the system simulator: CSV, JSON, plots and summary.md beside the paper
# (summary.md ends with the claims' sentences when `make claims` has run).
reproduce: venv
	$(BIN)/ahasd reproduce --out build/reproduce --force \
	  $(if $(wildcard build/claims/claims.json),--claims build/claims/claims.json)

# The two plots the README shows inline (docs/img/), from a fresh `make reproduce`.
readme-plots: reproduce
	cp build/reproduce/round_breakdown.png build/reproduce/vs_npu_lpddr5.png docs/img/

# Where each of the paper's claims can hold (a grid of the simulator; minutes): build/claims,
# and the README's sentences.
claims: venv
	$(BIN)/ahasd claims --out build/claims --force --readme README.md

bench: venv
	$(BIN)/ahasd bench all

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache

distclean: clean
	rm -rf $(VENV) *.egg-info
