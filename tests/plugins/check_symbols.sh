#!/bin/sh
# Fail when a plugin shared object exports anything but its descriptor.
# Usage: check_symbols.sh PLUGIN.so...
status=0
nm_bin=${NM:-nm}
for so in "$@"; do
    syms=$("$nm_bin" -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' |
           grep -v -x -e _init -e _fini -e _edata -e _end -e __bss_start |
           grep -v '^__odr_asan')  # AddressSanitizer's ODR markers
    if [ "$syms" != "ks_plugin_descriptor" ]; then
        echo "FAIL $so exports:" $syms
        status=1
    else
        echo "ok   $so"
    fi
done
exit $status
