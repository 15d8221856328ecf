#!/usr/bin/env bash
# The daemon against a real NetworkManager (issue #23): Debian bookworm's network-manager 1.42 in
# a systemd-nspawn container (Tests/networkmanager/container.sh) manages eth0, a veth to a
# network namespace made here, where dnsmasq sends Android's ANDROID_METERED hint and an HTTP
# server answers NetworkManager's connectivity check (OK or a captive portal's 302). The
# packaged daemon runs as the system unit inside; each scenario asserts on what its jobs did
# (the file each job's command appends to, the run records of `status --json`):
#   - started while NetworkManager says metered (its guess, then an explicit setting): a due
#     `unmetered` job does not run; it runs once after `connection.metered no`;
#   - started behind a captive portal: a due `any` job does not run and waits for "captive
#     portal"; it runs once, told `full`, after the check answers OK;
#   - `systemctl restart NetworkManager` (3 times; metered set, and guessed from DHCP) with a
#     held `unmetered` job: still held; `systemctl stop NetworkManager`: status marks its last
#     answer stale, the job is held until `[network] stale-hints`, then the kernel decides and a
#     health problem says so;
#   - NetworkManager started after the daemon: its view reaches the daemon and holds the job;
#   - NetworkManager on the bus but stopped (SIGSTOP): `[network] source-timeout` bounds the
#     start and the health problem (status, doctor) names NetworkManager;
#   - `status --watch --json`'s first line carries NetworkManager's view in 20 of 20 starts.
#
# Usage: Tests/networkmanager/run.sh PACKAGE     (the .deb Scripts/package builds; for
#        development a bare binary, copied in with its shared libraries)
#        Tests/networkmanager/run.sh --prepare-only   (debootstrap the cached rootfs only)
# Needs root, debootstrap, systemd-container, dnsmasq (dnsmasq-base), python3, iproute2 and the
# Debian mirror of the apt configuration. Outside CI a missing prerequisite skips with a message;
# with CI=true it fails. The rootfs is cached in $BACKGROUNDER_SYSTEMD_TEST_CACHE (default
# .build-systemd/ in the repository). The whole run is bounded by $BACKGROUNDER_NM_TEST_TIMEOUT
# seconds (default 600). Prints PASS/FAIL per check and a summary line. For development:
# BACKGROUNDER_NM_TEST_ONLY="portal restart" runs only those scenarios (metered, portal,
# restart, stop, late, silent, watch); BACKGROUNDER_NM_TEST_LOGS=DIR keeps the machine's
# journal and the dnsmasq and HTTP logs there.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
prepare_only=0
if [[ ${1:-} == --prepare-only ]]; then
  prepare_only=1  # debootstrap the cached rootfs, nothing else (CI does it early)
else
  package=$(realpath "${1:?usage: Tests/networkmanager/run.sh PACKAGE (.deb or binary) | --prepare-only}")
fi
cache=${BACKGROUNDER_SYSTEMD_TEST_CACHE:-$repo/.build-systemd}
limit=${BACKGROUNDER_NM_TEST_TIMEOUT:-600}
source "$repo/Tests/networkmanager/container.sh"

skip_or_fail() {
  if [[ ${CI:-} == true ]]; then
    echo "FAIL NetworkManager integration test cannot run: $*" >&2
    exit 1
  fi
  echo "SKIP NetworkManager integration test: $*"
  exit 0
}
[[ $(id -u) == 0 ]] || skip_or_fail "needs root (systemd-nspawn, network namespaces)"
missing=$(nm_missing_tools)
[[ -z $missing ]] || skip_or_fail "not installed: $(echo "$missing" | paste -sd' ') (.ci/install-deps)"
[[ -n $(cgroup_roots) ]] || skip_or_fail "no cgroup file system under /sys/fs/cgroup"
if ((prepare_only)); then
  prepared_at=$SECONDS
  tarball=$(rootfs_tarball "${nm_packages[@]}") || skip_or_fail "debootstrap failed"
  echo "== NetworkManager test rootfs $tarball ready in $((SECONDS - prepared_at)) s"
  exit 0
