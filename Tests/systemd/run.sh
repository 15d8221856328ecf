#!/usr/bin/env bash
# The backgrounder .deb under a real systemd: debootstraps a minimal Debian (cached), installs
# the package, boots it with systemd-nspawn and checks the system and user units.
#
# Usage: Tests/systemd/run.sh DEB
#        Tests/systemd/run.sh --prepare-only   (debootstrap the cached rootfs, nothing else: CI
#                                              does it early, in the background)
# Needs root, debootstrap, systemd-container (systemd-nspawn) and the Debian mirror from the apt
# configuration. Outside CI a missing prerequisite skips the test with a message; with CI=true it
# fails. The rootfs tarball is cached in $BACKGROUNDER_SYSTEMD_TEST_CACHE (default:
# .build-systemd/ in the repository), so reruns take seconds.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
prepare_only=0
if [[ ${1:-} == --prepare-only ]]; then
  prepare_only=1
else
  deb=$(realpath "${1:?usage: Tests/systemd/run.sh DEB | --prepare-only}")
fi
cache=${BACKGROUNDER_SYSTEMD_TEST_CACHE:-$repo/.build-systemd}
source "$repo/Tests/systemd/machine.sh"

skip_or_fail() {
  if [[ ${CI:-} == true ]]; then
    echo "FAIL systemd integration test cannot run: $*" >&2
    exit 1
  fi
  echo "SKIP systemd integration test: $*"
  exit 0
}
[[ $(id -u) == 0 ]] || skip_or_fail "needs root (systemd-nspawn, debootstrap)"
for tool in debootstrap systemd-nspawn nsenter journalctl dpkg-deb; do
  command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed (.ci/install-deps)"
done
[[ -n $(cgroup_roots) ]] || skip_or_fail "no cgroup file system under /sys/fs/cgroup"

# libpam-systemd: user managers (user@UID.service) need pam_systemd for $XDG_RUNTIME_DIR;
# man-db: `systemd-analyze verify` checks the unit's Documentation=man:backgrounder(1);
# polkitd: logind asks polkit whether an unprivileged caller (the user unit's daemon) may take
# a delay lock (Debian's policy: yes), and refuses every such caller when there is no polkit.
machine_packages=("${package_depends[@]}" libpam-systemd man-db polkitd)
if ((prepare_only)); then
  prepared_at=$SECONDS
  tarball=$(rootfs_tarball "${machine_packages[@]}") || skip_or_fail "debootstrap of $suite failed"
  echo "== systemd test rootfs $tarball ready in $((SECONDS - prepared_at)) s"
  exit 0
fi

failures=0
pass() { echo "PASS $*"; }
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

journal() {
  journalctl -D "$work/root/var/log/journal" --no-pager -o cat "$@" 2>/dev/null
}
unit_property() {
  inside systemctl show --property="$1" --value backgrounder.service
}
# Prints the command lines of every process in the machine.
machine_processes() {
  inside /bin/sh -c 'for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline 2>/dev/null; echo; done'
}
write_drop_in() {
  inside mkdir -p /etc/systemd/system/backgrounder.service.d
  inside tee /etc/systemd/system/backgrounder.service.d/test.conf >/dev/null
  inside systemctl daemon-reload
}
remove_drop_in() {
  inside rm -f /etc/systemd/system/backgrounder.service.d/test.conf
  inside systemctl daemon-reload
}

work=$(mktemp -d /var/tmp/backgrounder-systemd-test.XXXXXX)
trap teardown_machine EXIT
started=$SECONDS

# --- the machine: minimal Debian + the package's dependencies, then the package itself --------
mapfile -t depends < <(dpkg-deb -f "$deb" Depends | tr ',' '\n' \
  | sed -e 's/|.*//' -e 's/(.*)//' -e 's/[[:space:]]//g' | grep -v '^$')
tarball=$(rootfs_tarball "${machine_packages[@]}" "${depends[@]}") \
  || skip_or_fail "debootstrap of $suite failed"
mkdir "$work/root"
tar --numeric-owner -C "$work/root" -xpf "$tarball"
mkdir -p "$work/root/var/log/journal"  # persistent journal, readable from here
cp "$deb" "$work/root/tmp/backgrounder.deb"
chroot "$work/root" dpkg -i /tmp/backgrounder.deb > "$work/dpkg.log" 2>&1 \
  || { cat "$work/dpkg.log"; fail "dpkg -i"; exit 1; }
