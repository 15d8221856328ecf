#!/usr/bin/env python3
"""Soak and fault tests of a real `backgrounder` daemon; run through Tests/soak/run.sh.

Three parts, each printing `soak: <part>: ...` result lines and failing with a message naming
what did not hold:

- kill: `kill -9` of the daemon at random moments while one-time jobs are scheduled through
  the CLI and periodic jobs run; then every accepted job succeeded with its completion
  recorded once, no periodic cycle ran twice, and `PRAGMA integrity_check` is ok.
- flood: veth pairs, addresses and routes created and deleted in bursts in a private network
  namespace while `status --watch --json` runs there; afterwards its last line equals the
  kernel's links and default routes, and the receive-buffer overruns are counted.
- store: the store on a full file system, on a read-only one, replaced while the daemon runs,
  overwritten with garbage, and the config deleted while the daemon runs: clear errors, no
  crash, nothing accepted lost.
"""

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

PERIODIC_INTERVAL = 60  # the smallest `every` the config accepts (1m)


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def log(part, message):
    print(f"soak: {part}: {message}", flush=True)


# MARK: - Daemon harness


class Daemon:
    """One configuration directory and the daemon processes started on it."""

    started = []  # every daemon process, killed at exit if still running

    def __init__(self, binary, directory, jobs_toml="", max_concurrent=4, store_path=None):
        self.binary = binary
        self.directory = directory
        self.store = store_path or os.path.join(directory, "state", "state.sqlite")
        self.socket = os.path.join(directory, "run", "control.sock")
        self.config = os.path.join(directory, "config.toml")
        self.output = open(os.path.join(directory, "daemon.log"), "ab")
        self.process = None
        self.starts = 0
        os.makedirs(os.path.join(directory, "run"), mode=0o700, exist_ok=True)
        with open(self.config, "w") as file:
            file.write(
                f'[store]\npath = "{self.store}"\n[control]\nsocket = "{self.socket}"\n'
                f"[daemon]\nmax-concurrent = {max_concurrent}\n{jobs_toml}")

    def start(self, wait=True):
        self.starts += 1
        self.output.write(f"--- start {self.starts}\n".encode())
        self.output.flush()
        self.process = subprocess.Popen(
            [self.binary, "run", "--config", self.config],
            stdout=self.output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        Daemon.started.append(self.process)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            check(self.process.poll() is None,
                  f"daemon exited with {self.process.returncode} while starting: {self.tail()}")
            if os.path.exists(self.socket):
                result = self.cli("status", "--json", timeout=30)
                if result.returncode == 0 and json.loads(result.stdout)["daemon"]["running"]:
                    return
            time.sleep(0.05)
        raise Failure(f"daemon not ready after {timeout} s: {self.tail()}")

    def kill9(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self, timeout=20):
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise Failure(f"daemon did not exit within {timeout} s of SIGTERM")

    def cli(self, *arguments, timeout=60):
        return subprocess.run(
            [self.binary, arguments[0], "--config", self.config, *arguments[1:]],
            capture_output=True, text=True, timeout=timeout)

    def tail(self, lines=15):
        self.output.flush()
        with open(os.path.join(self.directory, "daemon.log"), "rb") as file:
            text = file.read().decode(errors="replace").splitlines()
        return "\n".join(text[-lines:])

    def query(self, sql):
        connection = sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=30)
        try:
            return connection.execute(sql).fetchall()
        finally:
            connection.close()

    def integrity(self):
        result = subprocess.run(
            ["sqlite3", self.store, "PRAGMA integrity_check"], capture_output=True, text=True)
        return result.stdout.strip() or result.stderr.strip()


refused_starts = 0


def restart_like_systemd(daemon):
    """Starts the daemon again, retrying after 1 s (systemd's `Restart=`) if `run` exits 1
    saying another daemon uses the store. Offline CLI edits give way to a starting daemon, so
    the kill part requires that this never happened."""
    global refused_starts
    for _ in range(30):
        try:
            daemon.start()
            return
        except Failure as failure:
            if "another backgrounder daemon is using" not in str(failure):
                raise
            refused_starts += 1
            time.sleep(1)
    raise Failure("daemon could not start again within 30 attempts")