fi

failures=0
passes=0
pass() {
  echo "PASS $*"
  passes=$((passes + 1))
}
fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

work=$(mktemp -d /var/tmp/backgrounder-nm-test.XXXXXX)
cleanup() {
  set +e
  [[ -n ${watchdog:-} ]] && kill "$watchdog" 2>/dev/null
  if [[ -n ${BACKGROUNDER_NM_TEST_LOGS:-} && -d $work/root ]]; then
    mkdir -p "$BACKGROUNDER_NM_TEST_LOGS"
    journal >"$BACKGROUNDER_NM_TEST_LOGS/journal.txt"
    cp "$work"/{dnsmasq,http}.log "$BACKGROUNDER_NM_TEST_LOGS/" 2>/dev/null
  fi
  [[ -n ${nm_stopped_pid:-} ]] && inside kill -CONT "$nm_stopped_pid" 2>/dev/null
  nm_stop_outside
  teardown_machine
}
trap cleanup EXIT
trap 'echo "FAIL NetworkManager test: stopped (time limit $limit s or a signal)"; exit 124' TERM INT
# The whole run is bounded: past $limit seconds the watchdog ends it (the trap cleans up).
(
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  sleep "$limit" &
  nap=$!
  wait "$nap" && kill -TERM $$
) &
watchdog=$!
started=$SECONDS

journal() { journalctl -D "$work/root/var/log/journal" --no-pager -o short-monotonic "$@" 2>/dev/null; }

# --- the machine --------------------------------------------------------------------------------
nm_prepare_root "$package" || skip_or_fail "could not prepare the root (debootstrap or dpkg -i)"
prepared=$SECONDS
boot_machine
nm_start_outside
booted=$SECONDS

# --- the daemon -----------------------------------------------------------------------------------
# Each job's command appends "epoch-ns metered=... connectivity=... primary=..." to
# /var/lib/nm-test/ID (ProtectSystem=full leaves /var writable).
job() {
  local id=$1 network=$2 extra=${3:-}
  cat <<TOML

[[job]]
id = "$id"
command = ["/bin/sh", "-c", "echo \"\$(date +%s%N) metered=\$BACKGROUNDER_METERED connectivity=\$BACKGROUNDER_CONNECTIVITY primary=\$BACKGROUNDER_PRIMARY_LINK\" >> /var/lib/nm-test/$id"]
network = "$network"
once = true
$extra
TOML
}
# The [network] keys of issue #23 when this build knows them (probed once below).
network_table() {
  echo "[network]"
  ((timing_keys)) && printf 'source-timeout = "%s"\nstale-hints = "%s"\n' "$source_timeout" "$stale_hints"
  return 0
}
source_timeout=3s
stale_hints=8s
printf '[network]\nsource-timeout = "3s"\nstale-hints = "8s"\n' | inside tee /tmp/probe.toml >/dev/null
if inside backgrounder status --json --config /tmp/probe.toml >/dev/null 2>"$work/probe.err"; then
  timing_keys=1
else
  timing_keys=0
  echo "== this build rejects [network] source-timeout/stale-hints: $(head -c 300 "$work/probe.err")"
fi