install -d -m 0755 "$work/root/etc/backgrounder"
cat > "$work/root/etc/backgrounder/config.toml" <<'TOML'
# Every job below runs at once (the inhibitor jobs wait for their release while the sleeper runs).
[daemon]
max-concurrent = 8

[[job]]
id = "dev.test.hello"
command = ["/bin/sh", "-c", "echo hello-from-the-job"]
once = true

[[job]]
id = "dev.test.sleeper"
command = ["/bin/sh", "-c", "sleep 3600 & sleep 3601; wait"]
once = true

# Inhibitor locks: each runs until /run/backgrounder-test-release exists.
[[job]]
id = "dev.test.inhibit-delay"
command = ["/bin/sh", "-c", "until [ -e /run/backgrounder-test-release ]; do sleep 0.05; done"]
once = true

[[job]]
id = "dev.test.inhibit-block"
command = ["/bin/sh", "-c", "until [ -e /run/backgrounder-test-release ]; do sleep 0.05; done"]
once = true
inhibit = "block"

[[job]]
id = "dev.test.inhibit-none"
command = ["/bin/sh", "-c", "until [ -e /run/backgrounder-test-release ]; do sleep 0.05; done"]
once = true
inhibit = "none"
TOML
echo "== machine prepared in $((SECONDS - started)) s" >&2
boot_machine

# --- systemd-analyze verify --------------------------------------------------------------------
verify=$(inside systemd-analyze verify backgrounder.service 2>&1) \
  && [[ -z $verify ]] && pass "systemd-analyze verify: system unit clean" \
  || fail "systemd-analyze verify (system unit): $verify"

mode=$(stat -c %a "$work/root/var/lib/backgrounder")
[[ $mode == 700 ]] && pass "/var/lib/backgrounder is 0700 after install" \
  || fail "/var/lib/backgrounder is $mode after install, not 700"