def job_script(logfile, seconds):
    """A command that logs its start (task, attempt, time) and its end to `logfile`."""
    return [
        "/bin/sh", "-c",
        f'echo "$BACKGROUNDER_TASK_ID $BACKGROUNDER_ATTEMPT start $(date +%s.%N)" >> {logfile}; '
        f"sleep {seconds}; "
        f'echo "$BACKGROUNDER_TASK_ID $BACKGROUNDER_ATTEMPT done $(date +%s.%N)" >> {logfile}']


# MARK: - kill -9


def kill_soak(binary, root, kills, one_time, periodic, seconds):
    directory = tempfile.mkdtemp(prefix="kill-", dir=root)
    logfile = os.path.join(directory, "jobs.log")
    periodic_ids = [f"soak.periodic-{index}" for index in range(periodic)]
    jobs = "".join(
        f'[[job]]\nid = "{task}"\ncommand = {json.dumps(job_script(logfile, 0.2))}\n'
        f'every = "1m"\nbackoff = {{ policy = "linear", initial = "10s", max-attempts = 30 }}\n'
        for task in periodic_ids)
    daemon = Daemon(binary, directory, jobs, max_concurrent=8)
    daemon.start()
    began = time.monotonic()
    accepted, refused = [], []
    lock = threading.Lock()

    def schedule(indices):
        for index in indices:
            task = f"soak.once-{index}"
            result = daemon.cli(
                "schedule", task, "--once", "--backoff", "linear", "--backoff-initial", "10s",
                "--max-attempts", "30", "--command", *job_script(logfile, 0.05))
            with lock:
                if result.returncode == 0:
                    accepted.append(task)
                else:
                    check(result.returncode == 1 and result.stderr.strip(),
                          f"schedule {task}: exit {result.returncode} without a message")
                    refused.append((task, result.stderr.strip().splitlines()[-1]))

    # Four callers: while the daemon restarts, their offline edits hold the store lock back to
    # back, and the starting daemon must still get it (edits give way to a starting daemon).
    schedulers = [threading.Thread(target=schedule, args=(range(one_time)[part::4],))
                  for part in range(4)]
    for thread in schedulers:
        thread.start()
    rng = random.Random(os.environ.get("SOAK_SEED", time.time_ns()))
    spacing = seconds / kills
    for kill in range(kills):
        time.sleep(rng.uniform(0.2 * spacing, 1.8 * spacing))
        daemon.kill9()
        restart_like_systemd(daemon)
    for thread in schedulers:
        thread.join()
    log("kill", f"{kills} kills in {time.monotonic() - began:.0f} s; "
        f"{len(accepted)} one-time jobs accepted, {len(refused)} refused")
    for task, reason in refused[:5]:
        log("kill", f"  refused {task}: {reason}")
    # Quiescence: every accepted one-time job finished and nothing is running.
    deadline = time.monotonic() + 240
    while True:
        states = dict(daemon.query("SELECT id, state FROM task"))
        waiting = [task for task in accepted if states.get(task) not in ("succeeded", "failed")]
        running = [task for task, state in states.items() if state == "running"]
        if not waiting and not running:
            break
        check(time.monotonic() < deadline,
              f"not quiescent after 240 s: {len(waiting)} one-time jobs unfinished "
              f"(e.g. {waiting[:3]}), {len(running)} running")
        time.sleep(0.5)
    status = daemon.stop()
    check(status == 0, f"daemon exited {status} on SIGTERM: {daemon.tail()}")
    states = dict(daemon.query("SELECT id, state FROM task"))
    successes = dict(daemon.query(
        "SELECT taskId, COUNT(*) FROM run WHERE outcome = 'success' GROUP BY taskId"))
    runs = parse_job_log(logfile)
    not_succeeded = [task for task in accepted if states.get(task) != "succeeded"]
    check(not not_succeeded, f"accepted jobs not succeeded: {not_succeeded[:5]}")
    missing = [task for task in accepted if not any(r[2] == "done" for r in runs.get(task, []))]
    check(not missing, f"accepted jobs never ran to the end: {missing[:5]}")
    recorded_twice = [task for task in accepted if successes.get(task, 0) != 1]
    check(not recorded_twice,
          f"completion not recorded exactly once: "
          f"{[(task, successes.get(task, 0)) for task in recorded_twice[:5]]}")
    reruns = sum(
        1 for task in accepted
        if sum(1 for r in runs.get(task, []) if r[2] == "done") > 1)
    check(refused_starts == 0,
          f"{refused_starts} daemon starts refused while CLI edits held the store lock")
    duplicates, cycles = periodic_duplicates(runs, periodic_ids)
    check(not duplicates, f"periodic cycles that ran twice: {duplicates[:5]}")
    integrity = daemon.integrity()
    check(integrity == "ok", f"PRAGMA integrity_check: {integrity}")
    log("kill", f"ok: {len(accepted)} accepted one-time jobs all succeeded, each completion "
        f"recorded once ({reruns} ran again after a kill: at-least-once); {cycles} periodic "
        f"cycles, 0 ran twice; integrity_check ok; daemon restarted {daemon.starts - 1} times "
        f"({refused_starts} starts refused while a CLI edit held the store lock)")


