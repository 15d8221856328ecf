#!/usr/bin/env python3
"""Durable dispatch with APScheduler 3.11: JOBS one-time no-op jobs (`date` trigger, due now) added
to a running BackgroundScheduler whose job store is an SQLAlchemyJobStore on an SQLite file, run
by a thread pool of WORKERS.

Usage (in the benchmark venv): apscheduler-dispatch.py --jobs N --workers W --output FILE.json

The store keeps SQLite's defaults (rollback journal, synchronous=FULL), so an added job is on
disk. Jobs never count as misfired (misfire_grace_time=None), so every one runs. The time is from
the first add_job to the last EVENT_JOB_EXECUTED.
"""
import argparse, json, shutil, sys, tempfile, threading, time

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED, EVENT_JOB_MISSED
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler

parser = argparse.ArgumentParser()
parser.add_argument("--jobs", type=int, default=10_000)
parser.add_argument("--workers", type=int, default=4)
parser.add_argument("--output")
args = parser.parse_args()


def noop():
    pass


work = tempfile.mkdtemp(prefix="apscheduler-dispatch-")
scheduler = BackgroundScheduler(
    jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{work}/jobs.sqlite")},
    executors={"default": ThreadPoolExecutor(args.workers)},
    job_defaults={"misfire_grace_time": None, "coalesce": False})
counts = {"executed": 0, "error": 0, "missed": 0}
lock = threading.Lock()
all_done = threading.Event()


def listener(event):
    with lock:
        kind = {EVENT_JOB_EXECUTED: "executed", EVENT_JOB_ERROR: "error",
                EVENT_JOB_MISSED: "missed"}[event.code]
        counts[kind] += 1
        if sum(counts.values()) == args.jobs:
            all_done.set()


scheduler.add_listener(listener, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED)
scheduler.start()
try:
    started = time.monotonic()
    for index in range(args.jobs):
        scheduler.add_job(noop, "date", id=f"job-{index}")
    enqueued = time.monotonic()
    if not all_done.wait(timeout=900):
        sys.exit(f"apscheduler: {counts} of {args.jobs} jobs finished within 900 s")
    finished_at = time.monotonic()
finally:
    scheduler.shutdown(wait=True)
    shutil.rmtree(work, ignore_errors=True)
if counts["error"] or counts["missed"]:
    sys.exit(f"apscheduler: not every job ran: {counts}")
result = {"jobs": args.jobs, "workers": args.workers, "enqueue_seconds": enqueued - started,
          "total_seconds": finished_at - started,
          "jobs_per_second": args.jobs / (finished_at - started)}
print(json.dumps(result))
if args.output:
    with open(args.output, "w") as f:
        json.dump(result, f)
