#!/usr/bin/env bash
# Seeds for fuzz_ldcache: the machine's real ld.so.cache (new format with the
# glibc-hwcaps/generator extensions on glibc >= 2.33), when there is one.
set -euo pipefail
out=$1
mkdir -p "$out"
for f in /etc/ld.so.cache; do
  [ -r "$f" ] && cp "$f" "$out/$(echo "$f" | tr / _)"
done
exit 0