def parse_job_log(logfile):
    """task -> [(attempt, time, "start"/"done")] in log order."""
    runs = {}
    if not os.path.exists(logfile):
        return runs
    with open(logfile) as file:
        for line in file:
            fields = line.split()
            if len(fields) != 4:
                continue  # a line cut by kill -9 of its job
            task, attempt, what, stamp = fields
            runs.setdefault(task, []).append((int(attempt), float(stamp), what))
    return runs


def periodic_duplicates(runs, periodic_ids):
    """A cycle starts with attempt 0; attempts after an interruption continue it. A cycle ran
    twice when an attempt number repeats within it, or when a new cycle started less than an
    interval after the previous one (its claim was not durable before the run)."""
    duplicates, cycles = [], 0
    for task in periodic_ids:
        starts = sorted((stamp, attempt) for attempt, stamp, what in runs.get(task, [])
                        if what == "start")
        previous_start, seen = None, set()
        for stamp, attempt in starts:
            if attempt == 0:
                cycles += 1
                if previous_start is not None and stamp - previous_start < PERIODIC_INTERVAL - 1:
                    duplicates.append((task, "new cycle after", round(stamp - previous_start, 2)))
                previous_start, seen = stamp, set()
            if attempt in seen:
                duplicates.append((task, "attempt repeated", attempt))
            seen.add(attempt)
    return duplicates, cycles


# MARK: - netlink flood


def ip(namespace, *arguments, batch=None, check_status=True):
    result = subprocess.run(
        ["ip", "-n", namespace, *arguments], input=batch, capture_output=True, text=True)
    if check_status and result.returncode != 0:
        raise Failure(f"ip {' '.join(arguments)}: {result.stderr.strip()}")
    return result.stdout


def flood_batch(pairs, rounds_offset, routes_per_link, create):
    """`ip -batch` lines creating (or deleting) `pairs` veth pairs with addresses and routes."""
    lines = []
    for index in range(pairs):
        name = f"f{rounds_offset}x{index}"
        if create:
            lines += [f"link add {name}a type veth peer name {name}b",
                      f"link set {name}a up", f"link set {name}b up",
                      f"address add 10.{100 + index // 250}.{index % 250}.1/24 dev {name}a"]
            # /32 routes unique across links (index and index + 250 share the third octet).
            lines += [f"route add 172.{16 + route % 16}.{index % 250}."
                      f"{16 * (index // 250) + route // 16}/32 "
                      f"dev {name}a" for route in range(routes_per_link)]
            lines.append(f"route add default via 10.{100 + index // 250}.{index % 250}.2 "
                         f"dev {name}a metric {1000 + index}")
        else:
            lines.append(f"link del {name}a")
    return "\n".join(lines) + "\n"


def kernel_view(namespace):
    links = json.loads(ip(namespace, "-j", "link", "show"))
    addresses = json.loads(ip(namespace, "-j", "-4", "address", "show"))
    routes = json.loads(ip(namespace, "-j", "-4", "route", "show", "default"))
    with_global = {
        entry["ifindex"] for entry in addresses
        if any(a.get("scope") == "global" for a in entry.get("addr_info", []))}
    routed = {}
    for route in routes:
        if route.get("type", "unicast") == "unicast" and "dev" in route:
            routed.setdefault(route["dev"], []).append(route.get("metric", 0))
    view = {}
    for link in links:
        flags = link.get("flags", [])
        usable = "UP" in flags and "LOWER_UP" in flags and link.get("link_type") != "loopback"
        view[link["ifindex"]] = {
            "name": link["ifname"], "up": "UP" in flags, "carrier": "LOWER_UP" in flags,
            "defaultRoute": usable and link["ifindex"] in with_global and link["ifname"] in routed}
    best = sorted(
        (min(routed[v["name"]]), index) for index, v in view.items() if v["defaultRoute"])
    return view, (view[best[0][1]]["name"] if best else None)


