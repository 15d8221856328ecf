#!/usr/bin/env python3
"""Idle cost over the same window: our daemon with 100 periodic jobs not yet due vs GLib's
GNetworkMonitor vs a 1 s poller (`while sleep 1; do ip -j route; done`), in a network namespace
this script creates.

Usage (root): idle-cost.py --backgrounder PATH --glib-monitor PATH --output FILE.json
              [--seconds 60] [--jobs 100]

Two windows of SECONDS each, all three tools side by side:
1. untraced: CPU time (the kernel's per-process CPU clock; for the poller, its shell and every
   reaped child, from wait4) and voluntary context switches (/proc/PID/task/*/status sampled
   every second, so threads that exit count too; for the poller, wait4's rusage);
2. traced: system calls of every thread (`strace -f -c`); strace's own restart_syscall on attach
   is not counted.
"""
import argparse, os, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import Namespace, SwitchCounter, cpu_seconds, fail, strace_counts, write_result

parser = argparse.ArgumentParser()
parser.add_argument("--backgrounder", required=True)
parser.add_argument("--glib-monitor", required=True)
parser.add_argument("--output", required=True)
parser.add_argument("--seconds", type=int, default=60)
parser.add_argument("--jobs", type=int, default=100)
args = parser.parse_args()
if os.geteuid() != 0:
    fail("idle cost", "needs root (network namespace, strace -p)")

POLLER = "while sleep 1; do ip -j route > /dev/null; done"


def start_daemon(work):
    with open(f"{work}/config.toml", "w") as f:
        f.write(f'[store]\npath = "{work}/state.sqlite"\n[control]\nsocket = "{work}/control.sock"\n')
        for index in range(args.jobs):
            f.write(f'[[job]]\nid = "dev.bench.idle-{index:03}"\n'
                    f'command = ["/bin/sh", "-c", "echo run >> {work}/runs"]\nevery = "1d"\n')
    daemon = subprocess.Popen([args.backgrounder, "run", "--config", f"{work}/config.toml"],
                              stderr=open(f"{work}/daemon.log", "w"))
    deadline = time.monotonic() + 120
    while runs(work) < args.jobs:
        if daemon.poll() is not None or time.monotonic() > deadline:
            fail("idle cost", f"the daemon ran {runs(work)} of {args.jobs} jobs ({work}/daemon.log)")
        time.sleep(0.1)
    time.sleep(3)  # let the last completions be recorded
    return daemon


def runs(work):
    try:
        with open(f"{work}/runs") as f:
            return len(f.readlines())
    except FileNotFoundError:
        return 0


def untraced(pids):
    """{name: {cpu_seconds, voluntary_switches}} over one window."""
    cpu = {name: cpu_seconds(pid) for name, pid in pids.items()}
    switches = {name: SwitchCounter(pid) for name, pid in pids.items()}
    poller = subprocess.Popen(["sh", "-c", POLLER], start_new_session=True)
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        time.sleep(min(1.0, max(0.0, end - time.monotonic())))
        for counter in switches.values():
            counter.sample()
    result = {name: {"cpu_seconds": cpu_seconds(pid) - cpu[name],
                     "voluntary_switches": switches[name].total()}
              for name, pid in pids.items()}
    os.killpg(poller.pid, signal.SIGTERM)
    _, _, usage = os.wait4(poller.pid, 0)
    result["poller"] = {"cpu_seconds": usage.ru_utime + usage.ru_stime,
                        "voluntary_switches": usage.ru_nvcsw}
    return result


def traced(pids, work):
    """{name: {syscalls, top}} over one window."""
    traces = {name: subprocess.Popen(["strace", "-f", "-c", "-q", "-o", f"{work}/{name}.strace",
                                      "-p", str(pid)]) for name, pid in pids.items()}
    # The poller ends itself (`timeout`, whose one wait4 counts too), and strace with it.
    traces["poller"] = subprocess.Popen(["strace", "-f", "-c", "-q", "-o", f"{work}/poller.strace",
                                         "timeout", "-s", "KILL", str(args.seconds),
                                         "sh", "-c", POLLER])
    time.sleep(args.seconds)
    for name, trace in traces.items():
        if name != "poller":
            trace.send_signal(signal.SIGINT)
    result = {}
    for name, trace in traces.items():
        trace.wait(timeout=30)
        with open(f"{work}/{name}.strace") as f:
            calls = strace_counts(f.read())
        calls.pop("restart_syscall", None)
        top = sorted(calls.items(), key=lambda item: -item[1])[:4]
        result[name] = {"syscalls": sum(calls.values()), "top": dict(top)}
    return result


namespace = Namespace("bg-idle")
work = tempfile.mkdtemp(prefix="bg-idle-")
processes = []
try:
    namespace.veth("idle0", "idle1", "192.0.2.1/24")
    namespace.ip("route", "add", "default", "via", "192.0.2.254")
    daemon = start_daemon(work)
    processes.append(daemon)
    glib = subprocess.Popen([args.glib_monitor], stdout=subprocess.DEVNULL)
    processes.append(glib)
    time.sleep(2)
    pids = {"ours": daemon.pid, "glib": glib.pid}
    for name, process in [("ours", daemon), ("glib", glib)]:
        if process.poll() is not None:
            fail("idle cost", f"{name} exited before the idle window")
    usage = untraced(pids)
    calls = traced(pids, work)
    result = {"seconds": args.seconds, "jobs": args.jobs, "poller": POLLER,
              "commands": {"ours": f"{args.backgrounder} run (with {args.jobs} jobs every 1d, "
                                   "each run once)",
                           "glib": args.glib_monitor, "poller": f"sh -c '{POLLER}'"},
              "tools": {name: {**usage[name], **calls[name]} for name in usage}}
    write_result(args.output, result)
finally:
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()
    namespace.delete()
    shutil.rmtree(work, ignore_errors=True)
