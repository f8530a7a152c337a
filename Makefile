# llsvm: every target sets up .venv itself when it is missing (needs only python3 and a C compiler).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
BIN    := $(VENV)/bin
KERNELS := $(wildcard cext/*.pyx cext/*.pxd)

.PHONY: all data demo sklearn dask plot man install-man test fuzz bench reproduce-llsvm reproduce-streamsvm reproduce-h1tree reproduce-online reproduce-oned build wheel annotate clean distclean

all: build

$(PY):
	$(PYTHON) -m venv $(VENV)

# build tools, then the project in editable mode with its runtime dependencies only: the install compiles the
# kernels in place, once, on every core (setup.py)
$(VENV)/.installed: pyproject.toml setup.py | $(PY)
	$(PIP) install -q "setuptools>=77" wheel "Cython>=3.1" "numpy>=1.24"
	$(PIP) install -q --no-build-isolation -e .
	touch $@

# rebuild the kernels that changed since (nothing right after the install; LLSVM_CYTHON_DEBUG=1 make build: bounds
# checks on)
$(VENV)/.built: $(VENV)/.installed $(KERNELS)
	$(PY) setup.py -q build_ext --inplace
	touch $@

build: $(VENV)/.built

# the test extra (pyproject.toml), for make test and make fuzz only: make demo does not need it
$(VENV)/.test-deps: $(VENV)/.installed pyproject.toml
	$(PIP) install -q $$($(PY) scripts/extra_requirements.py test)
	touch $@

# an optional extra (pyproject.toml) into .venv after make: its requirements only (scripts/extra_requirements.py),
# not llsvm again, so the kernels are not rebuilt (pip install ".[sklearn]" would build and install llsvm anew):
# make sklearn (the scikit-learn estimators, llsvm.sklearn), make dask (--dask, llsvm.dask), make plot (--plot)
EXTRAS := sklearn dask plot
$(EXTRAS): $(VENV)/.installed
	$(PIP) install -q $$($(PY) scripts/extra_requirements.py $@)

# the commands' man pages, man/NAME.1 (groff man(7)), generated with docs/cli.md from the option rows
# (scripts/gen_docs.py; tracked and checked up to date by the tests, so make install-man needs no build and no
# .venv: make man after a change to the options); make install-man copies them to MANDIR,
# by default ~/.local/share/man/man1, which man reads when ~/.local/bin is on the PATH (else MANPATH); no root
# needed: PREFIX=/usr/local or MANDIR=DIR to put them elsewhere
PREFIX ?= $(HOME)/.local
MANDIR ?= $(PREFIX)/share/man/man1
man: $(VENV)/.installed
	$(PY) scripts/gen_docs.py

install-man:
	install -d $(MANDIR)
	install -m 644 man/*.1 $(MANDIR)/
	@echo "installed $(notdir $(wildcard man/*.1)) in $(MANDIR)"

# a wheel in dist/, built as pip install . builds it (isolated build environment, kernels compiled on every core)
wheel: | $(PY)
	$(PIP) wheel -q --no-deps -w dist .
	@ls dist/*.whl

# cython -a: HTML annotation of every kernel (yellow lines = Python interaction)
annotate: $(VENV)/.installed
	LLSVM_CYTHON_ANNOTATE=1 $(PY) setup.py -q build_ext --inplace --force
	@ls cext/*.html

include data/Makefile.mk

# the public LIBSVM sets the tests, benchmarks and reproduction scripts read (data/sets.tsv: public addresses at
# fixed commits, transforms, sha256), fetched and verified into data/public/NAME.xz + MANIFEST.tsv; a set already
# there and matching is skipped. Without internet: LLSVM_DATA_MIRROR=DIR make data (or DATA_ARGS="--mirror DIR")
# takes NAME.xz or NAME from a local copy instead. DATA_ARGS="a9a a9a.t" for some sets; scripts/fetch_data.py --help
FETCH_DATA := $(PY) scripts/fetch_data.py
data: | $(PY)
	$(FETCH_DATA) $(DATA_ARGS)

# the main job on a small generated set: convert, describe, train (from the binary file), predict
demo: build data/demo data/demo.t
	$(BIN)/llsvm-convert -q data/demo data/demo.bin
	$(BIN)/llsvm-convert --info data/demo.bin
	$(BIN)/llsvm-train -s 3 -B 1 data/demo.bin data/demo.model
	$(BIN)/llsvm-predict data/demo.t data/demo.model data/demo.predictions

# fetches the public sets first, best effort (a set that cannot be had is reported and its tests skip; CI sets
# LLSVM_DATA_MIRROR in .ci/run). The suite runs in TEST_JOBS processes (pytest-xdist), each test file in one of them
# (its module fixtures, such as the Dask tests' cluster, made once): 2 for CI's two cores; TEST_JOBS=1 runs it in
# this process, as plain pytest.
TEST_JOBS ?= 2
test: build $(VENV)/.test-deps
	$(FETCH_DATA) --best-effort -q $(DATA_ARGS)
	$(PY) -m pytest tests -q $(if $(filter-out 0 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile)

# mutation fuzzing (atheris) of the LIBSVM text parser, the binary reader and the model loader, each in its own
# process under a 2 GB memory limit; 60 s in all by default (make test runs a fixed number of inputs per target,
# tests/test_fuzz.py, so that its verdict does not depend on the machine's speed).
# FUZZ_ARGS="--time 600" for ten minutes, "--runs 400000 --jobs 2", "--targets binary", "--replay model FILE";
# the corpus and failing inputs go under fuzz-results/ (python -m fuzz --help)
fuzz: build $(VENV)/.test-deps
	$(PY) -m fuzz $(FUZZ_ARGS)

# parser / binary-load, solver, -s llsvm and -s streamsvm figures (BENCH_ARGS="--parts stream" for one part), on the
# generated sets and the public sets (fetched first, best effort); results under bench-results/
# Against the fastest peers (not in the default parts): BENCH_ARGS="--parts peers --peers" makes or updates their
# own venv, bench-results/peers-venv (snapml, vowpalwabbit, scikit-learn-intelex from PyPI; a peer that cannot be had
# is reported), then prints the ratios peer / llsvm of the same rounds: -s smo against oneDAL's SVC and svm-train,
# --threads 2 against Snap ML, out of core and conversion against Vowpal Wabbit ("--peers-scale small": a smoke run;
# scripts/bench_peers.py)
bench: build $(VENV)/.test-deps
	$(FETCH_DATA) --best-effort -q $(DATA_ARGS)
	$(PY) scripts/bench.py $(BENCH_ARGS)

# The five reproductions. Each writes under reproduce-results/<seed>/<target>/ (REPRODUCE_ARGS="--seed N"; default
# 1; a --quick run in reproduce-results/<seed>/<target>/quick/; a rerun replaces the files) and exits 1 when one of
# its acceptance figures (docs/solvers.md) fails, after a line naming them. REPRODUCE_ARGS="--quick" makes a smoke
# run, and then generates and fetches only the sets the smoke run reads.
REPRODUCE_QUICK := $(filter --quick,$(REPRODUCE_ARGS))

# the "reproduce" extra (matplotlib; libsvm-official and cvxopt, the optimum and the LIBSVM side of reproduce-oned and
# reproduce-online), installed once; the test extra is not needed
$(VENV)/.reproduce: $(VENV)/.installed pyproject.toml
	$(PIP) install -q $$($(PY) scripts/extra_requirements.py reproduce)
	touch $@

# Alrajeh et al.'s Figure 1 and Table 2 (-s llsvm --one-pass, the paper's algorithm, vs -s 3) and a table of
# -s llsvm's default mode (re-check passes: accuracy, primal against the tight -s 3, passes, time), on the generated
# sets and the public sets of data/public (fetched first, best effort: the rows of a set that cannot be had are left
# out); in reproduce-results/<seed>/llsvm/ (REPRODUCE_ARGS="--quick": the demo set and the public sets up to 10 MB)
reproduce-llsvm: build $(VENV)/.reproduce data/demo $(if $(REPRODUCE_QUICK),,data/sparse data/dense data/multiclass)
	$(FETCH_DATA) --best-effort -q $(DATA_ARGS)
	$(PY) scripts/reproduce_llsvm.py $(REPRODUCE_ARGS)

# Matsushima et al.'s Figures 3 and 4: (D* - D_t)/D* against wall-clock time for -s streamsvm, -s bm, -s llsvm and
# -s 3, and -s streamsvm for several --memory values, on the generated two-class sets (binary copies written to
# data/<set>.bin when missing); in reproduce-results/<seed>/streamsvm/ (REPRODUCE_ARGS="--quick": the demo set only;
# "--sets sparse": one set)
reproduce-streamsvm: build $(VENV)/.reproduce data/demo $(if $(REPRODUCE_QUICK),,data/sparse data/dense)
	$(PY) scripts/reproduce_streamsvm.py $(REPRODUCE_ARGS)

# Fehr et al.'s Tables 1-3 (H1-SVM trees against an RBF SVM: hyperplanes or SVs, training and classification time,
# accuracy, the ratios) on public stand-ins from data/public (usps.t 70/30, mushrooms, skin_nonskin, svmguide1,
# fetched first) and the fourclass node sequence as a PNG, with the acceptance figures A1-A5 (docs/solvers.md); in
# reproduce-results/<seed>/h1tree/ (REPRODUCE_ARGS="--quick": usps.t and mushrooms, one repeat)
H1TREE_SETS := usps.t mushrooms fourclass $(if $(REPRODUCE_QUICK),,skin_nonskin svmguide1 svmguide1.t)
reproduce-h1tree: build $(VENV)/.reproduce
	$(FETCH_DATA) -q $(H1TREE_SETS)
	$(PY) scripts/reproduce_h1tree.py $(REPRODUCE_ARGS)

# Kecman & Melki's Table II rows (reuters_moneyfx trn + tst from data/public, fetched first, best effort; the
# generated chessboard and two Gaussians; 5-fold grids, -s olsvm against -s smo and libsvm-official, CPU time),
# Figs. 1-8 (error and CPU time per cell; -s olsvm, norma --eta0 1 and pegaz, cached and --original, on the
# 4,992-row chessboard) and the C5 violation bound, with the acceptance figures C1-C5 (docs/solvers.md); in
# reproduce-results/<seed>/online/ (REPRODUCE_ARGS="--quick": the 4,992-row chessboard only, made in a temporary
# directory, 2 folds, 4 cells, nothing gated; "--parts reuters,threeway"; "--libsvm-cache FILE" keeps the LIBSVM
# cells for the next run: the full gaussians grid's LIBSVM side is long)
reproduce-online: build $(VENV)/.reproduce $(if $(REPRODUCE_QUICK),,data/chessboard data/gaussians)
	$(if $(REPRODUCE_QUICK),,$(FETCH_DATA) --best-effort -q reuters_moneyfx.trn reuters_moneyfx.tst)
	$(PY) scripts/reproduce_online.py $(REPRODUCE_ARGS)

# Schneider, Bogojeska & Vlachos' Table 2 rows (svmguide1, splice, diabetes, svmguide3, skin_nonskin from
# data/public, fetched first: training accuracy, smoothness theta and time to within 1 % against -s 3 --max-iter
# 2^k), Fig. 9 and ProjectSVM's accuracy against the number of directions as PNGs, with the acceptance figures B1-B5
# (docs/solvers.md; optimum: libsvm-official and cvxopt); in reproduce-results/<seed>/oned/
# (REPRODUCE_ARGS="--quick": 2^8 iterations, no skin_nonskin, B1 and B5 gated)
ONED_SETS := svmguide1 splice diabetes svmguide3 $(if $(REPRODUCE_QUICK),,skin_nonskin svmguide1.t)
reproduce-oned: build $(VENV)/.reproduce
	$(FETCH_DATA) -q $(ONED_SETS)
	$(PY) scripts/reproduce_oned.py $(REPRODUCE_ARGS)

clean:
	rm -rf build cext/*.c cext/*.html llsvm/_ext/*.so $(VENV)/.built

distclean: clean
	rm -rf $(VENV) bench-results fuzz-results dist *.egg-info
