#!/usr/bin/env python3
"""What unrelated kernel uevents cost an idle daemon (issue #34: quiet when the machine is busy).

Usage (root: the daemon runs in a network namespace this script creates and deletes, and the
uevents are made by writing to /sys/class/mem/null/uevent):
  python3 Benchmarks/DaemonFootprint/uevent-noise.py [--binary PATH] [--seconds 10]
          [--uevents 200] [--device /sys/class/mem/null]

1. Starts `backgrounder run` with one periodic job (`every = "1d"`) and waits until it ran.
2. Counts the system calls of all its threads (`strace -f -c`) over SECONDS, and among them
   `recvfrom` (only the uevent socket is read with it): idle, then while
   UEVENTS `change` uevents of DEVICE (subsystem `mem`, nothing the daemon reads) are sent,
   spread over the window. The kernel sends untagged uevents to every network namespace owned
   by the initial user namespace, the daemon's included.
The latency of a power_supply uevent through the filtered socket is measured by
Benchmarks/PowerBenchmark (its `netlink` mode replays uevents through the same filter).

Other processes on the machine see these uevents too (udevd, if it runs, re-runs its rules for
/dev/null: harmless).
"""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/debug/backgrounder")
parser.add_argument("--seconds", type=float, default=10)
parser.add_argument("--uevents", type=int, default=200)
parser.add_argument("--device", default="/sys/class/mem/null")
args = parser.parse_args()
binary = os.path.abspath(args.binary)
if os.geteuid() != 0:
    sys.exit("uevent-noise: needs root (network namespace, strace -p, sysfs uevent writes)")
for tool in ("ip", "strace"):
    if shutil.which(tool) is None:
        sys.exit(f"uevent-noise: {tool} is not installed (.ci/install-deps)")

work = tempfile.mkdtemp(prefix="bg-uevent-noise-")
namespace = f"bg-uevent-noise-{os.getpid()}"
subprocess.run(["ip", "netns", "add", namespace], check=True)
with open(f"{work}/config.toml", "w") as f:
    f.write(f'[store]\npath = "{work}/state.sqlite"\n'
            f'[control]\nsocket = "{work}/control.sock"\n'
            f'[[job]]\nid = "dev.bench.noise"\n'
            f'command = ["/bin/sh", "-c", "echo run >> {work}/runs"]\n'
            f'every = "1d"\n')


def traced(pid, seconds, during=None):
    """System calls of every thread of `pid` over `seconds`, by name; `during` runs meanwhile."""
    trace = subprocess.Popen(["strace", "-f", "-c", "-q", "-p", str(pid)],
                             stderr=subprocess.PIPE, text=True)
    time.sleep(1)  # strace attached to every thread
    started = time.monotonic()
    if during:
        during()
    time.sleep(max(0, seconds - (time.monotonic() - started)))
    trace.send_signal(signal.SIGINT)
    report = trace.communicate(timeout=30)[1]
    calls = {}
    for line in report.splitlines():
        fields = line.split()
        if len(fields) >= 5 and re.match(r"^[\d.]+$", fields[0]) and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    # strace's attach interrupts a thread's timed sleep; the kernel resumes it: not a wake-up.
    calls.pop("restart_syscall", None)
    return calls


def noise():
    interval = (args.seconds - 1) / args.uevents
    for _ in range(args.uevents):
        with open(f"{args.device}/uevent", "w") as f:
            f.write("change")
        time.sleep(interval)


def show(label, calls):
    detail = ", ".join(f"{name} {count}" for name, count in sorted(
        calls.items(), key=lambda item: -item[1])[:5])
    print(f"{label:<44} {sum(calls.values()):>6} system calls, {calls.get('recvfrom', 0):>4} "
          f"uevent socket reads (recvfrom)"
          f"{'  (' + detail + ')' if detail else ''}", flush=True)


daemon = None
try:
    # A private mount namespace: `ip netns add`/`delete` by other processes (a shared CI
    # machine's tests) change the mount table, which wakes the daemon's mount-table monitor;
    # that is not what is measured here.
    daemon = subprocess.Popen(
        ["unshare", "-m", "--propagation", "private", "ip", "netns", "exec", namespace, binary,
         "run", "--config", f"{work}/config.toml"],
        stderr=open(f"{work}/daemon.log", "w"))
    deadline = time.monotonic() + 120
    while not os.path.exists(f"{work}/runs"):
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"uevent-noise: the daemon did not run its job; see {work}/daemon.log")
        time.sleep(0.1)
    # The run recorded, the idle release after it done, and past the one-time check 30 s after
    # start (HealthProblem.silentSourceLimit).
    time.sleep(35)
    print(f"binary: {binary}")
    show(f"idle, {args.seconds:g} s", traced(daemon.pid, args.seconds))
    show(f"{args.uevents} uevents of {os.path.basename(args.device)}, {args.seconds:g} s",
         traced(daemon.pid, args.seconds, noise))
    show(f"idle again, {args.seconds:g} s", traced(daemon.pid, args.seconds))
finally:
    if daemon is not None and daemon.poll() is None:
        daemon.terminate()
        daemon.wait(timeout=20)
    subprocess.run(["ip", "netns", "delete", namespace])
    shutil.rmtree(work, ignore_errors=True)
