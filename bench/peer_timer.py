"""bench/peer_timer.py — the peers' timer, as bench/util.lua's: best of rounds, after one warm-up call."""
import time


def best(reps, fn, rounds=5):
    """Nanoseconds per call of fn: the best of `rounds` timings of `reps` calls."""
    fn()
    t = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t = min(t, (time.perf_counter() - t0) / reps)
    return t * 1e9