# Stops the daemon, forgets its store and the jobs' files, writes the config from stdin.
fresh_daemon() {
  inside systemctl stop backgrounder.service 2>/dev/null || true
  inside systemctl reset-failed backgrounder.service 2>/dev/null || true
  inside sh -c 'rm -rf /var/lib/backgrounder/* /var/lib/nm-test/*'
  inside tee "$nm_config" >/dev/null
}
# Starts the daemon (returns at READY=1), bounded.
start_daemon() {
  timeout 60 nsenter -t "$leader" -a systemctl start backgrounder.service
}
runs_of() { inside sh -c "cat /var/lib/nm-test/$1 2>/dev/null | wc -l"; }
ran() { (($(runs_of "$1") > 0)); }
line_of() { inside sh -c "head -n 1 /var/lib/nm-test/$1 2>/dev/null || true"; }
# One-shot status (JSON, human); never fails: a failure prints what went wrong instead.
status_json() {
  timeout 60 nsenter -t "$leader" -a backgrounder status --json --config "$nm_config" 2>&1 \
    || true
}
status_text() {
  timeout 60 nsenter -t "$leader" -a backgrounder status --config "$nm_config" 2>&1 || true
}
# Evaluates a Python expression over the status JSON `d` (from stdin), printing its value, or
# "query failed: ..." (never a failure status: the checks compare what it prints).
query() {
  python3 -c "import json,sys
text = sys.stdin.read()
try:
    d = json.loads(text)
    print($1)
except Exception as error:
    print('query failed:', repr(error), text[:300])"
}
# The task of job ID in `status --json`, as JSON (empty when absent).
task_json() {
  status_json | query "json.dumps(next((t for t in d['tasks'] if t['id'].endswith('$1')), None))"
}
# The number of run records of job ID (`recentRuns`), and their outcomes.
run_records() {
  status_json | query "','.join(r['outcome'] for t in d['tasks'] if t['id'].endswith('$1') for r in t['recentRuns'])"
}
health_text() { status_json | query "json.dumps(d.get('health'))"; }
daemon_log() { journal -u backgrounder.service | tail -n "${1:-25}"; }

# The run records of job ID that started its command: all but the network gate's "deferred"
# (the gate waited and gave up: no attempt used, nothing spawned) and "blocked".
started_records() {
  run_records "$1" | tr ',' '\n' | grep -v -x -e deferred -e blocked -e '' | paste -sd, - || true
}
# Holds: after SECONDS, job ID's command has not run and no run of it was started (a run
# stopped before its command wrote anything still leaves a run record).
stays_unrun() {
  local id=$1 seconds=$2 records
  sleep "$seconds"
  ran "$id" && return 1
  records=$(started_records "$id")
  [[ -z $records ]] || {
    echo "== $id: started runs '$records' though its command did not write"
    return 1
  }
}
# "the command ran at ... / run records ..." for a FAIL line.
what_ran() { echo "command: '$(line_of "$1")', run records: '$(run_records "$1")'"; }

# NetworkManager's state for a scenario: metered (yes/no/unknown = guess) and the check's
# answer (ok/portal); waits until nmcli shows it.
nm_state() {
  local metered=$1 check=$2 want_metered want_connectivity
  case $metered in
    yes) want_metered="yes" ;;
    no) want_metered="no" ;;
    unknown) want_metered="yes (guessed)" ;;
  esac
  [[ $check == ok ]] && want_connectivity=full || want_connectivity=portal
  nm_set_metered "$metered" || true
  nm_set_check "$check"
  metered_is() { [[ $(nm_metered) == "$want_metered" ]]; }
  connectivity_is() {
    [[ $(nm_connectivity) == "$want_connectivity" ]] && return 0
    nm_set_check "$check"
    return 1
  }
  eventually 30 metered_is && eventually 30 connectivity_is || {
    echo "== NetworkManager did not reach metered=$want_metered connectivity=$want_connectivity:" \
      "$(nm_metered) / $(nm_connectivity)"
    return 1
  }
}

# Whether scenario NAME runs (all unless BACKGROUNDER_NM_TEST_ONLY names some).
selected() { [[ -z ${BACKGROUNDER_NM_TEST_ONLY:-} || " $BACKGROUNDER_NM_TEST_ONLY " == *" $1 "* ]]; }

