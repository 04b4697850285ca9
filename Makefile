# npu-emu: build, install into target/npu-emu, run the samples, run the tests.
#
#   make          build the workspace and lay out a CANN-like tree in target/npu-emu
#   make run      ... then build the samples against that tree and run them on emulated NPUs,
#                 starting with the main demo, samples/distributed_add (an Ascend C kernel on every
#                 rank, then HcclAllReduce on the same stream)
#   make test     ... then run the whole test suite (after `make venv`)
#   make venv     the tests' Python in target/venv (numpy, pytest; torch and torch_npu when
#                 tests/python/setup_venv.sh exists), made once
#   make perf     build the HCCL performance tools (tests/perf/hccl-perf, hccl-perf-mpi, tcp_link)
#   make bench    run the runtime benchmarks beside their peers (tests/bench/run.sh all)
#   make fuzz     a long run of the C-ABI fuzz target (tests/tests/fuzz.rs): FUZZ_CASES cases
#                 of FUZZ_CALLS calls, from 1 and 4 threads, starting at seed FUZZ_SEED
#   make clean    remove build output

CARGO   ?= cargo
PREFIX  ?= target/npu-emu
NPU_EMU := target/release/npu-emu
RANKS   ?= 4

.PHONY: all build install run samples test perf bench fuzz clean venv

FUZZ_CASES ?= 200
FUZZ_CALLS ?= 50000
FUZZ_SEED  ?= 1000

all: install

build:
	$(CARGO) build --release --workspace

install: build
	$(NPU_EMU) install --quiet --prefix $(PREFIX)
	sh tools/opp/install.sh $(PREFIX)
	@echo "npu-emu is ready in $(PREFIX); set up a shell with: source $(PREFIX)/set_env.sh"

# The samples build with their own Makefiles against the install tree, exactly as a user
# would after `source set_env.sh`.
samples: install
	. $(PREFIX)/set_env.sh && $(MAKE) -C samples/distributed_add && $(MAKE) -C samples/distributed_training
	. $(PREFIX)/set_env.sh && $(MAKE) -C samples/acl_memcpy && $(MAKE) -C samples/hccl_allreduce

run: samples
	. $(PREFIX)/set_env.sh && $(NPU_EMU) run -n 2 samples/distributed_add/distributed_add
	. $(PREFIX)/set_env.sh && $(NPU_EMU) run -n 2 samples/distributed_training/distributed_training
	. $(PREFIX)/set_env.sh && samples/acl_memcpy/acl_memcpy
	. $(PREFIX)/set_env.sh && $(NPU_EMU) run -n $(RANKS) samples/hccl_allreduce/hccl_allreduce

test: install venv
	$(CARGO) test --release --workspace --no-fail-fast

fuzz: build
	NPU_EMU_FUZZ_CASES=$(FUZZ_CASES) NPU_EMU_FUZZ_CALLS=$(FUZZ_CALLS) NPU_EMU_FUZZ_SEED=$(FUZZ_SEED) \
		$(CARGO) test --release -p npu-emu-tests --test fuzz -- --nocapture

# The Python the tests use (tests/tests/python_hccl.rs finds it in target/venv).
VENV ?= target/venv
venv:
	@if [ -x tests/python/setup_venv.sh ]; then tests/python/setup_venv.sh $(VENV); \
	elif ! $(VENV)/bin/python -c "import numpy, pytest" 2>/dev/null; then \
	    echo "making $(VENV) (numpy, pytest)"; \
	    python3 -m venv $(VENV) && $(VENV)/bin/python -m pip install -q numpy pytest; fi

perf: install
	. $(PREFIX)/set_env.sh && $(MAKE) -C tests/perf

bench: build
	NO_BUILD=1 tests/bench/run.sh all

clean:
	-$(MAKE) -C samples/distributed_add clean
	-$(MAKE) -C samples/distributed_training clean
	-$(MAKE) -C samples/acl_memcpy clean
	-$(MAKE) -C samples/hccl_allreduce clean
	-$(MAKE) -C tests/perf clean
	$(CARGO) clean