def monitor_view(status):
    network = status["network"] if "network" in status else status
    view = {
        link["index"]: {"name": link["name"], "up": link["up"], "carrier": link["carrier"],
                        "defaultRoute": link["defaultRoute"]}
        for link in network["links"]}
    return view, network["primary"], network.get("netlinkOverruns")


class Watcher:
    """`status --watch --json` in the namespace; keeps the latest network status it printed."""

    def __init__(self, binary, namespace, config):
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, binary, "status", "--watch", "--json",
             "--config", config],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.latest = None
        self.lines = 0
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.process.stdout:
            document = json.loads(line)
            if "network" in document:
                self.latest = document
                self.lines += 1

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


def flood(binary, root, rounds, pairs, routes_per_link, kept):
    namespace = f"bg-soak-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    directory = tempfile.mkdtemp(prefix="flood-", dir=root)
    daemon = Daemon(binary, directory)  # only its config: no daemon runs here
    watcher = None
    try:
        ip(namespace, "link", "set", "lo", "up")
        watcher = Watcher(binary, namespace, daemon.config)
        deadline = time.monotonic() + 30
        while watcher.latest is None:
            if watcher.process.poll() is not None:
                raise Failure(f"status --watch exited: {watcher.process.stderr.read()}")
            check(time.monotonic() < deadline, "status --watch printed nothing in 30 s")
            time.sleep(0.05)
        began = time.monotonic()
        changes = 0
        for round_index in range(rounds):
            create = flood_batch(pairs, round_index, routes_per_link, True)
            # The monitor's thread keeps up with `ip -batch` into its 4 MiB buffer, so the
            # watcher is stopped during the last round's burst: the kernel must drop events.
            if round_index == rounds - 1:
                natural_overruns = monitor_view(watcher.latest)[2] or 0
                watcher.process.send_signal(signal.SIGSTOP)
                ip(namespace, "-batch", "-", batch=create)
                ip(namespace, "-batch", "-", batch=flood_batch(pairs, round_index, 0, False))
                changes += create.count("\n") + pairs
            ip(namespace, "-batch", "-", batch=create)
            ip(namespace, "-batch", "-", batch=flood_batch(pairs - kept if round_index == rounds - 1
                                                          else pairs, round_index, 0, False))
            changes += create.count("\n") + pairs
            watcher.process.send_signal(signal.SIGCONT)
        elapsed = time.monotonic() - began
        # Settle: the watcher's last line must come to equal the kernel's state.
        deadline = time.monotonic() + 60
        while True:
            kernel, kernel_primary = kernel_view(namespace)
            links, primary, overruns = monitor_view(watcher.latest)
            if links == kernel and primary == kernel_primary:
                break
            if time.monotonic() > deadline:
                differing = {i: (links.get(i), kernel.get(i))
                             for i in set(links) | set(kernel) if links.get(i) != kernel.get(i)}
                raise Failure(
                    f"monitor differs from the kernel 60 s after the flood: primary "
                    f"{primary} vs {kernel_primary}; links {list(differing.items())[:5]}")
            time.sleep(0.2)
        check(watcher.process.poll() is None, "status --watch exited during the flood")
        check(overruns is not None, "status --json has no network.netlinkOverruns")
        check(overruns > 0, "the flood did not overrun the monitor's receive buffer")
        log("flood", f"ok: {changes} netlink changes in {rounds} rounds ({elapsed:.1f} s); "
            f"{overruns} receive-buffer overruns (ENOBUFS; {natural_overruns} before the watcher "
            f"was stopped) counted and recovered; final state "
            f"equal to the kernel's: {len(kernel)} links, "
            f"{sum(v['defaultRoute'] for v in kernel.values())} with a usable default route, "
            f"primary {kernel_primary}")
    finally:
        if watcher:
            watcher.stop()
        subprocess.run(["ip", "netns", "del", namespace])


# MARK: - store faults


def mount_tmpfs(path, size):
    os.makedirs(path, mode=0o700, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", path],
                   check=True)


