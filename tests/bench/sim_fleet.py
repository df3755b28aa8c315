"""A fleet of GPU hosts running one regression suite on a shared cache: a
discrete-event simulation of the cold start, to see what breaks first as the
fleet grows. Not a measurement of a fleet: the inputs below are measured on
this machine or assumed, and printed as such.

The hosts share out the suite's notebooks, run on their workers (one per GPU); a
notebook needs some artifacts; a worker that misses one takes its key's lock
on the shared file system (one round trip), and either compiles it or, when
another host holds the lock, waits and then loads it. Three policies:

- private: no shared cache, every kernel compiles what it uses;
- shared, no lock: a key is compiled by every worker that misses it before
  the first store lands;
- shared + lock: compile_lock.py's rule, each key compiled once.

    python tests/bench/sim_fleet.py
"""

import heapq
import random

# Inputs. Measured here: a kernel starts in 0.4 s; flyrt compiles of the project's kernels take
# 20 ms (a vector add) to 600 ms (PA decode, both variants); a warm start's load, 2 ms.
KERNEL_START_S = 0.4
COMPILE_S = (0.02, 0.6)
LOAD_S = 0.002
# Assumed: a suite of 2,000 notebooks over 400 distinct artifacts, each notebook using 6 of them
# and running 3 s of cells, sharded over the hosts; 8 GPUs per host; an NFS round trip (a lock,
# a stat, a rename) of 2 ms; an artifact of 0.3 MB on average (the project's objects are 50 KB to 1 MB).
NOTEBOOKS, ARTIFACTS, USES, CELLS_S = 2000, 400, 6, 3.0
WORKERS_PER_HOST, ROUND_TRIP_S, ARTIFACT_MB = 8, 0.002, 0.3


def suite(rng):
    compile_s = [rng.uniform(*COMPILE_S) for _ in range(ARTIFACTS)]
    uses = [rng.sample(range(ARTIFACTS), USES) for _ in range(NOTEBOOKS)]
    return compile_s, uses


def simulate(hosts, policy, compile_s, uses):
    """(suite wall seconds, compile seconds summed over the fleet, lock
    round trips, seconds waited on locks): the suite sharded over `hosts`,
    its notebooks dealt to their workers in turn. Events are single steps (a
    kernel start, one artifact, the cells), so whoever misses a key first in
    simulated time is the one that takes its lock."""
    stored_at = {}  # key -> when its object landed in the shared cache
    compiling_until = {}  # key -> when the lock holder stores it
    compile_total = round_trips = waited = 0.0
    workers = hosts * WORKERS_PER_HOST
    queues = [list(range(w, len(uses), workers)) for w in range(workers)]
    events = [(0.0, w, 0, -1) for w in range(workers) if queues[w]]  # (time, worker, notebook, step)
    heapq.heapify(events)
    finish = 0.0
    while events:
        now, w, i, step = heapq.heappop(events)
        keys = uses[queues[w][i]]
        if step == -1:
            now += KERNEL_START_S
        elif step < len(keys):
            key = keys[step]
            if policy == "private":
                now += compile_s[key]
                compile_total += compile_s[key]
            elif stored_at.get(key, float("inf")) <= now:
                now += ROUND_TRIP_S + LOAD_S  # a warm start finds it
            elif policy == "shared, no lock":
                now += ROUND_TRIP_S + compile_s[key]
                compile_total += compile_s[key]
                stored_at[key] = min(stored_at.get(key, now), now)
            else:
                round_trips += 1
                now += ROUND_TRIP_S
                if stored_at.get(key, float("inf")) <= now:  # stored while the lock was asked for
                    now += LOAD_S
                elif compiling_until.get(key, 0.0) > now:  # another worker holds the key's lock
                    waited += compiling_until[key] - now
                    now = compiling_until[key] + LOAD_S
                else:
                    now += compile_s[key]
                    compile_total += compile_s[key]
                    compiling_until[key] = stored_at[key] = now
        else:
            now += CELLS_S
            if i + 1 < len(queues[w]):
                heapq.heappush(events, (now, w, i + 1, -1))
            finish = max(finish, now)
            continue
        heapq.heappush(events, (now, w, i, step + 1))
    return finish, compile_total, round_trips, waited


def main():
    rng = random.Random(7)
    compile_s, uses = suite(rng)
    print(f"inputs: {NOTEBOOKS} notebooks, {ARTIFACTS} artifacts ({COMPILE_S[0] * 1e3:.0f}-{COMPILE_S[1] * 1e3:.0f} ms "
          f"to compile, {sum(compile_s):.1f} s in all), {WORKERS_PER_HOST} GPUs per host, {ROUND_TRIP_S * 1e3:.0f} ms "
          "file-system round trip (assumed)")
    print(f"{'hosts':>5}  {'policy':<16}  {'suite wall s':>12}  {'compile s (fleet)':>17}  {'lock trips':>10}  "
          f"{'lock wait s':>11}")
    for hosts in (1, 10, 100):
        for policy in ("private", "shared, no lock", "shared + lock"):
            wall, compiled, trips, waited = simulate(hosts, policy, compile_s, uses)
            print(f"{hosts:>5}  {policy:<16}  {wall:>12.1f}  {compiled:>17.1f}  {trips:>10.0f}  {waited:>11.1f}")
    print(f"cache size: {ARTIFACTS * ARTIFACT_MB:.0f} MB per version of the suite's code; the 4 GiB default holds "
          f"{4096 / (ARTIFACTS * ARTIFACT_MB):.0f} versions (branches x edits) before the least recently used go")


if __name__ == "__main__":
    main()
