#!/usr/bin/env bash
# Real Wi-Fi and USB tethering under a real kernel: boots Debian's own kernel
# (linux-image-amd64, fetched with `apt-get download`, never installed) under qemu with a small
# initramfs holding BINARY, hostapd, wpa_supplicant, ip and iw. dummy_hcd gadgets (RNDIS, NCM,
# ECM) give the host links of USB tethering and a USB ethernet adapter; mac80211_hwsim gives
# three simulated radios; the guest (Tests/wifi/guest/init) connects wlan0 to a WPA2 access
# point "Pixel-Hotspot", switches to "Office-WiFi" and disconnects, checking
# `backgrounder status` at each step, and that a job with `ssids = ["Office*"]` waits on the
# hotspot, runs on Office-WiFi and is stopped (a retry) by the disconnect mid-run. Before the
# radios, with cgroup2 mounted and its cpu, io and memory controllers given to a subtree
# (`$BACKGROUNDER_CGROUP`), run cgroups are checked under the real kernel: `cpu.weight` and
# `io.weight` 20 by default and as a job sets them, and a run allocating past `memory-max` is
# killed and recorded with that reason, and a job with `on-condition-lost = "pause"` whose
# `requires-mount` goes away is frozen through its run cgroup's `cgroup.freeze` (`frozen 1`, its
# loop stands still) and thawed when the mount is back, ending in its first attempt
# (Tests/wifi/guest/cgroup.toml). A job with `bandwidth = "1Mbit"`, run by a daemon in a network
# namespace whose default route is a veth pair into another, uploads at 1 Mbit/s ±15 %
# (Tests/wifi/guest/shape.toml). In a namespace of their own, two veth uplinks go into a VRF and
# out of it among default routes in the main table and the VRF's, in a seeded random sequence:
# after each step `status --watch --json` and `status --json` must name `ip route get`'s egress
# (Tests/wifi/guest/vrf.toml). Then a real kernel
# power-supply driver: test_power.ko, built out of tree for the guest's kernel from Debian's
# linux-source-6.1 and linux-headers (test-power.sh, cached beside the kernel), is loaded and
# driven through its module parameters in a seeded random sequence (the seed is printed;
# BACKGROUNDER_POWER_TEST_SEED repeats one): after each step `status --json` must match sysfs
# and a daemon's requires-charging and requires-battery-not-low jobs must run or be held as
# sysfs says (Tests/wifi/guest/power.toml).
#
# Usage: Tests/wifi/run.sh BINARY       (e.g. the release binary Scripts/package builds)
#        Tests/wifi/run.sh --prepare-only   (fetch the kernel and build test_power.ko into the
#                                         cache, boot nothing: CI does it early, in the background)
# Needs root (apt-get download to the cache), qemu-system-x86_64, busybox (static), hostapd,
# wpa_supplicant, iw, ip, cpio, kmod, and gcc-12, make and xz for test_power.ko
# (.ci/install-deps). Without qemu, or with no kernel to
# be had, it prints a line starting `SKIP:` and exits 0; with CI=true it fails instead. The
# kernel and test_power.ko are kept in $BACKGROUNDER_WIFI_TEST_CACHE (default
# /var/cache/backgrounder-wifi-test).
# Runs qemu with TCG (BACKGROUNDER_WIFI_TEST_ACCEL=kvm for KVM); the guest has
# $BACKGROUNDER_WIFI_TEST_TIMEOUT seconds from boot to its result (default 720: 147–265 s were
# measured with a debug binary on a loaded 2-core machine before the power sequence, which adds
# 1–8 s a step, 54 steps).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prepare_only=0
if [[ ${1:-} == --prepare-only ]]; then
  prepare_only=1
  binary=/bin/true
else
  binary=$(realpath "${1:?usage: Tests/wifi/run.sh BINARY | --prepare-only}")
fi
cache=${BACKGROUNDER_WIFI_TEST_CACHE:-/var/cache/backgrounder-wifi-test}
timeout_seconds=${BACKGROUNDER_WIFI_TEST_TIMEOUT:-720}
source "$here/kernel.sh"
source "$here/initramfs.sh"
source "$here/test-power.sh"

