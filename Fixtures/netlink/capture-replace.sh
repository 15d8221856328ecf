#!/usr/bin/env bash
# Takes the real capture of issue 34's sequence in a throwaway network namespace (root needed):
#   real-veth-route-replace.pcap: two veth uplinks a0 (10.88.1.2/24) and b0 (10.88.2.2/24),
#     `ip route add default via 10.88.1.1 dev a0`, then `ip route replace` to b0, back to a0,
#     to b0 and back to a0 again. The kernel sends only RTM_NEWROUTE with NLM_F_REPLACE (no
#     RTM_DELROUTE): the replaced route is gone, so the primary link follows every replace.
# Usage: Fixtures/netlink/capture-replace.sh [path/to/backgrounder]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../.build/debug/backgrounder}"
ns="routefixture-$$"
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT

ip netns add "$ns"
ip -n "$ns" link set lo up
for link in a b; do
  ip -n "$ns" link add "${link}0" type veth peer name "${link}1"
  ip -n "$ns" link set "${link}1" up
  ip -n "$ns" link set "${link}0" up
done
ip -n "$ns" addr add 10.88.1.2/24 dev a0
ip -n "$ns" addr add 10.88.2.2/24 dev b0
ip -n "$ns" route add default via 10.88.1.1 dev a0
sleep 0.3  # carrier (link-watch) settled before the capture's dump
ip netns exec "$ns" "$bin" capture --output "$here/real-veth-route-replace.pcap" --duration 3s &
pid=$!
sleep 0.7
for _ in 1 2; do
  ip -n "$ns" route replace default via 10.88.2.1 dev b0
  sleep 0.3
  ip -n "$ns" route replace default via 10.88.1.1 dev a0
  sleep 0.3
done
wait "$pid"
