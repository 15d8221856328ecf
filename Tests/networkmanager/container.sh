# shellcheck shell=bash disable=SC2154  # $repo, $work and $cache come from the sourcing script
# Helpers for Tests/networkmanager/run.sh and Benchmarks/NetworkManagerStart/run.sh: Debian's own
# NetworkManager (1.42, bookworm) in a systemd-nspawn container (Tests/systemd/machine.sh's
# cached rootfs and boot), managing eth0, a veth whose other end lives in a network namespace
# made here. There, dnsmasq serves DHCP with Android's ANDROID_METERED hint (option 43, forced:
# NetworkManager's client does not ask for it) and a small HTTP server answers NetworkManager's
# connectivity check: "OK", or a 302 to a login page while $work/http-mode says "portal".
# Sourced, not run. Expects: $repo, $work (a scratch directory), $cache (the rootfs cache).
source "$repo/Tests/systemd/machine.sh"

nm_outside=192.0.2.1
nm_namespace="backgrounder-nm-test-$$"
nm_config=/etc/backgrounder/config.toml

# Packages of the container beyond systemd and dbus (libpam-systemd: the logind that polkitd,
# a dependency of network-manager, needs). The .deb's Depends (`package_depends`, machine.sh)
# too, so that one cached rootfs serves a .deb, a bare binary and CI's early `--prepare-only`.
nm_packages=(network-manager libpam-systemd iproute2 "${package_depends[@]}")

# Prints the prerequisites this host lacks (empty: none).
nm_missing_tools() {
  local tool
  for tool in debootstrap systemd-nspawn nsenter journalctl dpkg-deb ip dnsmasq python3 ldd; do
    command -v "$tool" >/dev/null || echo "$tool"
  done
}

# Copies the executable FILE into the root at DESTINATION with every shared library `ldd` names
# that the root lacks, at the same paths.
# Usage: nm_copy_with_libraries ROOT FILE DESTINATION
nm_copy_with_libraries() {
  local root=$1 file=$2 destination=$3 library
  install -D -m 0755 "$file" "$root/$destination"
  for library in $(ldd "$file" 2>/dev/null | grep -o '/[^ ]*' || true); do
    [[ -e $root/$library ]] || install -D -m 0755 "$(realpath "$library")" "$root/$library"
  done
}

# Unpacks the rootfs into $work/root and installs backgrounder from PACKAGE: a .deb (dpkg -i,
# its Depends added to the rootfs), or a bare binary with its libraries and the units it prints
# (for development: a debug build). Adds NetworkManager's test configuration: the eth0 profile
# (DHCP, no IPv6), no automatic profiles, the connectivity check against the outside, and no
# start limit on NetworkManager.service.
nm_prepare_root() {
  local package=$1 tarball packages=("${nm_packages[@]}")
  if [[ $package == *.deb ]]; then
    mapfile -t -O "${#packages[@]}" packages < <(dpkg-deb -f "$package" Depends | tr ',' '\n' \
      | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep -v '^$')
  fi
  tarball=$(rootfs_tarball "${packages[@]}") || return 1
  mkdir "$work/root"
  tar --numeric-owner -C "$work/root" -xpf "$tarball"
  mkdir -p "$work/root/var/log/journal"
  if [[ $package == *.deb ]]; then
    cp "$package" "$work/root/tmp/backgrounder.deb"
    chroot "$work/root" dpkg -i /tmp/backgrounder.deb >"$work/dpkg.log" 2>&1 || {
      cat "$work/dpkg.log" >&2
      return 1
    }
  else
    nm_copy_with_libraries "$work/root" "$package" usr/bin/backgrounder
    "$package" unit --executable /usr/bin/backgrounder \
      >"$work/root/usr/lib/systemd/system/backgrounder.service"
  fi
  install -d -m 0755 "$work/root/etc/backgrounder" "$work/root/var/lib/nm-test"
  local nm=$work/root/etc/NetworkManager
  cat >"$nm/conf.d/90-backgrounder-test.conf" <<CONF
[main]
no-auto-default=*

[connectivity]
enabled=true
uri=http://$nm_outside/nm-check
response=OK
interval=60
CONF
  # The tests restart NetworkManager more often than systemd's default start limit allows.
  mkdir -p "$work/root/etc/systemd/system/NetworkManager.service.d"
  printf '[Unit]\nStartLimitIntervalSec=0\n' \
    >"$work/root/etc/systemd/system/NetworkManager.service.d/90-backgrounder-test.conf"
  install -m 0600 /dev/stdin "$nm/system-connections/bgtest.nmconnection" <<'PROFILE'
[connection]
id=bgtest
type=ethernet
interface-name=eth0
autoconnect=true

[ipv4]
method=auto

[ipv6]
method=disabled
PROFILE
}

# Makes the outside namespace with the veth, moves eth0 into the booted machine, and starts
# dnsmasq and the HTTP server there. Their logs: $work/dnsmasq.log, $work/http.log.
nm_start_outside() {
  ip netns add "$nm_namespace"
  ip -n "$nm_namespace" link set lo up
  ip -n "$nm_namespace" link add outside0 type veth peer name eth0
  ip -n "$nm_namespace" link set eth0 netns "$leader"
  ip -n "$nm_namespace" addr add "$nm_outside/24" dev outside0
  ip -n "$nm_namespace" link set outside0 up
  echo ok >"$work/http-mode"
  ip netns exec "$nm_namespace" python3 "$repo/Tests/networkmanager/connectivity-server.py" \
    "$nm_outside" "$work/http-mode" >"$work/http.log" 2>&1 &
  nm_http_pid=$!
  ip netns exec "$nm_namespace" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 \
    --user=root --bind-interfaces --interface=outside0 --dhcp-authoritative \
    --dhcp-range=192.0.2.100,192.0.2.150,255.255.255.0,1h \
    --dhcp-option=option:router,"$nm_outside" --dhcp-option-force=43,ANDROID_METERED \
    --dhcp-leasefile="$work/dnsmasq.leases" --log-dhcp --log-facility=- \
    >"$work/dnsmasq.log" 2>&1 &
  nm_dnsmasq_pid=$!
}

# Ends what nm_start_outside started and deletes the namespace. From the EXIT trap.
nm_stop_outside() {
  local pid
  for pid in ${nm_dnsmasq_pid:-} ${nm_http_pid:-}; do
    { kill "$pid" && wait "$pid"; } 2>/dev/null || true
  done
  if ip netns list 2>/dev/null | grep -qw "$nm_namespace"; then
    ip netns delete "$nm_namespace" || true
  fi
  return 0
}

# NetworkManager's view, as nmcli prints it.
nm_metered() { inside nmcli -g GENERAL.METERED device show eth0 2>/dev/null; }
nm_connectivity() { inside nmcli networking connectivity 2>/dev/null; }
nm_eth0_state() { inside nmcli -g GENERAL.STATE device show eth0 2>/dev/null; }
# Sets the profile's connection.metered (yes, no, unknown: DHCP's guess) and applies it.
nm_set_metered() {
  inside nmcli connection modify bgtest connection.metered "$1" \
    && inside nmcli device reapply eth0 >/dev/null
}
# Sets what the connectivity check answers (ok, portal) and has NetworkManager check now.
nm_set_check() {
  echo "$1" >"$work/http-mode"
  inside nmcli networking connectivity check >/dev/null 2>&1 || true
}
nm_main_pid() { inside systemctl show --property=MainPID --value NetworkManager.service; }
