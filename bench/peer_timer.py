"""bench/peer_timer.py — the peers' timer, as bench/util.lua's: best of rounds, after one warm-up call.

PEER_ROUNDS in the environment sets the default number of rounds: bench/util.lua's
interleaved() runs a peer once per round, alternating with sk's own rounds."""
import os
import time

ROUNDS = int(os.environ.get("PEER_ROUNDS", "5"))


def best(reps, fn, rounds=None):
    """Nanoseconds per call of fn: the best of `rounds` (default PEER_ROUNDS) timings of `reps` calls."""
    rounds = rounds or ROUNDS
    fn()
    t = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        t = min(t, (time.perf_counter() - t0) / reps)
    return t * 1e9
