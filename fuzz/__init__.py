"""Fuzzing llsvm's readers (issue 13, "Reliability"): `make fuzz` / `python -m fuzz`.

The targets run under atheris, a coverage-guided libFuzzer mutation fuzzer for Python, each in its own process
under a memory limit:

- text (fuzz.targets.check_text): LIBSVM text, read in memory and streamed with tiny chunks, 0- and 1-based, float64
  and float32, compressed or not, against an independent reference reader (fuzz.reference);
- binary (fuzz.targets.check_binary): llsvm's binary data format, mutated with valid checksums
  (fuzz.mutators), through --info, verify, streaming, copying, mapping and a rewrite;
- model (fuzz.targets.check_model): model files (LIBLINEAR's format, the hashed format, LIBSVM's kernel
  models, -s h1tree's tree models), checked, saved, reloaded and used to predict; refusals must name the line;
- options (fuzz.options.check_options): llsvm-train's options with hostile values (NaN, infinities, 0, negative,
  huge, tiny, text) on a tiny file, in-process, then llsvm-predict on every model written.

Seeds are generated (fuzz.seeds); fuzz/regressions/<target>/ holds the reproducers of bugs found so far, run
first every time. fuzz/runner.py is the command line; fuzz/worker.py one fuzzing process.
"""
