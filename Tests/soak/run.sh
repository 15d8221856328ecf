#!/usr/bin/env bash
# Soak and fault tests against a real `backgrounder` binary (see CONTRIBUTING.md, "Soak and fault tests").
#
#   Tests/soak/run.sh [--short | --long] [--binary PATH] [--only kill,flood,store]
#
# --short (the default; CI runs it) takes about 3 minutes, --long about 11 (651 s measured on a
# loaded 2-core machine). Without --binary the debug binary is built (`swift build --product
# backgrounder`). Needs root (network namespaces, tmpfs mounts), iproute2, python3 and sqlite3;
# without them it is skipped with a message, except in CI (CI=true), where that is a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=""
arguments=()
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="$2"; shift 2 ;;
    *) arguments+=("$1"); shift ;;
  esac
done
missing=""
[ "$(id -u)" = 0 ] || missing="root"
for tool in ip python3 sqlite3 mount; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  if [ "${CI:-}" = true ]; then
    echo "soak: FAILED: needs$missing" >&2
    exit 1
  fi
  echo "soak: skipped: needs$missing" >&2
  exit 0
fi
if [ -z "$binary" ]; then
  swift build --product backgrounder >&2
  binary="$(swift build --show-bin-path)/backgrounder"
fi
exec python3 Tests/soak/soak.py --binary "$binary" "${arguments[@]}"