# --- NetworkManager manages eth0 ------------------------------------------------------------------
eth0_activated() { [[ $(nm_eth0_state) == 100* ]]; }
if eventually 60 eth0_activated; then
  pass "NetworkManager $(inside NetworkManager --version) manages eth0: $(nm_eth0_state)," \
    "$(inside ip -4 -o addr show dev eth0 | awk '{print $4}'), metered: $(nm_metered)"
else
  fail "NetworkManager did not activate eth0 within 60 s: $(inside nmcli device 2>&1 | tr '\n' ' ')"
  tail -n 20 "$work/dnsmasq.log"
  exit 1
fi
guess_is_metered() { [[ $(nm_metered) == "yes (guessed)" ]]; }
if eventually 20 guess_is_metered; then
  pass "dnsmasq's ANDROID_METERED: NetworkManager guesses metered ($(nm_metered))"
else
  fail "NetworkManager's metered guess is '$(nm_metered)', not 'yes (guessed)'"
fi
echo "== machine prepared in $((prepared - started)) s, booted with NetworkManager in $((booted - prepared)) s"

# --- 1. started while NetworkManager says metered: guess, then explicit -------------------------
metered_at_start() {
  local setting=$1 label=$2 id="nm.unmetered-$1"
  nm_state "$setting" ok || { fail "$label: NetworkManager not ready"; return; }
  job "$id" unmetered | cat <(network_table) - | fresh_daemon
  start_daemon || { fail "$label: the daemon did not start: $(daemon_log 10)"; return; }
  if stays_unrun "$id" 4; then
    pass "$label: the due unmetered job did not run within 4 s of READY" \
      "(network: $(status_json | query "d['network']['metered'], [l['meteredReason'] for l in d['network']['links'] if l['name']=='eth0']"))"
  else
    fail "$label: the due unmetered job started on a link NetworkManager calls metered ($(what_ran "$id"))"
    daemon_log 15
  fi
  nm_set_metered no
  if eventually 20 ran "$id"; then
    sleep 1
    local runs records
    runs=$(runs_of "$id")
    records=$(started_records "$id")
    [[ $runs == 1 && $(line_of "$id") == *metered=0* && $records == success ]] \
      && pass "$label: after connection.metered no it ran once ($(line_of "$id" | cut -d' ' -f2-); started runs: $records; all: $(run_records "$id"))" \
      || fail "$label: after connection.metered no: $runs run(s), first '$(line_of "$id")', started runs '$records', all: '$(run_records "$id")'"
  else
    fail "$label: did not run within 20 s of connection.metered no ($(nm_metered)); task: $(task_json "$id")"
  fi
}
selected metered && metered_at_start unknown "metered (NetworkManager's DHCP guess) at start"
selected metered && metered_at_start yes "metered (connection.metered yes) at start"

# --- 2. started behind a captive portal -------------------------------------------------------
portal_at_start() {
  local id=nm.any
  nm_state no portal || { fail "portal at start: NetworkManager not ready"; return; }
  job "$id" any | cat <(network_table) - | fresh_daemon
  start_daemon || { fail "portal at start: the daemon did not start: $(daemon_log 10)"; return; }
  # The hold reason, early: the job is still in the network gate (up to 5 s from its claim).
  sleep 1.5
  local task line
  task=$(task_json "$id")
  line=$(status_text | grep -m1 "^ *$id " | sed 's/^ *//; s/  */ /g')
  [[ $task == *'"connectivity": "portal"'* && $line == *"captive portal"* ]] \
    && pass "portal at start: the job waits for the captive portal ($line)" \
    || fail "portal at start: hold reason is not the captive portal: pendingPredicates" \
      "$(query "d and d['pendingPredicates']" <<<"$task"), status line '$line'; network:" \
      "$(status_json | query "d['network']['connectivity'], d['network'].get('sources')")"
  if stays_unrun "$id" 2.5; then
    pass "portal at start: the due any job did not run within 4 s of READY"
  else
    fail "portal at start: the due any job started behind the portal ($(what_ran "$id"))"
  fi
  nm_set_check ok
  if eventually 30 ran "$id"; then
    sleep 1
    local runs records
    runs=$(runs_of "$id")
    records=$(started_records "$id")
    [[ $runs == 1 && $(line_of "$id") == *connectivity=full* && $records == success ]] \
      && pass "portal cleared: ran once, told full ($(line_of "$id" | cut -d' ' -f2-); started runs: $records; all: $(run_records "$id"))" \
      || fail "portal cleared: $runs run(s), first '$(line_of "$id")', started runs '$records', all: '$(run_records "$id")'"
  else
    fail "portal cleared: did not run within 30 s (NetworkManager: $(nm_connectivity)); task: $(task_json "$id")"
  fi
}
selected portal && portal_at_start

