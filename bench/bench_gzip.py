"""The gzip level the client (``rrl``) compresses uploads at: seconds and bytes per level.

A run of about 5 MB (seeded: 95 needs x 1,000 documents with ClueWeb12 style doc ids,
scores with four decimals, one tag), written as ``rrl`` writes it, compressed at each
level with the standard library's ``gzip.compress`` (what ``rrl.trec.run_gzip`` calls).
Seconds are the median of ``--repeats`` runs; the ratio is the run's size over the
compressed size. The upload's time is compression plus sending: a level that saves a
few percent of bytes for ten times the CPU only pays off on a link slower than the
difference in bytes over the difference in seconds (printed as ``break-even``).
Usage::

    python bench/bench_gzip.py [--repeats 5] [--needs 95] [--depth 1000]
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import time


def synthetic_run(needs: int, depth: int, seed: int = 7) -> bytes:
    """A TREC run as ``rrl`` writes one: sorted by need, ranks 1.., scores descending."""
    rng = random.Random(seed)
    lines = []
    for need in range(needs):
        scores = sorted((rng.uniform(0, 30) for _ in range(depth)), reverse=True)
        for rank, score in enumerate(scores, 1):
            doc = f"clueweb12-{rng.randrange(20):02d}{rng.randrange(20):02d}wb-{rng.randrange(100):02d}-{rng.randrange(30000):05d}"
            lines.append(f"{201 + need} Q0 {doc} {rank} {score:.4f} bm25-rm3\n")
    return "".join(lines).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--needs", type=int, default=95)
    parser.add_argument("--depth", type=int, default=1000)
    args = parser.parse_args()
    run = synthetic_run(args.needs, args.depth)
    print(f"run: {len(run):,} bytes ({args.needs} needs x {args.depth})")
    print("| level | seconds | bytes | ratio |")
    print("|---:|---:|---:|---:|")
    figures = {}
    for level in range(1, 10):
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            packed = gzip.compress(run, compresslevel=level, mtime=0)
            times.append(time.perf_counter() - started)
        assert gzip.decompress(packed) == run
        figures[level] = (statistics.median(times), len(packed))
        seconds, size = figures[level]
        print(f"| {level} | {seconds:.3f} | {size:,} | {len(run) / size:.1f} |")
    for level in (6, 9):
        (fast, small), (slow, smaller) = figures[1], figures[level]
        rate = (small - smaller) / max(slow - fast, 1e-9) / 1e6
        print(f"break-even 1 vs {level}: level {level} pays off below {rate:.1f} MB/s upstream")


if __name__ == "__main__":
    main()
