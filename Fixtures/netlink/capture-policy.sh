#!/usr/bin/env bash
# Takes the real policy-routing captures (pcapng) in a throwaway network namespace (root needed):
#   policy-wg-quick.pcapng: veth0 (192.0.2.1/24, main default route) and veth2
#     (198.51.100.1/24); then what wg-quick does: a default route in table 51820 via veth2,
#     `ip rule add not fwmark 51820 table 51820`, `ip rule add table main suppress_prefixlength 0`.
#     `ip route get 8.8.8.8` says dev veth2.
#   nexthop-object.pcapng: the same two links; `ip nexthop add id 1 via 198.51.100.254 dev veth2`,
#     `ip route add default nhid 1 metric 50` (`ip route get 8.8.8.8`: dev veth2), then
#     `ip link set veth2 down` (the kernel drops nexthop and route silently: dev veth0).
# Each capture also holds the monitor's own RTM_GETROUTE lookups and the kernel's answers.
# Usage: Fixtures/netlink/capture-policy.sh [path/to/backgrounder]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../.build/debug/backgrounder}"
ns="bgfixture-$$"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT

capture() {  # capture FILE COMMANDS...: runs the commands while capturing
  local file="$1"; shift
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$ns" link add veth0 type veth peer name veth1
  ip -n "$ns" link add veth2 type veth peer name veth3
  for link in veth1 veth3 veth0 veth2; do ip -n "$ns" link set "$link" up; done
  ip -n "$ns" addr add 192.0.2.1/24 dev veth0
  ip -n "$ns" addr add 198.51.100.1/24 dev veth2
  ip -n "$ns" route add default via 192.0.2.254 dev veth0 metric 100
  ip netns exec "$ns" "$bin" capture --output "$here/$file" --duration 2 &
  local pid=$!
  sleep 0.5
  "$@"
  wait "$pid"
  ip netns del "$ns"
}

wg_quick() {
  ip -n "$ns" route add default via 198.51.100.254 dev veth2 table 51820
  ip -n "$ns" rule add not fwmark 51820 table 51820
  ip -n "$ns" rule add table main suppress_prefixlength 0
  ip -n "$ns" route get 8.8.8.8
}

nexthop_object() {
  ip -n "$ns" nexthop add id 1 via 198.51.100.254 dev veth2
  ip -n "$ns" route add default nhid 1 metric 50
  ip -n "$ns" route get 8.8.8.8
  sleep 0.3
  ip -n "$ns" link set veth2 down
  ip -n "$ns" route get 8.8.8.8
}

capture policy-wg-quick.pcapng wg_quick
capture nexthop-object.pcapng nexthop_object
