# `make demo` and `make test` work on a fresh machine with only python3, pip and gcc:
# they create .venv, install the package with the demo's extras (which compiles the C tree,
# src/multibody/csrc/*/*.c, once) — `make test` adds every extra and the test dependencies (Pinocchio,
# MuJoCo's dm_control, …), which the demo does not need — and rebuild the core in place whenever a C
# file or header changed.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
CORE_SRC := $(wildcard src/multibody/csrc/*/*.c src/multibody/csrc/*/*.h) setup.py
CORE     := src/multibody/core/.built

# Numeric tests and the URDF fuzz, run under AddressSanitizer + UndefinedBehaviorSanitizer.
ASAN_TESTS := tests/test_core.py tests/test_dynamics_consistency.py tests/test_bad_input.py \
              tests/test_floating.py tests/test_kinematics.py tests/test_sparse.py tests/test_urdf_errors.py \
              tests/test_engine.py tests/test_engine_bad_input.py tests/test_engine_collision.py \
              tests/test_rollout.py tests/test_passive.py tests/test_joint_limits.py tests/test_contact.py tests/test_constraints.py \
              tests/test_output_memory.py tests/test_codegen_caller.py \
              tests/test_lanes.py tests/test_gate.py tests/test_threads.py tests/test_fuzz_api.py tests/test_derivatives.py \
              tests/test_engine_rays.py tests/test_engine_trimesh.py tests/test_engine_amotor.py \
              tests/test_engine_convex.py tests/test_engine_convex_mesh.py \
              tests/test_joint_limits.py tests/test_robot_files_close.py tests/test_aba_unit_axes.py \
              tests/test_engine_solver.py tests/test_engine_ode.py \
              tests/test_steppers.py tests/test_joint_table.py tests/test_engine_collision_table.py \
              tests/test_scene_contact.py tests/test_cmodel_tables.py tests/test_interrupt.py tests/test_constraints_c.py \
              tests/test_hfield.py tests/test_hard_contact.py tests/test_batch_resume.py tests/test_actuator_gravcomp.py \
              tests/test_loop_contact.py tests/test_contact_with_stops.py tests/test_ground_start.py

.PHONY: demo test test-fast test-asan bench core clean system-deps

# the demo's extras (derivation, plots); pip's editable install compiles the C core in place once
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip 'setuptools>=77'  # PEP 639 licence metadata; setup.py build_ext runs with it
	$(PY) -m pip install -q -e '.[symbolic,sim,view]'
	touch $(STAMP) $(CORE)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[test]'
	touch $(TEST_STAMP)

# the C core, built in place (portable flags; MULTIBODY_NATIVE=1 for -march=native)
$(CORE): $(CORE_SRC) | $(STAMP)
	@if [ -e $(CORE) ] && [ -z "$$(find $(CORE_SRC) -newer $(CORE))" ]; then \
	  echo "the C core is up to date (pip's install built it)"; \
	else \
	  rm -f src/multibody/core/_core*.so src/multibody/engine/_engine*.so && \
	  echo "$(PY) setup.py -q build_ext --inplace --force" && $(PY) setup.py -q build_ext --inplace --force; \
	fi
	touch $(CORE)

core: $(CORE)

demo: $(CORE)
	$(PY) -m multibody demo

# Debian packages some tests drive (Chromium): installed when root or passwordless sudo allows,
# otherwise one line says which tests will be skipped (under CI=true they fail instead)
system-deps:
	@bash tools/system-deps

test: $(CORE) $(TEST_STAMP) system-deps
	$(PY) -m pytest -q -n 2

test-fast: $(CORE) $(TEST_STAMP)
	$(PY) -m pytest -q -n 2 -m "not slow"

# Sanitized build: libasan must be loaded before the interpreter; CPython's own allocations are
# not leak-checked (detect_leaks=0).  Afterwards the portable build is restored.
test-asan: $(TEST_STAMP)
	rm -f $(CORE) src/multibody/core/_core*.so src/multibody/engine/_engine*.so
	MULTIBODY_SANITIZE=1 $(PY) setup.py -q build_ext --inplace --force
	LD_PRELOAD="$$(gcc -print-file-name=libasan.so) $$(gcc -print-file-name=libubsan.so)" \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  $(PY) -m pytest -q -p no:cacheprovider $(ASAN_TESTS)
	rm -f src/multibody/core/_core*.so src/multibody/engine/_engine*.so
	$(MAKE) core

bench: $(CORE) $(TEST_STAMP)
	$(PY) -m multibody bench
	$(PY) -m multibody.bench.urdf
	$(PY) -m multibody.bench.derivatives

clean:
	rm -rf $(VENV) build src/*.egg-info src/multibody/core/_core*.so src/multibody/engine/_engine*.so $(CORE)
