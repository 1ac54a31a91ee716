#!/bin/sh
# Runs every test: a -Werror build with `meson test`, then the same suites
# under AddressSanitizer + UndefinedBehaviorSanitizer, then the unit suites
# under valgrind. Usage: tests/run-all.sh   (from the repository root)
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

if command -v valgrind >/dev/null 2>&1; then
    step "unit, profiles and plugins suites under valgrind"
    meson test -C build --print-errorlogs --num-processes 2 \
        --setup valgrind --suite unit --suite profiles --suite plugins
fi
step "all tests passed"
