# shellcheck shell=bash disable=SC2154  # $repo, $work and $cache come from run.sh
# Helpers for Tests/systemd/run.sh: a cached minimal Debian root file system, booted with
# systemd-nspawn in a cgroup of its own, driven with nsenter, torn down on exit.
# Sourced, not run. Expects: $repo, $work (a scratch directory), $cache (the rootfs cache).

suite=bookworm

# Polls COMMAND every 0.2 s for up to SECONDS; true once it succeeds.
eventually() {
  local seconds=$1
  shift
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# The Debian mirror this machine's apt uses for $suite (override: BACKGROUNDER_DEBIAN_MIRROR).
debian_mirror() {
  if [[ -n ${BACKGROUNDER_DEBIAN_MIRROR:-} ]]; then
    echo "$BACKGROUNDER_DEBIAN_MIRROR"
    return
  fi
  local uri
  uri=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' \
    2>/dev/null | awk -v suite="$suite" '$2 == suite { print $1; exit }')
  if [[ -z $uri ]]; then
    # Not a bookworm host: any Debian archive apt knows serves bookworm too.
    uri=$(apt-get indextargets --format '$(REPO_URI)' 'Identifier: Packages' 2>/dev/null \
      | grep -m1 '/debian/$' || true)
  fi
  [[ -n $uri ]] || return 1
  echo "$uri"
}

# The packages the .deb's Depends names today (dpkg-shlibdeps in Scripts/package, plus
# libsystemd0, libgcc-s1 and procps):
# in every rootfs, so that one prepared before the .deb exists (`--prepare-only`, in CI's
# background while the release build runs) has the key a test computes later from the .deb's
# Depends (the key is the sorted set). A package the .deb comes to depend on that is not here
# costs a debootstrap at test time, nothing else.
package_depends=(libc6 libcurl4 libgcc-s1 libnl-3-200 libnl-genl-3-200 libnl-route-3-200
  libsqlite3-0 libstdc++6 libsystemd0 procps)

# Prints the path of a tarball of a minimal $suite with systemd, dbus and PACKAGES, made with
# debootstrap on first use and kept in $cache (keyed by the package list).
# Usage: rootfs_tarball PACKAGE...
rootfs_tarball() {
  local include key tarball mirror staging
  include=$(printf '%s\n' systemd systemd-sysv dbus "$@" | sort -u | paste -sd, -)
  key=$(printf '%s %s' "$suite" "$include" | sha256sum | cut -c1-16)
  tarball="$cache/rootfs-$suite-$key.tar"
  if [[ ! -f $tarball ]]; then
    mirror=$(debian_mirror) || {
      echo "no Debian mirror in the apt configuration (set BACKGROUNDER_DEBIAN_MIRROR)" >&2
      return 1
    }
    echo "== debootstrap $suite ($include) from $mirror, cached as $tarball" >&2
    mkdir -p "$cache"
    staging=$(mktemp -d "$cache/debootstrap.XXXXXX")
    if ! debootstrap --variant=minbase --include="$include" "$suite" "$staging/root" "$mirror" \
      > "$staging/debootstrap.log" 2>&1; then
      tail -20 "$staging/debootstrap.log" >&2
      rm -rf "$staging"
      return 1
    fi
    tar --numeric-owner -C "$staging/root" -cpf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
    rm -rf "$staging"
  fi
  echo "$tarball"
}

# The cgroup hierarchies a process must be moved in: the unified one, and systemd's named v1
# hierarchy on a hybrid host.
cgroup_roots() {
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    echo /sys/fs/cgroup
  else
    [[ -d /sys/fs/cgroup/unified ]] && echo /sys/fs/cgroup/unified
    [[ -d /sys/fs/cgroup/systemd ]] && echo /sys/fs/cgroup/systemd
  fi
  return 0
}

# Boots $work/root with systemd-nspawn (no network but loopback, journal kept in the root) from
# a subshell first moved into cgroup $machine_cgroup of its own; sets $nspawn_pid and $leader
# (the container's PID 1 as seen from here) and waits until the boot has finished.
boot_machine() {
  machine_cgroup="backgrounder-systemd-test-$$"
  local root
  for root in $(cgroup_roots); do mkdir -p "$root/$machine_cgroup"; done
  (
    for root in $(cgroup_roots); do echo "$BASHPID" > "$root/$machine_cgroup/cgroup.procs"; done
    exec systemd-nspawn --quiet --boot --directory="$work/root" --machine=bgtest \
      --register=no --keep-unit --private-network --link-journal=no
  ) < /dev/null > "$work/console.log" 2>&1 &
  nspawn_pid=$!
  leader=
  local _
  local child
  for _ in $(seq 1 300); do
    # The container's init: a child of systemd-nspawn that is PID 1 in its own PID namespace.
    for child in $(cat /proc/"$nspawn_pid"/task/*/children 2>/dev/null || true); do
      grep -qE '^NSpid:\s+[0-9]+\s+1$' "/proc/$child/status" 2>/dev/null && leader=$child
    done
    [[ -n $leader ]] && break
    kill -0 "$nspawn_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $leader ]]; then
    echo "systemd-nspawn did not start a container:" >&2
    cat "$work/console.log" >&2
    return 1
  fi
  local state
  for _ in $(seq 1 600); do
    nsenter -t "$leader" -a test -S /run/systemd/private 2>/dev/null && break
    sleep 0.1
  done
  state=$(timeout 120 nsenter -t "$leader" -a systemctl is-system-running --wait || true)
  echo "== booted (PID 1 = $leader here; system state: ${state:-unknown})" >&2
  [[ $state == running || $state == degraded ]] || {
    cat "$work/console.log" >&2
    return 1
  }
  if [[ $state == degraded ]]; then
    nsenter -t "$leader" -a systemctl --failed --no-legend >&2 || true
  fi
}

# Runs a command inside the booted machine (all its namespaces).
inside() {
  nsenter -t "$leader" -a "$@"
}

# Powers the machine off (after 30 s: kills every process left in its cgroup), removes its
# cgroups and the scratch directory. Runs from the EXIT trap: no step may stop the others.
teardown_machine() {
  set +e
  if [[ -n ${nspawn_pid:-} ]] && kill -0 "$nspawn_pid" 2>/dev/null; then
    [[ -n ${leader:-} ]] && nsenter -t "$leader" -a systemctl poweroff --no-block >/dev/null 2>&1
    local _
    for _ in $(seq 1 300); do
      kill -0 "$nspawn_pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  local root pids
  if [[ -n ${machine_cgroup:-} ]]; then
    for root in $(cgroup_roots); do
      [[ -d $root/$machine_cgroup ]] || continue
      pids=$(find "$root/$machine_cgroup" -name cgroup.procs -exec cat {} + 2>/dev/null)
      if [[ -n $pids ]]; then
        echo "== killing what the machine left running: $(echo "$pids" | wc -l) process(es)" >&2
        # shellcheck disable=SC2086  # one PID per word
        kill -KILL $pids 2>/dev/null
        sleep 0.5
      fi
    done
    [[ -n ${nspawn_pid:-} ]] && wait "$nspawn_pid" 2>/dev/null
    for root in $(cgroup_roots); do
      # Depth first: systemd-nspawn and the container leave sub-cgroups behind.
      [[ -d $root/$machine_cgroup ]] \
        && find "$root/$machine_cgroup" -depth -type d -exec rmdir {} + 2>/dev/null
    done
  fi
  if [[ -n ${work:-} && -d $work ]]; then
    findmnt -rn -o TARGET | grep -F "$work/" | sort -r | xargs -r -n1 umount -l 2>/dev/null
    rm -rf "$work"
  fi
  return 0
}
