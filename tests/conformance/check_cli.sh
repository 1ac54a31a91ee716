#!/bin/sh
# Integration test of `ksched conformance`: exit codes, the diff lines of a
# deliberately wrong expected file, read errors naming file:line, --filter,
# a single-file argument and usage errors.
# Usage: check_cli.sh KSCHED PLUGIN_DIR WRONG_DIR OWN_DIR
set -u
ksched=$1 plugins=$2 wrong=$3 own=$4
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fails=0

fail() { echo "not ok: $*"; fails=$((fails + 1)); }
expect_rc() { # WANT GOT WHAT
    [ "$1" -eq "$2" ] || fail "$3: exit status $2, expected $1"
}
# A run whose answer is on stdout prints nothing on stderr.
expect_quiet() { # WHAT
    [ ! -s "$err" ] || fail "$1: unexpected stderr: $(head -n 3 "$err")"
}
expect_line() { # FILE LINE
    grep -Fxq -- "$2" "$1" || fail "missing line: '$2'"
}
run() { "$ksched" conformance "$@" >"$out" 2>"$err"; }

# 1. A wrong expected file, a scenario without one, malformed YAML.
run --plugin-dir "$plugins" --no-default-plugin-path "$wrong"
expect_rc 1 $? "wrong expected files"
expect_quiet "wrong expected files"
expect_line "$out" "FAIL wrong-score"
expect_line "$out" "  default/p1: plugin_scores.NodeResourcesFit.n1: expected 49, got 50"
expect_line "$out" '  default/p1: rejected.n0: expected ["Insufficient cpu"], got (none)'
expect_line "$out" '  default/p1: unschedulable: expected "nope", got (none)'
expect_line "$out" "FAIL no-expected"
expect_line "$out" "  error: $wrong/no-expected.expected.yaml: cannot open: No such file or directory"
expect_line "$out" "FAIL bad-yaml"
grep -q "^  error: $wrong/bad-yaml.yaml:5:[0-9]*: " "$out" ||
    fail "bad-yaml: no file:line in the error"
[ "$(tail -n 1 "$out")" = "0 passed, 3 failed" ] ||
    fail "last line is '$(tail -n 1 "$out")'"
[ "$(grep -c '^  default/p1: ' "$out")" -eq 3 ] || fail "extra diff lines"

# 2. --filter keeps one scenario.
run -p "$plugins" --no-default-plugin-path --filter wrong-sc "$wrong"
expect_rc 1 $? "--filter"
expect_quiet "--filter"
[ "$(grep -c '^FAIL ' "$out")" -eq 1 ] || fail "--filter ran other scenarios"
expect_line "$out" "0 passed, 1 failed"

# 3. A single scenario file passes; -v prints the decisions.
run -p "$plugins" --no-default-plugin-path -v "$own/tie-smallest-name.yaml"
expect_rc 0 $? "single passing file"
expect_quiet "single passing file"
expect_line "$out" "PASS tie-smallest-name"
expect_line "$out" "      selected: tie-b"
expect_line "$out" "1 passed, 0 failed"

# 4. A filter that matches nothing is a failure, not a pass.
run -p "$plugins" --no-default-plugin-path --filter no-such-thing "$own"
expect_rc 1 $? "empty selection"
grep -q "no scenario found" "$err" || fail "no message for an empty selection"

# 5. Usage errors: exit 2 with a message on stderr.
run --bogus "$own"
expect_rc 2 $? "unknown option"
grep -q "unknown or incomplete option '--bogus'" "$err" || fail "unknown option message"
run -p "$plugins" "$own/does-not-exist"
expect_rc 2 $? "missing directory"
grep -q "does not exist" "$err" || fail "missing directory message"
run
expect_rc 2 $? "no argument"
grep -q "give at least one scenario directory or file" "$err" ||
    fail "no-argument message"
run --plugin-dir "$own/does-not-exist" "$own"
expect_rc 2 $? "missing plugin dir"
grep -q -- "--plugin-dir '$own/does-not-exist' is not a directory" "$err" ||
    fail "missing plugin dir message"
run --help
expect_rc 0 $? "--help"
expect_quiet "--help"
grep -q "^Usage: ksched conformance" "$out" || fail "--help prints no usage"

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed; last output:"
    cat "$out" "$err"
    exit 1
fi
echo "ok: all conformance CLI checks passed"
