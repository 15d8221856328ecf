#!/usr/bin/env python3
"""`trigger` and `status` with and without clients that hold the control socket (issue 25).

Usage: swift build -c release --product backgrounder &&
       python3 Benchmarks/ControlLatency/control-contention.py [--binary PATH] [--runs 50]
           [--idle 50] [--stopped-watchers 6]

Starts a daemon with one job in a temporary directory, then times RUNS `backgrounder trigger`
(each until the job's command wrote its line: the daemon keeps dispatching) and RUNS
`backgrounder status`, first alone, then with IDLE connections that say nothing (re-opened as
the daemon closes them at their request deadline) and STOPPED `status --watch` clients
(SIGSTOP). Prints p50/p99/max of each and the ratio of the p99s.
"""
import argparse, os, shutil, signal, socket, subprocess, sys, threading, time

import tick_job

parser = argparse.ArgumentParser()
parser.add_argument("--binary", default=".build/release/backgrounder")
parser.add_argument("--runs", type=int, default=50)
parser.add_argument("--idle", type=int, default=50)
parser.add_argument("--stopped-watchers", type=int, default=6)
args = parser.parse_args()
binary = os.path.abspath(args.binary)
work, config, marker, sock = tick_job.workspace("bg-contention-")


def lines():
    return tick_job.runs(marker)


def pick(values, p):
    return sorted(values)[min(len(values) - 1, int(len(values) * p))]


def measure(label):
    trigger, status, failures = [], [], []
    for _ in range(args.runs):
        if daemon.poll() is not None:
            failures.append(f"the daemon exited ({daemon.returncode})")
            break
        before = lines()
        t0 = time.monotonic_ns()
        verb = subprocess.run([binary, "trigger", "dev.example.tick", "--config", config],
                              capture_output=True, text=True, timeout=60)
        t1 = time.monotonic_ns()
        trigger.append((t1 - t0) / 1e6)
        if verb.returncode != 0:
            failures.append(f"trigger exit {verb.returncode}: {verb.stderr.strip()[:120]}")
        else:
            deadline = time.monotonic() + 30
            while lines() == before and time.monotonic() < deadline:
                time.sleep(0.0005)
            if lines() == before:
                failures.append("the triggered job did not run within 30 s")
            time.sleep(0.2)  # the run ends (a trigger while it runs starts nothing)
        t0 = time.monotonic_ns()
        verb = subprocess.run([binary, "status", "--config", config], capture_output=True,
                              text=True, timeout=60)
        status.append((time.monotonic_ns() - t0) / 1e6)
        if verb.returncode != 0:
            failures.append(f"status exit {verb.returncode}: {verb.stderr.strip()[:120]}")
    for name, values in (("trigger", trigger), ("status", status)):
        if values:
            print(f"{label}: {name} over {len(values)} runs (ms): p50 {pick(values, .5):.1f} "
                  f"p99 {pick(values, .99):.1f} max {max(values):.1f}", flush=True)
    print(f"{label}: {len(failures)} failures{': ' + '; '.join(sorted(set(failures))[:4]) if failures else ''}",
          flush=True)
    return (pick(trigger, .99) if trigger else float("nan"),
            pick(status, .99) if status else float("nan"))


class IdleClients:
    """IDLE connections that never send a byte; one closed by the daemon is opened again."""

    def __init__(self, count):
        self.sockets = [self.connect() for _ in range(count)]
        self.stopping = False
        self.reopened = 0
        self.thread = threading.Thread(target=self.keep, daemon=True)
        self.thread.start()

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock)
        return s

    def keep(self):
        while not self.stopping:
            for i, s in enumerate(self.sockets):
                try:
                    if s.recv(4096, socket.MSG_DONTWAIT) is not None:  # answered or closed
                        s.close()
                        self.sockets[i] = self.connect()
                        self.reopened += 1
                except BlockingIOError:
                    pass
                except OSError:  # the daemon is gone: nothing to hold
                    return
            time.sleep(0.1)

    def close(self):
        self.stopping = True
        self.thread.join()
        for s in self.sockets:
            s.close()


daemon = subprocess.Popen([binary, "run", "--config", config], stderr=subprocess.DEVNULL)
watchers = []
try:
    deadline = time.monotonic() + 30
    while lines() == 0:
        if time.monotonic() > deadline:
            sys.exit("the daemon never ran the job")
        time.sleep(0.01)
    time.sleep(1)  # the first run has ended (a trigger while it runs starts nothing)
    alone = measure("alone")
    idle = IdleClients(args.idle)
    for _ in range(args.stopped_watchers):
        watcher = subprocess.Popen([binary, "status", "--watch", "--config", config],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        watchers.append(watcher)
    time.sleep(1)
    for watcher in watchers:
        watcher.send_signal(signal.SIGSTOP)
    held = measure(f"{args.idle} idle + {args.stopped_watchers} stopped watchers")
    print(f"idle connections re-opened after the daemon closed them: {idle.reopened}")
    idle.close()
    print(f"p99 ratio (held / alone): trigger {held[0] / alone[0]:.2f}, "
          f"status {held[1] / alone[1]:.2f}")
finally:
    for watcher in watchers:
        watcher.send_signal(signal.SIGCONT)
        watcher.kill()
        watcher.wait()
    daemon.terminate()
    daemon.wait(timeout=15)
    shutil.rmtree(work, ignore_errors=True)
