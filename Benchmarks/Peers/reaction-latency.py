#!/usr/bin/env python3
"""Reaction latency to route, link and carrier changes: `backgrounder status --watch --json` vs
GLib's GNetworkMonitor vs `ip -ts monitor`, in a network namespace this script creates.

Usage (root): reaction-latency.py --backgrounder PATH --glib-monitor PATH --output FILE.json
              [--route N] [--link N] [--carrier N] [--rounds R] [--tools ours,glib,ip-monitor]

Each tool runs alone (so the three do not compete for the CPU) through the same sequence of
changes, made on this script's own rtnetlink socket with the kernel's ACK awaited; the latency is
from just before the request to the moment the tool's line saying so reaches this script:
- ours: the first `status` line with the expected "reachable" value;
- GLib: the first "network-changed" signal with the expected availability;
- ip monitor: the first line describing the change (the route line, or veth0's link line).
A tool that says nothing matching within the timeout (1 s; 1.1 s for carrier) is counted as a
miss for that change. For ours and GLib a line counts only when the state they report changes to
the expected one (GLib also signals "network-changed" when its availability stays the same).
The rounds alternate the tools, so slow drifts of the machine's load reach all three alike.
Changes on veth0 (192.0.2.1/24, default route via 192.0.2.254):
- route: the default route added / deleted;
- link: veth0 set down with the default route on it (the kernel drops the IPv4 route without a
  notification), then up again (not measured);
- carrier: the peer veth1 set down / up with the default route on veth0 (veth0 loses / regains its
  carrier); at least 1.2 s apart, as the kernel may hold carrier events of a device for up to 1 s.
The CPU time of the tool's process over its pass, divided by the changes made, is reported too.
"""
import argparse, os, select, signal, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Namespace, Rtnetlink, cpu_seconds, fail, write_result

parser = argparse.ArgumentParser()
parser.add_argument("--backgrounder", required=True)
parser.add_argument("--glib-monitor", required=True)
parser.add_argument("--output", required=True)
parser.add_argument("--route", type=int, default=160, help="route changes per tool")
parser.add_argument("--link", type=int, default=40, help="link-down changes per tool")
parser.add_argument("--carrier", type=int, default=40, help="carrier changes per tool")
parser.add_argument("--rounds", type=int, default=2)
parser.add_argument("--tools", default="ours,glib,ip-monitor")
args = parser.parse_args()
if os.geteuid() != 0:
    fail("reaction latency", "needs root (network namespace)")

GATEWAY = "192.0.2.254"
CARRIER_SPACING = 1.25
SETTLE = 0.02