skip_or_fail() {
  if [[ ${CI:-} == true ]]; then
    echo "FAIL Wi-Fi test cannot run: $*" >&2
    exit 1
  fi
  echo "SKIP: Wi-Fi test (qemu, mac80211_hwsim): $*"
  exit 0
}
[[ -x $binary ]] || { echo "wifi: $binary is not an executable" >&2; exit 64; }
[[ $(id -u) == 0 ]] || skip_or_fail "needs root (apt-get download into $cache)"
for tool in qemu-system-x86_64 busybox hostapd wpa_supplicant wpa_cli iw ip cpio depmod \
  modprobe apt-get apt-cache dpkg-deb ldd timeout make gcc-12 xz; do
  command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed (.ci/install-deps)"
done
busybox_path=$(command -v busybox)
ldd "$busybox_path" >/dev/null 2>&1 \
  && skip_or_fail "$busybox_path is not statically linked (install busybox-static)"

work=$(mktemp -d /var/tmp/backgrounder-wifi-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
started=$SECONDS

kernel=$(prepared_kernel) || skip_or_fail "no kernel: apt-get download linux-image-amd64 failed"
version=$(cat "$kernel/complete")
test_power=$(prepared_test_power "$version") \
  || skip_or_fail "no test_power.ko: linux-source-6.1 or linux-headers-$version not to be had, or its build failed"
if ((prepare_only)); then
  echo "== kernel $version and $test_power ready in $((SECONDS - started)) s" >&2
  exit 0
fi
initramfs=$(build_initramfs "$work" "$kernel" "$version" "$binary" "$test_power")
echo "== kernel $version and a $(du -h "$initramfs" | cut -f1) initramfs ready in" \
  "$((SECONDS - started)) s" >&2

# TCG unless asked for KVM: on this project's CI class /dev/kvm exists but nested KVM does not
# work (SeaBIOS hangs with qemu's default CPU; -cpu host aborts on an MSR). TCG's `max` CPU has
# RDRAND, so the guest's random pool is ready at once (getrandom() would block otherwise).
accelerator=(-accel tcg -cpu max)
if [[ ${BACKGROUNDER_WIFI_TEST_ACCEL:-tcg} == kvm ]]; then
  accelerator=(-accel kvm -cpu host)
fi
# The seed of the guest's random power sequence (power_checks in guest/init), on the kernel
# command line (the kernel hands `name=value` words it does not know to /init's environment).
power_seed=${BACKGROUNDER_POWER_TEST_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "== power sequence seed $power_seed (BACKGROUNDER_POWER_TEST_SEED=$power_seed repeats it)" >&2
booted=$SECONDS
status=0
# No network device: the simulated radios are the only links. The guest powers off when done;
# a hang ends at the timeout, a panic reboots and -no-reboot ends qemu. no_timer_check: on a
# loaded host the kernel's check of the IO-APIC timer can miss its ticks under TCG and panic
# ("IO-APIC + timer doesn't work!"), as it did here with a load average of 30 on 2 cores.
timeout --kill-after=5 "$timeout_seconds" qemu-system-x86_64 "${accelerator[@]}" -m 1024 \
  -smp 1 -nographic -no-reboot -nic none -kernel "$kernel/vmlinuz" -initrd "$initramfs" \
  -append "console=ttyS0 panic=-1 quiet no_timer_check power_seed=$power_seed" </dev/null >"$work/console.log" 2>&1 || status=$?
elapsed=$((SECONDS - booted))
tr -d '\r' <"$work/console.log" >"$work/console.txt"

grep -E '^(PASS|FAIL|CRASH|INFO power) ' "$work/console.txt" || true
passed=$(grep -c '^PASS ' "$work/console.txt" || true)
failed=$(grep -c '^FAIL ' "$work/console.txt" || true)
done_line=$(grep -m1 '^WIFI-TEST-DONE' "$work/console.txt" || true)
echo "== Wi-Fi test (${accelerator[1]}): boot to result $elapsed s ($done_line)"
if [[ -z $done_line ]] || ((failed > 0)) || ((passed == 0)); then
  if [[ -z $done_line ]]; then
    echo "FAIL the guest gave no result within $timeout_seconds s (qemu exit status $status)"
  fi
  echo "== guest console (last 60 lines):"
  tail -n 60 "$work/console.txt"
  # Again at the end, where a reader of the log's tail looks first.
  echo "== failed checks and crashes:"
  grep -E '^(FAIL|CRASH) ' "$work/console.txt" || true
  echo "wifi: $failed check(s) failed"
  exit 1
fi
crashes=$(grep -c '^CRASH ' "$work/console.txt" || true)
if ((crashes > 0)); then
  echo "wifi: all $passed checks passed; $crashes process(es) crashed on the way (the CRASH lines)"
else
  echo "wifi: all $passed checks passed"
fi