def expect_refused(daemon, task, words, logfile):
    result = daemon.cli("schedule", task, "--once", "--command", *job_script(logfile, 0))
    check(result.returncode == 1,
          f"schedule {task} exited {result.returncode} ({result.stderr.strip()}): expected 1")
    message = result.stderr.strip()
    check(any(word in message.lower() for word in words),
          f"schedule {task}: error does not say {words[0]}: {message!r}")
    return message


def expect_accepted(daemon, task, logfile):
    result = daemon.cli("schedule", task, "--once", "--command", *job_script(logfile, 0))
    check(result.returncode == 0, f"schedule {task} failed: {result.stderr.strip()}")


def wait_succeeded(daemon, tasks, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        states = dict(daemon.query("SELECT id, state FROM task"))
        waiting = [task for task in tasks if states.get(task) != "succeeded"]
        if not waiting:
            return
        check(time.monotonic() < deadline,
              f"accepted jobs not succeeded after {timeout} s: "
              f"{[(task, states.get(task)) for task in waiting[:5]]}")
        time.sleep(0.2)


def start_refused(daemon):
    """Starts the daemon expecting it to exit; returns its status and last line."""
    daemon.start(wait=False)
    try:
        code = daemon.process.wait(30)
    except subprocess.TimeoutExpired:
        raise Failure(f"daemon did not exit on a bad store: {daemon.tail()}")
    return code, daemon.tail(1)


def store_faults(binary, root):
    directory = tempfile.mkdtemp(prefix="store-", dir=root)
    mount = os.path.join(directory, "small")
    mount_tmpfs(mount, "4m")
    logfile = os.path.join(directory, "jobs.log")
    try:
        daemon = Daemon(binary, directory, store_path=os.path.join(mount, "state.sqlite"))
        daemon.start()
        accepted = []
        for index in range(5):
            expect_accepted(daemon, f"soak.before-{index}", logfile)
            accepted.append(f"soak.before-{index}")
        wait_succeeded(daemon, accepted)
        # Full disk.
        filler = os.path.join(mount, "filler")
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"], capture_output=True)
        message = expect_refused(daemon, "soak.full", ["full", "space"], logfile)
        check(daemon.process.poll() is None, f"daemon died on a full disk: {daemon.tail()}")
        store_error = json.loads(daemon.cli("status", "--json").stdout)["daemon"].get("storeError")
        check(store_error, "status --json shows no daemon.storeError on a full disk")
        log("store", f"full disk: schedule exits 1: {message!r}; daemon.storeError {store_error!r}")
        os.remove(filler)
        expect_accepted(daemon, "soak.after-full", logfile)
        accepted.append("soak.after-full")
        wait_succeeded(daemon, accepted)
        status = json.loads(daemon.cli("status", "--json").stdout)["daemon"]
        check(not status.get("storeError"), f"storeError still shown after a good write: {status}")
        # Read-only file system. The kernel refuses to remount a file system read-only while a
        # file on it is open for writing (the daemon's store), so the daemon is stopped first:
        # `run` and an offline `schedule` must both refuse it clearly.
        check(daemon.stop() == 0, f"daemon did not stop cleanly: {daemon.tail()}")
        subprocess.run(["mount", "-o", "remount,ro", mount], check=True)
        read_only = ["read-only", "readonly", "read only"]
        message = expect_refused(daemon, "soak.readonly", read_only, logfile)
        log("store", f"read-only, no daemon: schedule exits 1: {message!r}")
        code, reason = start_refused(daemon)
        check(code == 1 and any(word in reason.lower() for word in read_only),
              f"daemon on a read-only store: exit {code}, {reason!r}")
        log("store", f"read-only: run exits 1: {reason!r}")
        subprocess.run(["mount", "-o", "remount,rw", mount], check=True)
        daemon.start()
        expect_accepted(daemon, "soak.after-readonly", logfile)
        accepted.append("soak.after-readonly")
        wait_succeeded(daemon, accepted)
        # Config deleted while running: the daemon keeps its configuration, a reload says why
        # it failed, verbs that need the file say so.
        saved = daemon.config + ".saved"
        os.rename(daemon.config, saved)
        daemon.process.send_signal(signal.SIGHUP)
        time.sleep(1)
        check(daemon.process.poll() is None, f"daemon died reloading a deleted config: "
              f"{daemon.tail()}")
        result = daemon.cli("schedule", "soak.noconfig", "--once", "--command", "true")
        check(result.returncode == 1 and "config" in result.stderr.lower(),
              f"schedule without its config: exit {result.returncode}: {result.stderr.strip()!r}")
        log("store", f"config deleted: daemon stays up; schedule exits 1: "
            f"{result.stderr.strip().splitlines()[-1]!r}")
        os.rename(saved, daemon.config)
        # The store replaced while the daemon runs: the next write is refused naming the file,
        # the daemon exits non-zero (systemd would start it on the new file), and the file it
        # had open, put back, holds everything it accepted.
        os.rename(daemon.store, daemon.store + ".open")
        with open(daemon.store + ".garbage", "wb") as file:
            file.write(os.urandom(65536))
        os.rename(daemon.store + ".garbage", daemon.store)
        message = expect_refused(daemon, "soak.replaced", ["replaced"], logfile)
        try:
            code = daemon.process.wait(30)
        except subprocess.TimeoutExpired:
            raise Failure(f"daemon still running 30 s after its store was replaced: "
                          f"{daemon.tail()}")
        check(code not in (0, None) and daemon.store in daemon.tail(5),
              f"daemon with a replaced store: exit {code}, {daemon.tail(5)!r}")
        log("store", f"replaced while running: schedule exits 1: {message!r}; daemon exits "
            f"{code}")
        os.rename(daemon.store + ".open", daemon.store)
        daemon.start()
        # Garbage in place of the store: refused with a clear error, never rewritten, and the
        # good file put back works with everything accepted.
        check(daemon.stop() == 0, f"daemon did not stop cleanly: {daemon.tail()}")
        before = dict(daemon.query("SELECT id, state FROM task"))
        check(all(before.get(task) == "succeeded" for task in accepted),
              f"accepted jobs lost: {before}")
        shutil.copy(daemon.store, daemon.store + ".good")
        with open(daemon.store + ".garbage", "wb") as file:
            file.write(os.urandom(65536))
        os.rename(daemon.store + ".garbage", daemon.store)
        damaged = ["malformed", "not a database", "corrupt", "damaged"]
        message = expect_refused(daemon, "soak.garbage", damaged, logfile)
        log("store", f"garbage store, no daemon: schedule exits 1: {message!r}")
        code, reason = start_refused(daemon)
        check(code == 1 and "store" in reason.lower(),
              f"daemon on a garbage store: exit {code}, {reason!r}")
        log("store", f"garbage store: run exits 1: {reason!r}")
        os.rename(daemon.store + ".good", daemon.store)
        daemon.start()
        expect_accepted(daemon, "soak.after-garbage", logfile)
        accepted.append("soak.after-garbage")
        wait_succeeded(daemon, accepted)
        check(daemon.stop() == 0, f"daemon did not stop cleanly: {daemon.tail()}")
        log("store", f"ok: {len(accepted)} accepted jobs all succeeded across the faults")
    finally:
        subprocess.run(["umount", "-l", mount])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--short", action="store_true")
    mode.add_argument("--long", action="store_true")
    parser.add_argument("--only", default="kill,flood,store")
    options = parser.parse_args()
    binary = os.path.abspath(options.binary)
    parts = options.only.split(",")
    root = tempfile.mkdtemp(prefix="backgrounder-soak-")
    began = time.monotonic()
    try:
        if "store" in parts:
            store_faults(binary, root)
        if "flood" in parts:
            if options.long:
                flood(binary, root, rounds=10, pairs=300, routes_per_link=10, kept=20)
            else:
                flood(binary, root, rounds=3, pairs=200, routes_per_link=5, kept=10)
        if "kill" in parts:
            if options.long:
                kill_soak(binary, root, kills=50, one_time=500, periodic=20, seconds=300)
            else:
                kill_soak(binary, root, kills=10, one_time=500, periodic=20, seconds=70)
    except Failure as failure:
        print(f"soak: FAILED: {failure}\n  (files kept in {root})", file=sys.stderr)
        return 1
    finally:
        for process in Daemon.started:
            if process.poll() is None:
                process.kill()
                process.wait()
    shutil.rmtree(root, ignore_errors=True)
    print(f"soak: all passed in {time.monotonic() - began:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