# --- active (running) only after READY ---------------------------------------------------------
# The unit's own ExecStart, delayed 3 s by a shell that then execs it (same main PID): if
# systemd waits for READY=1, the unit stays "activating" for those 3 s. ($$ is systemd's "$".)
exec_start=$(grep -m1 '^ExecStart=' "$work/root/usr/lib/systemd/system/backgrounder.service")
write_drop_in <<CONF
[Service]
ExecStart=
ExecStart=/bin/sh -c 'sleep 3; exec "\$\$0" "\$\$@"' ${exec_start#ExecStart=}
CONF
inside systemctl start --no-block backgrounder.service
sleep 1.5
early=$(unit_property ActiveState)/$(unit_property SubState)
is_active() { [[ $(unit_property ActiveState) == active ]]; }
if eventually 30 is_active; then
  main_started=$(unit_property ExecMainStartTimestampMonotonic)
  active_at=$(unit_property ActiveEnterTimestampMonotonic)
  waited=$(((active_at - main_started) / 1000))
  [[ $early == activating/start ]] && ((waited >= 3000)) \
    && pass "Type=notify: activating for ${waited} ms until READY, then active" \
    || fail "Type=notify: state at 1.5 s was $early; active ${waited} ms after exec"
else
  fail "the delayed daemon never became active ($(unit_property ActiveState))"
fi
inside systemctl stop backgrounder.service
remove_drop_in

if inside systemctl start backgrounder.service; then
  state=$(unit_property ActiveState)/$(unit_property SubState)
  [[ $state == active/running ]] && pass "systemctl start: active (running)" \
    || fail "systemctl start returned with the unit $state"
else
  fail "systemctl start backgrounder failed: $(inside systemctl status backgrounder 2>&1 | tail)"
fi

mode=$(stat -c %a "$work/root/var/lib/backgrounder")
[[ $mode == 700 ]] && pass "/var/lib/backgrounder is still 0700 with the service running" \
  || fail "/var/lib/backgrounder is $mode with the service running (the unit needs StateDirectoryMode=0700)"

# --- StatusText ---------------------------------------------------------------------------------
status_text=$(unit_property StatusText)
[[ $status_text == *job* ]] && pass "StatusText: $status_text" \
  || fail "StatusText is '$status_text', not the daemon's status"

# --- a job runs; its output is in the journal under its id ------------------------------------
job_line() { journal -u backgrounder.service | grep 'dev.test.hello' | grep -q hello-from-the-job; }
if eventually 30 job_line; then
  pass "job output in the journal: $(journal -u backgrounder.service | grep -m1 hello-from-the-job)"
else
  fail "no journal line with dev.test.hello and its output"
fi

# --- journald fields: journalctl BACKGROUNDER_JOB=ID returns that job's lines, nothing else -----
job_field() { journal BACKGROUNDER_JOB=dev.test.hello | grep -q hello-from-the-job; }
if eventually 30 job_field; then
  others=$(journal BACKGROUNDER_JOB=dev.test.hello | grep -v 'job=dev.test.hello' || true)
  [[ -z $others ]] && pass "journalctl BACKGROUNDER_JOB=dev.test.hello: the job's lines only" \
    || fail "journalctl BACKGROUNDER_JOB=dev.test.hello also shows: $others"
else
  fail "no journal entry with BACKGROUNDER_JOB=dev.test.hello and the job's output"
fi

# --- inhibitor locks: the real systemd-logind lists each run's lock, in its mode ----------------
# `systemd-inhibit --list` columns: WHO UID USER PID COMM WHAT WHY MODE.
inhibitors() { inside systemd-inhibit --list --no-pager --no-legend 2>/dev/null; }
# A run holds two locks, one for sleep and one for shutdown (a `sleep:shutdown` lock is checked
# against polkit's lid-switch action, which logind refuses an unprivileged caller).
lock_of() {  # JOB WHAT: that lock's line
  inhibitors | grep -E "^backgrounder .* $2 +running $1 " || true
}
# Whether JOB holds both locks, each in MODE.
holds_both() {  # JOB MODE
  local sleep_lock shutdown_lock
  sleep_lock=$(lock_of "$1" sleep)
  shutdown_lock=$(lock_of "$1" shutdown)
  [[ $sleep_lock == *" $2" && $shutdown_lock == *" $2" ]]
}
# (The shutdown lock is asked for after the sleep lock: wait for both, in their modes.)
runs_hold_locks() {
  holds_both dev.test.inhibit-delay delay && holds_both dev.test.inhibit-block block
}
if eventually 30 runs_hold_locks; then
  pass "systemd-inhibit --list: delay and block locks for sleep and shutdown naming their jobs"
  [[ -z $(inhibitors | grep 'running dev.test.inhibit-none') ]] \
    && pass "inhibit = \"none\": no lock" \
    || fail "inhibit = \"none\" took a lock: $(inhibitors | grep 'dev.test.inhibit-none')"
  released_at=$(date +%s%N)
  inside touch /run/backgrounder-test-release
  no_run_lock() { ! inhibitors | grep -q 'running dev.test.inhibit-'; }
  if eventually 10 no_run_lock; then
    gone_ms=$((($(date +%s%N) - released_at) / 1000000))
    # The jobs poll for the release every 50 ms; the rest is the run's end and the release.
    ((gone_ms <= 1000)) && pass "the locks are gone ${gone_ms} ms after the release" \
      || fail "the locks went only ${gone_ms} ms after the release"
  else
    fail "the locks are still there 10 s after the runs ended: $(inhibitors)"
  fi
else
  fail "no inhibitor locks for the running jobs: $(inhibitors); the daemon said:
$(journal -u backgrounder.service | grep -iE 'inhibit|logind|sleep|suspend|dev.test.inhibit' | tail -n 20)"
fi

# --- systemctl stop ends every job process -----------------------------------------------------
sleepers() { machine_processes | grep -c '^sleep 360[01]' || true; }
job_processes_running() { (($(sleepers) >= 2)); }
if eventually 30 job_processes_running; then
  inside systemctl stop backgrounder.service
  left=$(sleepers)
  [[ $left == 0 ]] && pass "systemctl stop: no job process left (the job had 3)" \
    || fail "systemctl stop left $left job process(es): $(machine_processes | grep '^sleep')"
else
  fail "the sleeper job's processes never appeared"
fi

# --- the watchdog restarts a daemon that stopped pinging -----------------------------------------
# The daemon is stopped (SIGSTOP) once it is ready: its pings stop, as a stuck dispatch loop's
# do (that the pings follow the dispatch loop is IntegrationTests' watchdog test, with
# Tests/StallingDaemon; the shipped binary has no test hook). systemd's watchdog signal is
# followed by SIGCONT, so the stopped daemon gets it.
write_drop_in <<'CONF'
[Service]
WatchdogSec=3s
RestartSec=1s
CONF
inside systemctl reset-failed backgrounder.service 2>/dev/null || true
inside systemctl start backgrounder.service || true
if eventually 30 is_active; then
  inside /bin/sh -c "kill -STOP $(unit_property MainPID)" || true
fi
watchdog_fired() { journal -u backgrounder.service | grep -q 'Watchdog timeout'; }
restarted() { (($(unit_property NRestarts) >= 1)) && is_active; }
if eventually 30 watchdog_fired && eventually 30 restarted; then
  pass "watchdog: fired on the daemon that stopped pinging; systemd restarted the daemon"
else
  fail "watchdog: no 'Watchdog timeout' + restart within 60 s (NRestarts=$(unit_property NRestarts))"
fi
inside systemctl stop backgrounder.service
remove_drop_in

# --- a --user unit for a normal user, with UMask=0077 ------------------------------------------
inside useradd --create-home --shell /bin/sh alice
uid=$(inside id -u alice)
inside loginctl enable-linger alice
as_alice() {
  inside runuser -u alice -- env XDG_RUNTIME_DIR="/run/user/$uid" "$@"
}
if eventually 30 as_alice systemctl --user is-system-running --quiet \
  || eventually 5 as_alice test -S "/run/user/$uid/systemd/private"; then
  as_alice mkdir -p /home/alice/.config/backgrounder
  as_alice tee /home/alice/.config/backgrounder/config.toml >/dev/null <<'TOML'
[[job]]
id = "dev.test.user-job"
command = ["/bin/sh", "-c", "echo hello-from-alice > $HOME/job-output"]
once = true

# Runs until ~/release exists: its delay lock is alice's.
[[job]]
id = "dev.test.user-hold"
command = ["/bin/sh", "-c", "until [ -e $HOME/release ]; do sleep 0.05; done"]
once = true
TOML
  verify=$(as_alice systemd-analyze --user verify backgrounder.service 2>&1) \
    && [[ -z $verify ]] && pass "systemd-analyze verify: user unit clean" \
    || fail "systemd-analyze verify (user unit): $verify"
  if as_alice systemctl --user start backgrounder.service; then
    umask_value=$(as_alice systemctl --user show --property=UMask --value backgrounder.service)
    eventually 30 as_alice test -f /home/alice/job-output || true
    output_mode=$(inside stat -c %a /home/alice/job-output 2>/dev/null || echo missing)
    store_mode=$(inside stat -c %a /home/alice/.local/state/backgrounder/state.sqlite \
      2>/dev/null || echo missing)
    [[ $umask_value == 0077 && $output_mode == 600 && $store_mode == 600 ]] \
      && pass "user unit: active for alice; UMask=0077 (job file 600, store 600)" \
      || fail "user unit: UMask=$umask_value, job file $output_mode, store $store_mode"
    # The user daemon's run holds a delay lock of its own, as alice (logind asked polkit).
    user_lock_held() { holds_both dev.test.user-hold delay; }
    if eventually 30 user_lock_held; then
      user_lock=$(lock_of dev.test.user-hold sleep)
      [[ $user_lock =~ [[:space:]]$uid[[:space:]]+alice[[:space:]] ]] \
        && pass "user unit: the run holds delay locks for sleep and shutdown as alice" \
        || fail "user unit: not alice's delay locks: $(inhibitors | grep dev.test.user-hold)"
      as_alice touch /home/alice/release
      eventually 10 eval '! user_lock_held' \
        && pass "user unit: the lock is gone once the run ended" \
        || fail "user unit: the lock outlived the run: $(inhibitors)"
    else
      fail "user unit: no lock for the running job: $(inhibitors); the daemon said:
$(as_alice journalctl --user -u backgrounder.service --no-pager 2>/dev/null | grep -iE 'inhibit|logind' | tail -n 10)"
    fi
    as_alice systemctl --user stop backgrounder.service
  else
    fail "systemctl --user start backgrounder failed for alice"
  fi
else
  fail "alice's user manager did not start after loginctl enable-linger"
fi

# --- requires-idle against the real systemd-logind ---------------------------------------------
# A graphical (wayland) session of alice's, opened through PAM by a transient unit: logind's
# Manager.IdleHint is false while it is active. The system daemon, given one job with
# `requires-idle = "2s"`, holds it; the session's SetIdleHint(true) (root may set it) makes
# logind idle and the job runs 2 s later. (With no session at all logind says idle since boot.)
idle_flag=/run/backgrounder-test-idle
inside systemctl stop backgrounder.service 2>/dev/null || true
inside systemctl reset-failed backgrounder.service 2>/dev/null || true
inside tee /etc/backgrounder/config.toml >/dev/null <<TOML
[[job]]
id = "dev.test.idle"
command = ["/bin/sh", "-c", "echo ran > $idle_flag"]
once = true
requires-idle = "2s"
TOML
inside systemd-run --quiet --unit=backgrounder-test-session --uid=alice -p PAMName=login \
  -p Environment=XDG_SESSION_TYPE=wayland /bin/sleep infinity || true
idle_session() {  # the id of alice's wayland session
  local id
  for id in $(inside loginctl list-sessions --no-legend 2>/dev/null | awk '{print $1}'); do
    [[ $(inside loginctl show-session "$id" -p Type --value 2>/dev/null) == wayland ]] \
      && { echo "$id"; return 0; }
  done
  return 1
}
manager_idle() {
  inside busctl get-property org.freedesktop.login1 /org/freedesktop/login1 \
    org.freedesktop.login1.Manager IdleHint 2>/dev/null
}
if eventually 30 idle_session >/dev/null && [[ $(manager_idle) == "b false" ]]; then
  session=$(idle_session)
  session_path=$(inside busctl call org.freedesktop.login1 /org/freedesktop/login1 \
    org.freedesktop.login1.Manager GetSession s "$session" | awk '{print $2}' | tr -d '"')
  inside systemctl start backgrounder.service || true
  idle_waiting() {
    inside backgrounder status --json 2>/dev/null | grep -q '"kind" *: *"userIdle"'
  }
  if eventually 30 idle_waiting; then
    sleep 3
    if inside test -e "$idle_flag"; then
      fail "requires-idle: the job ran while alice's session was active"
    else
      pass "requires-idle: held while logind says the user is active (session $session, wayland)"
    fi
    inside busctl call org.freedesktop.login1 "$session_path" org.freedesktop.login1.Session \
      SetIdleHint b true
    hinted_at=$(date +%s%N)
    ran() { inside test -e "$idle_flag"; }
    if [[ $(manager_idle) == "b true" ]] && eventually 30 ran; then
      after_ms=$((($(date +%s%N) - hinted_at) / 1000000))
      ((after_ms >= 2000)) \
        && pass "requires-idle: ran ${after_ms} ms after the session went idle (requires 2 s)" \
        || fail "requires-idle: ran only ${after_ms} ms after the session went idle, not 2 s"
    else
      fail "requires-idle: did not run once logind said idle ($(manager_idle)); the daemon said:
$(journal -u backgrounder.service | grep -iE 'idle|logind' | tail -n 10)"
    fi
  else
    fail "requires-idle: the job is not waiting for the idle user: $(inside backgrounder status 2>&1 | tail -n 5)"
  fi
  inside systemctl stop backgrounder.service
else
  fail "requires-idle: no wayland session for alice, or logind idle with it ($(manager_idle)): $(inside loginctl list-sessions --no-legend 2>&1)"
fi
inside systemctl stop backgrounder-test-session.service 2>/dev/null || true

echo "== systemd integration test: $((SECONDS - started)) s"
if ((failures)); then
  echo "== daemon journal:"
  journal -u backgrounder.service | tail -40
  echo "systemd: $failures check(s) failed"
  exit 1
fi
echo "systemd: all checks passed"
