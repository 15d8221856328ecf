#!/usr/bin/env python3
"""Time from `backgrounder trigger ID` to the job's side effect, against a real daemon.

Usage: swift build -c release --product backgrounder &&
       python3 Benchmarks/ControlLatency/control-latency.py [.build/release/backgrounder] [runs]
Reports p50/p99/max of (a) the trigger verb's own run time and (b) trigger → the job's command
having written its line. Everything lives in a temporary directory; the daemon is stopped after.
"""
import os, shutil, subprocess, sys, time

import tick_job

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/backgrounder"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
work, config, marker, _ = tick_job.workspace("bg-control-latency-")
daemon = subprocess.Popen([binary, "run", "--config", config], stderr=subprocess.DEVNULL)
def lines():
    return tick_job.runs(marker)
try:
    deadline = time.monotonic() + 20
    while lines() == 0:
        if time.monotonic() > deadline: sys.exit("the daemon never ran the job")
        time.sleep(0.01)
    verb, effect = [], []
    for _ in range(runs):
        before = lines()
        t0 = time.monotonic_ns()
        subprocess.run([binary, "trigger", "dev.example.tick", "--config", config],
                       capture_output=True, check=True)
        t1 = time.monotonic_ns()
        while lines() == before: time.sleep(0.0002)
        t2 = time.monotonic_ns()
        verb.append((t1 - t0) / 1e6); effect.append((t2 - t0) / 1e6)
        time.sleep(0.05)
    pick = lambda a, p: sorted(a)[min(len(a) - 1, int(len(a) * p))]
    for name, values in (("trigger verb run time", verb), ("trigger -> job side effect", effect)):
        print(f"{name} over {runs} runs (ms): p50 {pick(values, .5):.1f} "
              f"p99 {pick(values, .99):.1f} max {max(values):.1f}")
finally:
    daemon.terminate(); daemon.wait(timeout=15)
    shutil.rmtree(work, ignore_errors=True)
