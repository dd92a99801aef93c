"""Shared pieces of the benchmarks: the stack launcher (`stack`), the load generator
(`load`) and the overall time limit (`limit`). The benches run as scripts
(`python bench/<name>.py`), so their own folder is on sys.path and they import `lib.…`."""
