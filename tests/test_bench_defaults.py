"""`make bench` part `defaults` (scripts/bench_defaults.py), what does not depend on the machine's speed: the
command lines of every cell (LIBSVM's numbering), the sets it takes from data/sets.tsv, the generated 200-class
set, how a failing, refused or timed-out command is reported, and one small run against stand-in reference
commands. The figures are the part's, never a test's verdict."""
import os
import stat
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import bench_defaults as BD  # noqa: E402
import fetch_data  # noqa: E402

import llsvm  # noqa: E402


def test_every_type_and_its_reference_command():
    cells = {}
    for solver in BD.solvers_selected():
        for flagged in (False, True):
            ours, ref = BD.commands(solver, flagged, "SET", "A", "B", "llsvm-train", "REF")
            cells[" ".join(ours)] = " ".join(ref)
    assert len(cells) == 2 * (12 + 5)
    for n in ("0", "1", "2", "3", "4", "5", "6", "7", "11", "12", "13", "21"):
        assert cells[f"llsvm-train -s {n} SET A"] == f"REF/train -s {n} SET B"
        assert cells[f"llsvm-train -s {n} -B 1 SET A"] == f"REF/train -s {n} -B 1 SET B"
    # svm-train -s: 0 C-SVC, 1 nu-SVC, 2 one-class, 3 epsilon-SVR, 4 nu-SVR
    for name, n in (("smo", 0), ("nu_svc", 1), ("one_class", 2), ("epsilon_svr", 3), ("nu_svr", 4)):
        assert cells[f"llsvm-train -s {name} SET A"] == f"REF/svm-train -s {n} SET B"
        assert cells[f"llsvm-train -s {name} -b 1 SET A"] == f"REF/svm-train -s {n} -b 1 SET B"


def test_which_models_should_be_the_same_file():
    same = {(s, f) for s in BD.solvers_selected() for f in (False, True) if BD.deterministic(s, f)}
    assert same == ({(s, f) for s in ("0", "2", "11", "21") for f in (False, True)}
                    | {(s, False) for s in BD.LIBSVM_TYPES} | {("one_class", True)})


def test_solver_selection():
    assert BD.solvers_selected("libsvm") == ("smo", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
    assert BD.solvers_selected("nu_svr,2,liblinear")[-1] == "nu_svr"
    assert BD.solvers_selected("smo,0") == ("0", "smo")
    with pytest.raises(ValueError, match="unknown solver '8'"):
        BD.solvers_selected("8")


def test_the_sets_of_the_table():
    """The training files of data/sets.tsv: a test half beside its training file is left out, one that comes
    alone is in."""
    names = BD.public_sets(fetch_data.read_sets(fetch_data.SETS))
    assert {"a9a", "heart_scale", "skin_nonskin", "reuters_moneyfx.trn", "news20.t", "usps.t"} <= set(names)
    assert not {"a9a.t", "dna.scale.t", "splice.t", "svmguide1.t", "reuters_moneyfx.tst"} & set(names)


def test_the_generated_200_class_set(tmp_path):
    path = BD.write_generated("200-classes", str(tmp_path / "c200"))
    with open(path) as f:
        assert f.read() == "".join("%d 1:%g\n" % (i, i / 100) for i in range(200))
    ds = llsvm.read_dataset(path)
    assert (ds.n_rows, ds.n_features, len(ds.labels)) == (200, 1, 200)


def test_failures_and_time_outs_are_reported():
    ok = ["true"]
    refused = ["sh", "-c", "echo 'ERROR: no' >&2; exit 1"]
    m = BD.measure(ok, refused, repeats=3, timeout=30)
    assert m["llsvm"]["status"] == "ok" and len(m["llsvm"]["runs"]) == 1      # no more rounds once a side fails
    assert m["ref"] == {"status": "failed", "rc": 1, "message": "ERROR: no"}
    m = BD.measure(["sleep", "30"], ok, repeats=3, timeout=0.3)
    assert m["llsvm"]["status"] == "timeout" and m["ref"]["status"] == "ok"
    m = BD.measure(ok, ok, repeats=3, timeout=30)
    assert len(m["llsvm"]["runs"]) == len(m["ref"]["runs"]) == 3


def _script(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_small_run_against_stand_in_references(tmp_path):
    """LIBLINEAR stood in for by a script that refuses -B 1 for -s 21 in LIBLINEAR's words and writes another
    model; LIBSVM absent: its types are said to be left out, and what to set."""
    ref = tmp_path / "ref"
    ref.mkdir()
    _script(ref / "train", 'case "$*" in *-B*) echo "ERROR: prob->bias >=0, but this is ignored in ONECLASS_SVM" >&2;'
                           ' exit 1;; esac\nfor a; do m=$a; done\necho stand-in > "$m"\n')
    _script(ref / "predict", "exit 0\n")
    work = tmp_path / "work"
    work.mkdir()
    res = BD.bench_defaults(str(tmp_path / "no-public-sets"), str(work), repeats=1, liblinear_dir=str(ref),
                            libsvm_dir=str(tmp_path), sets="200-classes", solvers="21,one_class", say=None)
    assert res["liblinear_dir"] == str(ref) and res["libsvm_dir"] is None
    assert "LLSVM_LIBSVM_DIR" in res["unavailable"]["libsvm"]
    plain, biased = res["cells"]
    assert plain["command"] == "-s 21" and plain["reference"] == "train -s 21"
    assert plain["identical"] is False and plain["ratio"] > 0 and plain["deterministic"]
    assert biased["llsvm"]["status"] == biased["ref"]["status"] == "failed" and biased["ratio"] is None
    text = BD.defaults_markdown(res)
    assert "Both refuse alike: -s 21 -B 1 on 200-classes (exit 1: ERROR: prob->bias >=0" in text
    assert "Not measured: LIBSVM's types" in text and "differ: 200-classes -s 21" in text
    assert "| 200-classes (200x1, 200 cl.) | -s 21 -B 1 | train -s 21 -B 1 | exit 1 | exit 1 | - | - | both refuse " \
           "alike |  |" in text


def test_cells_without_a_ratio_are_named():
    def cell(command, llsvm, ref, **kw):
        return {"set": "s", "command": command, "reference": "svm-train " + command, "llsvm": llsvm, "ref": ref,
                "ratio": None, "identical": None, **kw}
    refuse = {"status": "failed", "rc": 1, "message": "ERROR: specified nu is infeasible"}
    cells = [cell("-s nu_svc", {**refuse, "message": "Error: specified nu is infeasible"}, refuse),
             cell("-s smo -b 1", {"status": "failed", "rc": 1, "message": "Error: internal error"},
                  {"status": "timeout", "s": 120.0}),
             cell("-s one_class -b 1", {"status": "skipped"}, {"status": "skipped"}, note="the reference timed out"),
             cell("-s nu_svr", {"status": "timeout", "s": 120.0}, {"status": "timeout", "s": 120.0})]
    assert BD._model_cell(cells[0]) == "both refuse, in other words"
    assert BD._not_rated(cells, 120) == [
        "Both refuse, in other words: -s nu_svc on s (llsvm exit 1: Error: specified nu is infeasible; svm-train "
        "-s nu_svc exit 1: ERROR: specified nu is infeasible).",
        "llsvm failed: llsvm-train -s smo -b 1 on s (exit 1: Error: internal error).",
        "The reference timed out (120 s): svm-train -s smo -b 1 on s.",
        "Skipped: -s one_class -b 1 on s (the reference timed out).",
        "Both timed out (120 s): -s nu_svr on s."]
