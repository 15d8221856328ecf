#!/usr/bin/env bash
# Takes the real captures in a throwaway network namespace (root needed):
#   real-veth-dual-stack-link-down.pcap: veth pair, IPv4+IPv6 addresses and default routes,
#     then `ip link set veth0 down` (the kernel sends no IPv4 RTM_DELROUTE for it).
#   real-veth-ipv6-only.pcap: IPv6 address + default route only, then the route is deleted.
# Usage: Fixtures/netlink/capture-real.sh [path/to/backgrounder]
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
  ip netns exec "$ns" "$bin" capture --output "$here/$file" --duration 2 &
  local pid=$!
  sleep 0.5
  "$@"
  wait "$pid"
  ip netns del "$ns"
}

dual_stack_link_down() {
  ip -n "$ns" link set veth1 up
  ip -n "$ns" link set veth0 up
  ip -n "$ns" addr add 192.0.2.1/24 dev veth0
  ip -n "$ns" addr add 2001:db8::1/64 dev veth0 nodad
  ip -n "$ns" route add default via 192.0.2.254 dev veth0
  ip -n "$ns" -6 route add default via 2001:db8::fe dev veth0
  sleep 0.3
  ip -n "$ns" link set veth0 down
}

ipv6_only() {
  ip -n "$ns" link set veth1 up
  ip -n "$ns" link set veth0 up
  ip -n "$ns" addr add 2001:db8::1/64 dev veth0 nodad
  ip -n "$ns" -6 route add default via 2001:db8::fe dev veth0 metric 1024
  sleep 0.3
  ip -n "$ns" -6 route del default via 2001:db8::fe dev veth0 metric 1024
}

capture real-veth-dual-stack-link-down.pcap dual_stack_link_down
capture real-veth-ipv6-only.pcap ipv6_only