# --- 3. NetworkManager restarted, then stopped, under a held unmetered job ---------------------
restart_networkmanager() {
  local setting=$1 label=$2 id="nm.held-$1" want
  [[ $setting == yes ]] && want=yes || want="yes (guessed)"
  nm_state "$setting" ok || { fail "$label: NetworkManager not ready"; return; }
  # Due 2 s after the start, so that this scenario does not depend on the start (1. and 2.).
  job "$id" unmetered 'delay = "2s"' | cat <(network_table) - | fresh_daemon
  start_daemon || { fail "$label: the daemon did not start: $(daemon_log 10)"; return; }
  if ! stays_unrun "$id" 4; then
    fail "$label: the held job started before NetworkManager was touched ($(what_ran "$id"))"
    return
  fi
  local begun=$SECONDS round
  metered_again() { [[ $(nm_metered) == "$want" ]]; }
  # Three restarts in a row, each waited out until NetworkManager says metered again.
  for round in 1 2 3; do
    inside systemctl restart NetworkManager.service \
      || { fail "$label: systemctl restart NetworkManager failed"; return; }
    eventually 30 metered_again || true
  done
  sleep 3
  if stays_unrun "$id" 0; then
    pass "$label: 3 x systemctl restart NetworkManager, the unmetered job stayed held ($((SECONDS - begun)) s watched)"
  else
    fail "$label: systemctl restart NetworkManager released the held unmetered job ($(what_ran "$id"))"
    daemon_log 15
  fi
}
selected restart && restart_networkmanager yes "restart (connection.metered yes)"
selected restart && restart_networkmanager unknown "restart (NetworkManager's DHCP guess)"

stop_networkmanager() {
  local id=nm.stale
  nm_state yes ok || { fail "stop: NetworkManager not ready"; return; }
  job "$id" unmetered 'delay = "2s"' | cat <(network_table) - | fresh_daemon
  start_daemon || { fail "stop: the daemon did not start: $(daemon_log 10)"; return; }
  if ! stays_unrun "$id" 4; then
    fail "stop: the held job started before NetworkManager was stopped ($(what_ran "$id"))"
    return
  fi
  local stopped_at
  stopped_at=$(date +%s%N)
  inside systemctl stop NetworkManager.service \
    || { fail "stop: systemctl stop NetworkManager failed"; return; }
  local stale=${stale_hints%s} marks text
  sleep 1
  marks=$(status_json | query "[(s['name'], s['state'], s.get('stale')) for s in d['network'].get('sources', [])], [(l['name'], l['meteredReason'], l.get('stale')) for l in d['network']['links'] if l['name']=='eth0']")
  text=$(status_text | grep -m1 -i 'NetworkManager away' | sed 's/^ *//')
  [[ $marks == *"'NetworkManager', 'stale', True"*"'eth0', 'networkmanager:yes', True"* && -n $text ]] \
    && pass "NetworkManager stopped: status marks its last answer stale: $marks; \"$text\"" \
    || fail "NetworkManager stopped: status does not show its answer as stale: $marks; text: '$text'"
  if stays_unrun "$id" $((stale - 3)); then
    pass "systemctl stop NetworkManager: held for $((stale - 2)) s (stale-hints = $stale_hints)"
  else
    local at
    at=$(line_of "$id" | cut -d' ' -f1)
    fail "systemctl stop NetworkManager: the held job started before the stale limit" \
      "${at:+(its command $(((at - stopped_at) / 1000000)) ms after the stop) }($(what_ran "$id"); stale-hints = $stale_hints)"
  fi
  if eventually 20 ran "$id"; then
    local after=$((($(line_of "$id" | cut -d' ' -f1) - stopped_at) / 1000000))
    ((after >= (stale - 1) * 1000)) \
      && pass "after the stale limit the kernel decides: ran ${after} ms after the stop ($(line_of "$id" | cut -d' ' -f2-))" \
      || fail "the held job ran ${after} ms after the stop, before the stale limit ($stale_hints)"
  else
    fail "the held job did not run within 20 s after the stale limit: task $(task_json "$id")"
  fi
  local health
  health=$(health_text)
  [[ ${health,,} == *networkmanager* ]] \
    && pass "NetworkManager gone: health problem $health" \
    || fail "NetworkManager gone: no health problem naming it (health: $health)"
  inside systemctl start NetworkManager.service || fail "NetworkManager did not start again"
}
selected stop && stop_networkmanager