class Watcher:
    """One tool's process; every output line is stamped with CLOCK_MONOTONIC as it arrives.
    STATE_OF reads the reported reachability from a line (None: the line does not say); for such
    tools a line matches only when the reported state changes to the expected one."""

    def __init__(self, name, command, state_of=None, matches=None):
        self.name, self.command, self.state_of, self.matches = name, command, state_of, matches
        self.state = None
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        self.poll = select.poll()
        self.poll.register(self.process.stdout.fileno(), select.POLLIN)
        self.pending = b""

    def lines(self, deadline):
        """Lines until DEADLINE (monotonic seconds), as (arrived ns, text), as they arrive."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if not self.poll.poll(remaining * 1000):
                return
            arrived = time.monotonic_ns()
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                fail("reaction latency", f"{self.name} exited: {' '.join(self.command)}")
            self.pending += chunk
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                yield arrived, line.decode(errors="replace")

    def _reports(self, kind, expected, line):
        if self.state_of is None:
            return self.matches(kind, expected, line)
        state = self.state_of(line)
        if state is None:
            return False
        changed = state != self.state
        self.state = state
        return changed and state == expected

    def drain(self, seconds):
        for _, line in self.lines(time.monotonic() + seconds):
            if self.state_of:
                self.state = self.state_of(line) if self.state_of(line) is not None else self.state

    def wait_for(self, kind, expected, started, timeout):
        """Microseconds from STARTED (ns) to the first line reporting the change, or None."""
        for arrived, line in self.lines(time.monotonic() + timeout):
            if self._reports(kind, expected, line):
                return (arrived - started) / 1000
        return None

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def ours_state(line):
    if '"reachable":true' in line:
        return True
    return False if '"reachable":false' in line else None


def glib_state(line):
    if line.endswith("available=1"):
        return True
    return False if line.endswith("available=0") else None


def ip_monitor_matches(kind, expected, line):
    text = line.split("] ", 1)[-1]  # drop the -ts stamp
    if kind == "route":
        return text.startswith("default via" if expected else "Deleted default via")
    if "veth0" not in text or text.startswith(("Deleted", "default")):
        return False
    if kind == "link":
        return "state DOWN" in text
    return "LOWER_UP" in text if expected else "NO-CARRIER" in text


def start(tool):
    if tool == "ours":
        command = [args.backgrounder, "status", "--watch", "--json"]
        watcher = Watcher(tool, command, state_of=ours_state)
        ready = lambda line: '"reachable"' in line
    elif tool == "glib":
        watcher = Watcher(tool, [args.glib_monitor], state_of=glib_state)
        ready = lambda line: line.startswith("ready ")
    else:
        watcher = Watcher(tool, ["ip", "-ts", "monitor"], matches=ip_monitor_matches)
        ready = None
    if ready is None:
        watcher.drain(0.3)  # `ip monitor` prints nothing until something changes
        return watcher, "listening"
    for _, line in watcher.lines(time.monotonic() + 30):
        if ready(line):
            watcher.state = watcher.state_of(line)
            watcher.drain(0.1)
            return watcher, line
    watcher.stop()
    fail("reaction latency", f"{tool} printed no first line within 30 s: {watcher.command}")


def run_pass(tool, route, link, carrier, results):
    """One tool through ROUTE route, LINK link-down and CARRIER carrier changes."""
    watcher, ready_line = start(tool)
    result = results.setdefault(tool, {"command": " ".join(watcher.command), "latency_us": {},
                                       "missed": {}, "cpu_seconds": 0.0, "changes": 0})
    result["ready_line"] = ready_line
    cpu_before = cpu_seconds(watcher.process.pid)
    changes = 0

    def measure(kind, expected, change, timeout=1.0):
        nonlocal changes
        started = time.monotonic_ns()
        change()
        changes += 1
        latency = watcher.wait_for(kind, expected, started, timeout)
        if latency is None:
            result["missed"][kind] = result["missed"].get(kind, 0) + 1
        else:
            result["latency_us"].setdefault(kind, []).append(latency)
        watcher.drain(SETTLE)

    def unmeasured(change):
        nonlocal changes
        change()
        changes += 1
        watcher.drain(SETTLE)

    try:
        done_route = done_link = 0
        while done_route < route or done_link < link:
            if done_route < route:
                measure("route", True, lambda: netlink.default_route(True, GATEWAY, veth0))
                measure("route", False, lambda: netlink.default_route(False, GATEWAY, veth0))
                done_route += 2
            if done_link < link:
                unmeasured(lambda: netlink.default_route(True, GATEWAY, veth0))
                measure("link", False, lambda: netlink.link(veth0, False))
                unmeasured(lambda: netlink.link(veth0, True))
                wait_for_carrier("veth0", True)
                watcher.drain(SETTLE)
                done_link += 1
        unmeasured(lambda: netlink.default_route(True, GATEWAY, veth0))
        last_carrier = 0.0
        for index in range(carrier):
            time.sleep(max(0.0, last_carrier + CARRIER_SPACING - time.monotonic()))
            up = index % 2 == 1
            last_carrier = time.monotonic()
            measure("carrier", up, lambda: netlink.link(veth1, up), timeout=1.1)
            wait_for_carrier("veth0", up)
            watcher.drain(SETTLE)
        if carrier % 2 == 1:
            time.sleep(max(0.0, last_carrier + CARRIER_SPACING - time.monotonic()))
            unmeasured(lambda: netlink.link(veth1, True))
            wait_for_carrier("veth0", True)
        unmeasured(lambda: netlink.default_route(False, GATEWAY, veth0))
        result["cpu_seconds"] += cpu_seconds(watcher.process.pid) - cpu_before
        result["changes"] += changes
    finally:
        watcher.stop()


def wait_for_carrier(name, up):
    deadline = time.monotonic() + 3
    while namespace.has_carrier(name) != up:
        if time.monotonic() > deadline:
            fail("reaction latency", f"{name} carrier still {'down' if up else 'up'} after 3 s")
        time.sleep(0.005)


def share(total, rounds, index):
    """Round INDEX's part of TOTAL (even, so route adds and deletes and carrier downs and ups
    pair up)."""
    pairs = total // 2
    return 2 * (pairs // rounds + (1 if index < pairs % rounds else 0))


namespace = Namespace("bg-reaction")
try:
    veth0, veth1 = namespace.veth("veth0", "veth1", "192.0.2.1/24")
    netlink = Rtnetlink()
    results = {}
    tools = args.tools.split(",")
    for round_index in range(args.rounds):
        for offset in range(len(tools)):
            tool = tools[(round_index + offset) % len(tools)]
            run_pass(tool, share(args.route, args.rounds, round_index),
                     args.link // args.rounds + (1 if round_index < args.link % args.rounds else 0),
                     share(args.carrier, args.rounds, round_index), results)
            print(f"reaction latency: round {round_index + 1}/{args.rounds}, {tool} done",
                  file=sys.stderr, flush=True)
    write_result(args.output, {"timeout_ms": {"route": 1000, "link": 1000, "carrier": 1100},
                               "tools": results})
finally:
    namespace.delete()
