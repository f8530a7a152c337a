# Data rules (included by the top Makefile). Generated sets come from scripts/gen_data.py (deterministic); the
# public LIBSVM sets the tests and reproduction scripts read come from `make data` (scripts/fetch_data.py, the
# addresses and checksums of data/sets.tsv, into data/public); the large sets below are downloaded when online.
# Nothing under data/ is committed but this file and sets.tsv.
GEN := $(PY) scripts/gen_data.py
LIBSVM_SITE := https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets

data/demo data/demo.t: scripts/gen_data.py | $(VENV)/.installed
	$(GEN) demo --out data/demo --test-out data/demo.t --seed 1 -q

# benchmark sets (scripts/bench.py makes them itself when missing; these rules are for doing it by hand)
data/sparse data/sparse.t: scripts/gen_data.py | $(VENV)/.installed
	$(GEN) sparse --out data/sparse --test-out data/sparse.t --test-rows 50000 --seed 1 -q
data/dense data/dense.t: scripts/gen_data.py | $(VENV)/.installed
	$(GEN) dense --out data/dense --test-out data/dense.t --test-rows 40000 --seed 2 -q
data/multiclass data/multiclass.t: scripts/gen_data.py | $(VENV)/.installed
	$(GEN) multiclass --out data/multiclass --test-out data/multiclass.t --test-rows 20000 --seed 3 -q

# the online-SVM paper's synthetic sets (issue 16)
data/chessboard data/chessboard.t: scripts/gen_data.py | $(VENV)/.installed
	$(GEN) chessboard --out data/chessboard --test-out data/chessboard.t --test-rows 2000 --seed 1 -q
data/gaussians data/gaussians.t: scripts/gen_data.py | $(VENV)/.installed
	$(GEN) gaussians --out data/gaussians --test-out data/gaussians.t --test-rows 3000 --seed 1 -q

# public LIBSVM sets (need a network connection): make data/rcv1_train.binary etc.
data/%.bz2:
	curl -fL --retry 3 -o $@.part $(LIBSVM_SITE)/binary/$*.bz2 && mv $@.part $@
data/%.xz:
	curl -fL --retry 3 -o $@.part $(LIBSVM_SITE)/binary/$*.xz && mv $@.part $@
data/rcv1_train.binary: data/rcv1_train.binary.bz2
	bunzip2 -kc $< > $@.part && mv $@.part $@
data/news20.binary: data/news20.binary.bz2
	bunzip2 -kc $< > $@.part && mv $@.part $@
data/real-sim: data/real-sim.bz2
	bunzip2 -kc $< > $@.part && mv $@.part $@
data/webspam_wc_normalized_unigram.svm: data/webspam_wc_normalized_unigram.svm.xz
	xz -dkc $< > $@.part && mv $@.part $@
