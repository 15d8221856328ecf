#!/usr/bin/env bash
# Benchmark (not a test): daemon start to the first dispatch of a due job with a real
# NetworkManager present (issue #23). The container of Tests/networkmanager (Debian's
# NetworkManager 1.42 managing eth0, unmetered and with full connectivity) runs the packaged
# daemon as its system unit, with one `network = "unmetered"` job due at start. Each round
# stops the daemon, deletes its store, takes the time and starts the unit (--no-block); the job's
# command writes the time it started. Reported: start-to-dispatch and start-to-READY
# (`systemctl start` returning), in ms, per round and their median/min/max.
#
# Usage: Benchmarks/NetworkManagerStart/run.sh PACKAGE [ROUNDS]   (PACKAGE: the .deb, or a
#        binary for development; ROUNDS default 15). Root; the rootfs cache of Tests/systemd.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
package=$(realpath "${1:?usage: Benchmarks/NetworkManagerStart/run.sh PACKAGE [ROUNDS]}")
rounds=${2:-15}
cache=${BACKGROUNDER_SYSTEMD_TEST_CACHE:-$repo/.build-systemd}
source "$repo/Tests/networkmanager/container.sh"
[[ $(id -u) == 0 ]] || { echo "needs root" >&2; exit 1; }
missing=$(nm_missing_tools)
[[ -z $missing ]] || { echo "not installed: $missing" >&2; exit 1; }

work=$(mktemp -d /var/tmp/backgrounder-nm-bench.XXXXXX)
trap 'set +e; nm_stop_outside; teardown_machine' EXIT
nm_prepare_root "$package"
boot_machine
nm_start_outside
for _ in $(seq 1 300); do
  [[ $(nm_eth0_state) == 100* ]] && break
  sleep 0.2
done
nm_state_ready() { [[ $(nm_metered) == no && $(nm_connectivity) == full ]]; }
nm_set_metered no
for _ in $(seq 1 150); do
  nm_state_ready && break
  nm_set_check ok
  sleep 0.2
done
nm_state_ready || { echo "NetworkManager not unmetered/full: $(nm_metered) $(nm_connectivity)" >&2; exit 1; }
echo "== NetworkManager $(inside NetworkManager --version): eth0 metered=$(nm_metered)," \
  "connectivity $(nm_connectivity); daemon: $(basename "$package")" \
  "$([[ $package == *.deb ]] || git -C "$repo" describe --always --dirty)"

inside tee "$nm_config" >/dev/null <<'TOML'
[[job]]
id = "bench.due"
command = ["/bin/sh", "-c", "date +%s%N > /var/lib/nm-test/dispatched"]
network = "unmetered"
once = true
TOML

dispatch=()
ready=()
for round in $(seq 1 "$rounds"); do
  inside systemctl stop backgrounder.service 2>/dev/null || true
  inside sh -c 'rm -rf /var/lib/backgrounder/* /var/lib/nm-test/*'
  sleep 0.5
  begin=$(date +%s%N)
  inside systemctl start backgrounder.service
  ready_at=$(date +%s%N)
  for _ in $(seq 1 300); do
    inside test -s /var/lib/nm-test/dispatched && break
    sleep 0.05
  done
  at=$(inside cat /var/lib/nm-test/dispatched 2>/dev/null || echo "")
  [[ -n $at ]] || { echo "round $round: the job did not run within 15 s" >&2; exit 1; }
  dispatch+=($(((at - begin) / 1000000)))
  ready+=($(((ready_at - begin) / 1000000)))
  echo "round $round: start to dispatch ${dispatch[-1]} ms, start to READY ${ready[-1]} ms"
done
inside systemctl stop backgrounder.service
summary() {
  printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
    printf "median %d ms (min %d, max %d, n %d)", v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "== start to first dispatch (NetworkManager present): $(summary "${dispatch[@]}")"
echo "== start to READY (systemctl start returned):       $(summary "${ready[@]}")"
