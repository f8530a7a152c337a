"""scikit-learn estimators over llsvm's solvers (`pip install llsvm[sklearn]`; `import llsvm` never imports this).

    from llsvm.sklearn import LinearSVC, SVC                          # for sklearn.svm's: the same parameters
    clf = LinearSVC(C=1.0).fit(X, y)                                  # X: dense, CSR/CSC, float64 or float32
    clf.predict(X); clf.decision_function(X); clf.coef_; clf.gap_; clf.save("train.model")
    SVC(gamma="scale").fit(X, y).support_vectors_
    OutOfCoreSVC(memory="1G").fit("big.bin")                          # a path: streamed, never loaded whole

The classes that share a name with scikit-learn's (LinearSVC, LogisticRegression, LinearSVR, SVC, NuSVC, SVR, NuSVR,
OneClassSVM) take its parameters with its meaning and defaults and give its fitted attributes; llsvm adds `solver`
(LIBLINEAR's number or an llsvm solver's name, where the class has several), certificates (primal_, dual_, gap_,
max_violation_, converged_), `n_jobs` threads, `client` (a Dask cluster), fit / predict / score from a LIBSVM text or
llsvm binary path, `save` and `from_file`. llsvm's own estimators (OutOfCoreSVC, TreeSVC, OnlineSVC, ProjectionSVC)
take their solvers' option rows (llsvm/options.py) with llsvm-train's defaults.

Conventions kept: classes_ sorted; for two classes decision_function > 0 means classes_[1] and coef_ has one row
for it (LIBLINEAR's w points to the model's first label: coef_ is w or -w, exactly); several classes: coef_ and the
decision columns in classes_' order; one-vs-one models: scikit-learn's pairs and its one-vs-rest transform of them;
intercept_ = B w_(n+1); predict is the model's own rule (LIBLINEAR's / LIBSVM's), so it equals llsvm-predict's.
A fit replaces the whole fitted state or, when it fails or is interrupted, leaves the previous one whole.
"""
from .base import FIELD, SKLEARN_NAME, ConvergenceWarning
from .kernel import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from .linear import LinearSVC, LinearSVR, LogisticRegression
from .own import OnlineSVC, OutOfCoreSVC, ProjectionSVC, TreeSVC

__all__ = ["LinearSVC", "LogisticRegression", "LinearSVR", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM",
           "OutOfCoreSVC", "TreeSVC", "OnlineSVC", "ProjectionSVC", "ConvergenceWarning", "SKLEARN_NAME", "FIELD"]
