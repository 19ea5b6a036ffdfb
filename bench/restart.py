"""Timing a restart of the server: wait for the machine to go quiet first,
then read the start-up phases the server logged (bench.py's "start with N
tools", bench/startup.py)."""

import os
import re
import time


def cpu_jiffies():
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def wait_idle(limit=60.0, window=0.5, busy_share=0.1):
    """Wait until the machine's CPUs were busy for less than `busy_share` of
    a `window` (PostgreSQL or the S3 server may still be writing back what
    the runs before left them), at most `limit` seconds; return the
    seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        b0, a0 = cpu_jiffies()
        time.sleep(window)
        b1, a1 = cpu_jiffies()
        if (b1 - b0) < busy_share * max(1, a1 - a0):
            break
    return time.monotonic() - t0


def settle():
    """Before a timed restart: let the disk take what was written (the bench
    writes nginx's reference files, 100,000 of them at N = 100,000, just
    before) and the CPUs go quiet. Returns the seconds each took."""
    t0 = time.monotonic()
    os.sync()
    synced = time.monotonic() - t0
    return synced, wait_idle()


def start_phases(log_path, offset=0):
    """The start-up phases (ms) of the first "toolreg-server listening" line
    the server logged after `offset` (start, migrate, setup, fill: what came
    before the listener) and, once logged, of the "search index open" line
    that follows it (search: opening the index, which the server does while
    it already answers; search_ready: from the process's start)."""
    try:
        with open(log_path, errors="replace") as f:
            f.seek(offset)
            text = f.read()
    except OSError:
        return {}
    m = re.search(r"toolreg-server listening.*", text)
    if not m:
        return {}
    phases = {k: round(float(v), 1)
              for k, v in re.findall(r"\b(start|migrate|setup|fill)_ms=([0-9.]+)", m.group(0))}
    opened = re.search(r"search index open.*", text[m.end():])
    if opened:
        names = {"search": "search", "since_start": "search_ready"}
        phases.update({names[k]: round(float(v), 1)
                       for k, v in re.findall(r"\b(search|since_start)_ms=([0-9.]+)", opened.group(0))})
    return phases
