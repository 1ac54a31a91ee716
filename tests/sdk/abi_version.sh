#!/bin/sh
# The plugin ABI version is defined once, in sdk/include/ksched/plugin.h
# (KS_ABI_MAJOR, KS_ABI_MINOR): `ksched version` and ksched-plugin.pc must
# say the same. Usage: abi_version.sh SOURCE_ROOT KSCHED PC_FILE
set -eu
src="$1"
ksched="$2"
pc="$3"
hdr="$src/sdk/include/ksched/plugin.h"
major=$(sed -n 's/^#define KS_ABI_MAJOR \([0-9][0-9]*\)$/\1/p' "$hdr")
minor=$(sed -n 's/^#define KS_ABI_MINOR \([0-9][0-9]*\)$/\1/p' "$hdr")
if [ -z "$major" ] || [ -z "$minor" ]; then
    echo "FAIL: no '#define KS_ABI_MAJOR N' / KS_ABI_MINOR line in $hdr" >&2
    exit 1
fi
status=0
got=$("$ksched" version)
case "$got" in
*"(plugin ABI $major.$minor)"*) ;;
*)
    echo "FAIL: 'ksched version' prints '$got'; plugin.h says $major.$minor" >&2
    status=1
    ;;
esac
for v in "abi_major=$major" "abi_minor=$minor"; do
    if ! grep -qx "$v" "$pc"; then
        echo "FAIL: $pc has no line '$v'" >&2
        status=1
    fi
done
[ $status = 0 ] && echo "plugin ABI $major.$minor everywhere"
exit $status
