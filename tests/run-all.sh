#!/bin/sh
# Runs every test: a -Werror build with `meson test`, then the same suites
# under AddressSanitizer + UndefinedBehaviorSanitizer, the suites that run
# Filter/Score worker threads under ThreadSanitizer, the unit suites and
# the framework and serve C tests under valgrind, and each libFuzzer target
# (clang) for a fixed number of inputs. Usage: tests/run-all.sh   (from the
# repository root). FUZZ_RUNS (default 20000) sets the inputs per target.
set -eu
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "build (warnings are errors)"
if [ ! -d build/meson-private ]; then
    meson setup build --werror
else
    meson configure build -Dwerror=true
fi
ninja -C build
step "meson test"
meson test -C build --print-errorlogs --num-processes 2

step "build with AddressSanitizer + UndefinedBehaviorSanitizer"
if [ ! -d build-asan/meson-private ]; then
    meson setup build-asan --werror -Db_sanitize=address,undefined \
        -Db_lundef=false -Dbuildtype=debug
fi
ninja -C build-asan
step "meson test under ASan/UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2

step "build with ThreadSanitizer"
if [ ! -d build-tsan/meson-private ]; then
    meson setup build-tsan --werror -Db_sanitize=thread -Db_lundef=false \
        -Dbuildtype=debug
fi
ninja -C build-tsan
# The suites whose code runs on the Filter/Score worker pool (parallelism
# > 1): the framework runtime and scheduler, the plugins, `ksched serve`
# and `ksched schedule`. A report fails the test (exit code 66).
step "framework, plugins, serve and cli suites under ThreadSanitizer"
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp" \
    meson test -C build-tsan --print-errorlogs --num-processes 2 \
        --suite framework --suite plugins --suite serve --suite cli

if command -v valgrind >/dev/null 2>&1; then
    step "unit, profiles and plugins suites under valgrind"
    meson test -C build --print-errorlogs --num-processes 2 \
        --setup valgrind --suite unit --suite profiles --suite plugins
    # The framework suite's C tests (cli-e2e is a shell script: valgrind
    # would check the shell; the pool's test checks timings, which under
    # valgrind are its scheduler's: suite timing) and the serve suite's C
    # tests; the serve Python tests are left out (README: Testing).
    step "framework and serve C tests under valgrind"
    meson test -C build --print-errorlogs --num-processes 2 \
        --setup valgrind --suite framework --no-suite cli --no-suite timing
    meson test -C build --print-errorlogs --num-processes 2 \
        --setup valgrind serve_units http_limits metrics_units
fi

if command -v clang >/dev/null 2>&1; then
    step "libFuzzer targets (clang, ASan + UBSan)"
    if [ ! -d build-fuzz/meson-private ]; then
        CC=clang meson setup build-fuzz --werror -Dfuzz=true \
            -Db_sanitize=address,undefined -Db_lundef=false
    fi
    ninja -C build-fuzz tests/fuzz/fuzz_manifest tests/fuzz/fuzz_config \
        tests/fuzz/fuzz_json tests/fuzz/fuzz_http
    # Seed corpora from the repository's examples; new inputs the fuzzers
    # find stay in build-fuzz/corpus for the next run.
    c=build-fuzz/corpus
    mkdir -p $c/manifest $c/config $c/json $c/http
    cp profiles/examples/cluster.yaml tests/coscheduling/gangs.yaml \
        tests/fuzz/aliases-manifest.yaml $c/manifest/
    cp profiles/default.yaml profiles/examples/most-allocated.yaml \
        profiles/examples/two-profiles.yaml \
        profiles/examples/no-preemption.yaml tests/fuzz/aliases-config.yaml \
        $c/config/
    cp tests/fuzz/seeds/json/* $c/json/
    cp tests/fuzz/seeds/http/* $c/http/
    runs=${FUZZ_RUNS:-20000}
    for t in manifest config json http; do
        n=$runs
        # One connection per input: the HTTP target is ~10x slower.
        [ $t = http ] && n=$((runs / 4))
        ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            build-fuzz/tests/fuzz/fuzz_$t -runs=$n -seed=1 \
            -artifact_prefix=build-fuzz/ $c/$t
    done
fi
step "all tests passed"
