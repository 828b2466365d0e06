"""Performance benchmarks (not tests): ``python -m bench --help``. See bench/README.md."""
