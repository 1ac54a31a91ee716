#!/bin/sh
# Every public SDK header must compile on its own as strict C11 and as C++,
# with warnings as errors. Usage: check_headers.sh SDK_INCLUDE_DIR
set -eu
inc="$1"
cc="${CC:-cc}"
cxx="${CXX:-c++}"
status=0
for h in "$inc"/ksched/*.h; do
    name="ksched/$(basename "$h")"
    for std in c11 c17; do
        if ! printf '#include <%s>\nint ks_header_check_;\n' "$name" |
            "$cc" -std=$std -pedantic -Wall -Wextra -Werror -fsyntax-only \
                -I"$inc" -x c - ; then
            echo "FAIL: $name does not compile alone as $std" >&2
            status=1
        fi
    done
    if command -v "$cxx" >/dev/null 2>&1; then
        for std in c++11 c++17; do
            if ! printf '#include <%s>\nint ks_header_check_;\n' "$name" |
                "$cxx" -std=$std -pedantic -Wall -Wextra -Werror \
                    -fsyntax-only -I"$inc" -x c++ - ; then
                echo "FAIL: $name does not compile alone as $std" >&2
                status=1
            fi
        done
    else
        echo "FAIL: no C++ compiler ($cxx) to check $name" >&2
        status=1
    fi
done
# A C++20 plugin can use the descriptor macro (designated initializers).
if "$cxx" -std=c++20 -x c++ /dev/null -fsyntax-only 2>/dev/null; then
    printf '#include <ksched/plugin.h>\nKS_PLUGIN_DEFINE("Cxx", "1", .create = nullptr);\n' |
        "$cxx" -std=c++20 -Wall -Werror -fsyntax-only -I"$inc" -x c++ - ||
        { echo "FAIL: KS_PLUGIN_DEFINE does not compile as C++20" >&2; status=1; }
fi
[ $status = 0 ] && echo "all SDK headers compile alone as C11/C17 and C++11/C++17"
exit $status
