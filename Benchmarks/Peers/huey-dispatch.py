#!/usr/bin/env python3
"""Durable dispatch with huey's SqliteHuey (immediate=False): JOBS one-time no-op tasks enqueued
and completed by a real consumer with WORKERS worker threads, the SQLite file on disk.

Usage (in the benchmark venv): huey-dispatch.py --jobs N --workers W --output FILE.json

huey's defaults: WAL journal and SQLite's default synchronous=FULL (a task that was enqueued is on
disk); the effective pragmas are recorded. The time is from the first enqueue to the last
completion (huey's SIGNAL_COMPLETE), with the consumer already running.
"""
import argparse, json, os, shutil, sys, tempfile, threading, time

from huey import SqliteHuey
from huey.signals import SIGNAL_COMPLETE, SIGNAL_ERROR

parser = argparse.ArgumentParser()
parser.add_argument("--jobs", type=int, default=10_000)
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--output")
args = parser.parse_args()

work = tempfile.mkdtemp(prefix="huey-dispatch-")
huey = SqliteHuey(filename=f"{work}/huey.db", immediate=False)
completed = 0
errors = 0
lock = threading.Lock()
all_done = threading.Event()


@huey.task()
def noop():
    pass


@huey.signal(SIGNAL_COMPLETE, SIGNAL_ERROR)
def finished(signal, task, *rest):
    global completed, errors
    with lock:
        completed += 1
        errors += signal == SIGNAL_ERROR
        if completed == args.jobs:
            all_done.set()


pragmas = {name: huey.storage.conn.execute(f"pragma {name}").fetchone()[0]
           for name in ("journal_mode", "synchronous")}
consumer = huey.create_consumer(workers=args.workers, worker_type="thread", periodic=False)
consumer.start()
try:
    started = time.monotonic()
    for _ in range(args.jobs):
        noop()
    enqueued = time.monotonic()
    if not all_done.wait(timeout=600):
        sys.exit(f"huey: {completed} of {args.jobs} tasks completed within 600 s")
    finished_at = time.monotonic()
finally:
    consumer.stop(graceful=True)
    shutil.rmtree(work, ignore_errors=True)
if errors:
    sys.exit(f"huey: {errors} tasks failed")
result = {"jobs": args.jobs, "workers": args.workers, "pragmas": pragmas,
          "enqueue_seconds": enqueued - started, "total_seconds": finished_at - started,
          "jobs_per_second": args.jobs / (finished_at - started)}
print(json.dumps(result))
if args.output:
    with open(args.output, "w") as f:
        json.dump(result, f)