# --- 4. NetworkManager started after the daemon -------------------------------------------------
nm_after_daemon() {
  local id=nm.late
  inside systemctl stop NetworkManager.service 2>/dev/null || true
  # Due 15 s after the start: NetworkManager is back by then and says metered.
  job "$id" unmetered 'delay = "15s"' | cat <(network_table) - | fresh_daemon
  start_daemon || { fail "NetworkManager later: the daemon did not start: $(daemon_log 10)"; return; }
  local daemon_started=$SECONDS
  inside systemctl start NetworkManager.service \
    || { fail "NetworkManager later: systemctl start NetworkManager failed"; return; }
  nm_state yes ok || { fail "NetworkManager later: NetworkManager not ready"; return; }
  daemon_sees_it() {
    [[ $(status_json | query "[l['meteredReason'] for l in d['network']['links'] if l['name']=='eth0']") == *networkmanager* ]]
  }
  if eventually 10 daemon_sees_it; then
    pass "NetworkManager started after the daemon: its view is in status ($(status_json | query "[l['meteredReason'] for l in d['network']['links'] if l['name']=='eth0']"))"
  else
    fail "NetworkManager started after the daemon: status does not show its view"
  fi
  local wait=$((15 - (SECONDS - daemon_started) + 4))
  ((wait > 0)) || wait=1
  if stays_unrun "$id" "$wait"; then
    pass "NetworkManager started after the daemon: the unmetered job due meanwhile stays held"
  else
    fail "NetworkManager started after the daemon: the job started on the metered link ($(what_ran "$id"))"
  fi
  nm_set_metered no
  eventually 20 ran "$id" && pass "NetworkManager started after the daemon: ran after connection.metered no" \
    || fail "NetworkManager started after the daemon: did not run after connection.metered no"
}
selected late && nm_after_daemon

