"""Benchmark for relay-search (issue 3): generator, original-design baseline, harness.

Run ``python -m bench.run --size-mb 50`` for a quick pass; see ``bench/README.md``.
"""
