# Imago: the two commands a newcomer needs are `make run` and `make test`.
# Every target installs what is missing first (scripts/setup.sh, idempotent).

BUILD      ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS       ?= $(shell nproc)
LISTEN     ?= 127.0.0.1:8080
DATA_DIR   ?= var
CMAKE_ARGS ?=

.PHONY: setup configure build run test asan tsan stress bench bench-http fuzz format clean contact-sheets

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS) >/dev/null

build: configure
	@ninja -C $(BUILD) -j $(JOBS)

# Starts the server on its embedded default (SQLite + files under var/). The first start creates
# an account and prints its API secret with a curl line to try.
run: build
	@mkdir -p $(DATA_DIR)
	@echo "imagod: http://$(LISTEN)  data: $(DATA_DIR)/  (Ctrl-C stops it)"
	@echo "  accounts and keys: ./$(BUILD)/imagod admin --data-dir $(DATA_DIR) --help"
	@./$(BUILD)/imagod serve --listen $(LISTEN) --data-dir $(DATA_DIR)

# The whole suite: unit tests and black-box HTTP tests against the real server, through CTest.
test: build
	@cd $(BUILD) && ctest --output-on-failure --timeout 600 -j $(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	@$(MAKE) --no-print-directory test BUILD=build-asan BUILD_TYPE=Debug CMAKE_ARGS=-DIMAGO_SANITIZE=ON

# The concurrent suites (HTTP server, live rooms and their brain, speech) under ThreadSanitizer;
# Each test carries its binary's name as a CTest label. Suppressions (third-party only) in
# scripts/tsan.supp.
TSAN_TARGETS ?= http_tests live_tests speech_tests
space := $(subst ,, )
tsan: setup
	@cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIMAGO_TSAN=ON >/dev/null
	@ninja -C build-tsan -j $(JOBS) $(TSAN_TARGETS)
	@cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/scripts/tsan.supp" \
	  ctest --output-on-failure --timeout 900 -j $(JOBS) -L '^($(subst $(space),|,$(TSAN_TARGETS)))$$'

# Aborted TTS/speech/SSE streams and rooms ended mid-recognition against a real server on
# loopback, for STRESS_SECONDS (default 60); fails on a crash, a leak or a frozen tick. Not in
# `make test` (docs/developing.md).
STRESS_SECONDS ?= 60
stress: build
	@python3 tests/stress/stress.py --imagod $(BUILD)/imagod --seconds $(STRESS_SECONDS)

# Benchmarks (on demand, figures go in notes; never timed tests).
bench:
	@$(MAKE) --no-print-directory build BUILD=build-bench BUILD_TYPE=Release CMAKE_ARGS=-DIMAGO_BUILD_BENCH=ON
	@bash bench/run_all.sh build-bench

bench-http: build
	@bash bench/http_bench.sh $(BUILD)/imagod

# Contact sheets of the talking face per test portrait (rest, speech shapes, blink, gestures,
# close-ups) in $(BUILD)/contact-sheets/*.png, for looking at (docs/avatar.md).
contact-sheets: configure
	@ninja -C $(BUILD) -j $(JOBS) avatar_contact_sheet
	@./$(BUILD)/src/avatar/avatar_contact_sheet $(BUILD)/contact-sheets

# libFuzzer targets (clang, installed on demand).
fuzz:
	@bash scripts/fuzz.sh

format:
	@git ls-files '*.cpp' '*.h' | xargs clang-format -i

clean:
	@rm -rf $(BUILD) build-asan build-tsan build-bench build-fuzz