# --- 5. NetworkManager on the bus but not answering ---------------------------------------------
silent_networkmanager() {
  local id=nm.silent
  nm_state no ok || { fail "silent NetworkManager: not ready"; return; }
  job "$id" unmetered | cat <(network_table) - | fresh_daemon
  nm_stopped_pid=$(nm_main_pid)
  inside kill -STOP "$nm_stopped_pid"
  local before after
  before=$(date +%s%N)
  start_daemon || fail "silent NetworkManager: the daemon did not start: $(daemon_log 10)"
  after=$(date +%s%N)
  local ready_ms=$(((after - before) / 1000000)) timeout_ms=$((${source_timeout%s} * 1000))
  ((ready_ms >= timeout_ms - 500 && ready_ms < timeout_ms + 5000)) \
    && pass "silent NetworkManager: READY after ${ready_ms} ms (source-timeout = $source_timeout)" \
    || fail "silent NetworkManager: READY after ${ready_ms} ms, not about the source-timeout ($source_timeout)"
  if eventually 20 ran "$id"; then
    local ran_ms=$((($(line_of "$id" | cut -d' ' -f1) - before) / 1000000))
    ((ran_ms >= timeout_ms - 500)) \
      && pass "silent NetworkManager: the job ran only after the source timed out (${ran_ms} ms after the start)" \
      || fail "silent NetworkManager: the job ran ${ran_ms} ms after the start, before the source timeout ($source_timeout)"
  else
    fail "silent NetworkManager: the job never ran (kernel: unmetered veth): task $(task_json "$id")"
  fi
  local health status_ms
  before=$(date +%s%N)
  health=$(health_text)
  status_ms=$((($(date +%s%N) - before) / 1000000))
  [[ ${health,,} == *networkmanager* ]] \
    && pass "silent NetworkManager: reported as a health problem: $health (status took ${status_ms} ms)" \
    || fail "silent NetworkManager: no health problem naming it (health: $health; status took ${status_ms} ms)"
  local doctor
  doctor=$(timeout 60 nsenter -t "$leader" -a backgrounder doctor --config "$nm_config" 2>&1 || true)
  [[ $doctor == *NetworkManager* ]] \
    && pass "silent NetworkManager: doctor names it: $(grep -m1 NetworkManager <<<"$doctor" | sed 's/^ *//')" \
    || fail "silent NetworkManager: doctor does not mention NetworkManager: $(tail -n 5 <<<"$doctor")"
  inside kill -CONT "$nm_stopped_pid"
  nm_stopped_pid=
}
selected silent && silent_networkmanager

# --- 6. the first `status --watch --json` line, 20 daemon starts ---------------------------------
first_watch_lines() {
  nm_state yes ok || { fail "watch: NetworkManager not ready"; return; }
  job nm.watch unmetered | cat <(network_table) - | fresh_daemon
  local good=0 i line bad=
  for i in $(seq 1 20); do
    inside systemctl restart --no-block backgrounder.service
    # A watcher of its own per start (its own files), ended and reaped before the next.
    line=$(timeout 30 nsenter -t "$leader" -a sh -c '
      out=/tmp/watch-'"$i"'.ndjson err=/tmp/watch-'"$i"'.err
      backgrounder status --watch --json --config '"$nm_config"' >$out 2>$err &
      watch=$!
      while [ ! -s $out ] && kill -0 $watch 2>/dev/null; do sleep 0.02; done
      sleep 0.05
      if kill $watch 2>/dev/null; then state=running; else state=ended; fi
      wait $watch
      state="$state, exit $?"
      head -n 1 $out
      [ -s $out ] || echo "no line ($state; stderr: \"$(head -c 300 $err)\")"' 2>/dev/null)
    if query "d['network']['metered'] is True and d['network']['connectivity'] == 'full' and any(l['name']=='eth0' and l['meteredReason'].startswith('networkmanager') for l in d['network']['links'])" <<<"$line" 2>/dev/null | grep -qx True; then
      good=$((good + 1))
    else
      [[ -n $bad ]] || bad=$line
    fi
  done
  ((good == 20)) && pass "status --watch --json: the first line carries NetworkManager's view in 20 of 20 starts" \
    || fail "status --watch --json: the first line carries NetworkManager's view in $good of 20 starts; first wrong line: ${bad:0:600}"
}
selected watch && first_watch_lines

inside systemctl stop backgrounder.service 2>/dev/null || true
echo "== NetworkManager integration test: $((SECONDS - started)) s"
if ((failures)); then
  echo "== daemon journal (last 40 lines):"
  daemon_log 40
  echo "networkmanager: $failures of $((passes + failures)) check(s) failed"
  exit 1
fi
echo "networkmanager: all $passes checks passed"
