"""llsvm's own estimators: the out-of-core SVMs, the H1-SVM tree, the online kernel SVMs and the 1-D projection SVMs.

Their parameters are the option rows of their solvers (llsvm/options.py) under the rows' names (scikit-learn's where
it has one: tol, random_state, n_jobs, kernel, class_weight), with llsvm-train's defaults: the same call gives the
same model as the CLI. A parameter that the chosen solver does not take must keep its default (else ValueError, as
the CLI refuses the option).
"""
import math

from .base import Classifier, Linear


class OutOfCoreSVC(Linear, Classifier):
    """llsvm's out-of-core L1-loss SVMs (-s llsvm, streamsvm, bm; memory=, tmp_dir=); fit a path to stream it.

    Parameters
    ----------
    solver : int or str, default=None
        The solver (-s): 'llsvm', 'streamsvm', 'bm'; None: 'llsvm'.
    C : float, default=1.0
        The cost of a training error (-c).
    tol : float, default=None
        The stopping tolerance (-e); None: the solver's default.
    n_jobs : int, default=None
        Threads (--threads); None: the solver's default.
    random_state : int, RandomState instance or None, default=1
        The seed (--seed); None: llsvm's default seed 1.
    max_iter : int, default=None
        The iteration limit (--max-iter); None: the solver's default.
    memory : object, default=None
        Budget for the training data, weight vectors and per-row state held in RAM, e.g. 64M, 2G; default (and at
        most): the memory available (--memory).
    tmp_dir : object, default=None
        Directory for temporary files; default: the system's (--tmp-dir).
    inner_iter : int, default=5
        Passes over each loaded block: -s llsvm, per outer iteration; -s bm, of the
        DCD run on each block at most (LIBLINEAR's -s 3 limit by default) (--inner-iter).
    keep_active_set : object, default=None
        Keep the final active-set files (binary format) in DIR (--keep-active-set).
    inner_eps : float, default=0.01
        Stopping tolerance inside: -s llsvm, the relative change of the dual per outer iteration of block
        optimization; -s bm, the DCD run on each block (default see llsvm-train
        --help) (--inner-eps).
    one_pass : bool, default=False
        The paper's Algorithm 2 exactly: no re-check passes, the stopping rule is --inner-eps and the primal is not
        computed (--one-pass).
    max_passes : int, default=10
        Re-check passes at most (--max-passes).
    radius_bias : bool, default=False
        -s streamsvm: the bias as the paper's radius (-B R).
    class_weight : dict or 'balanced', default=None
        C of class i multiplied by ``class_weight[i]`` (-wi).
    hash_bits : object, default=None
        Hash features into 2^B signed buckets on the fly (a hashed model file) (--hash-bits).
    fit_intercept : bool, default=True
        Whether to fit an intercept (-B intercept_scaling).
    intercept_scaling : float, default=1.0
        The constant feature appended to every row (-B).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster (a Client, 'local', or a scheduler's address) from the path of an llsvm binary file
        every worker reads.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        The number of features seen in fit.
    n_iter_ : int
        The largest iteration count of the problems.
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem, where the solver has one.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        The model (``save`` writes llsvm-train's file).
    """

    _solvers = ('llsvm', 'streamsvm', 'bm')

    def __init__(self, *, solver=None, C=1.0, tol=None, n_jobs=None, random_state=1, max_iter=None, memory=None,
                 tmp_dir=None, inner_iter=5, keep_active_set=None, inner_eps=0.01, one_pass=False, max_passes=10,
                 radius_bias=False, class_weight=None, hash_bits=None, fit_intercept=True, intercept_scaling=1.0,
                 client=None):
        self.solver = solver
        self.C = C
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_iter = max_iter
        self.memory = memory
        self.tmp_dir = tmp_dir
        self.inner_iter = inner_iter
        self.keep_active_set = keep_active_set
        self.inner_eps = inner_eps
        self.one_pass = one_pass
        self.max_passes = max_passes
        self.radius_bias = radius_bias
        self.class_weight = class_weight
        self.hash_bits = hash_bits
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.client = client



class TreeSVC(Classifier):
    """The H1-SVM tree (-s h1tree).

    Parameters
    ----------
    solver : int or str, default=None
        The solver (-s): 'h1tree'; None: 'h1tree'.
    C : float, default=1.0
        The cost of a training error (-c).
    tol : float, default=None
        The stopping tolerance (-e); None: the solver's default.
    n_jobs : int, default=None
        Threads (--threads); None: the solver's default.
    random_state : int, RandomState instance or None, default=1
        The seed (--seed); None: llsvm's default seed 1.
    max_iter : int, default=None
        The iteration limit (--max-iter); None: the solver's default.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid'}, default="rbf"
        The kernel (-t).
    degree : int, default=3
        Degree of the polynomial kernel (-d).
    gamma : float, default=None
        Gamma of the kernel (-g); None: 1/num_features, as LIBSVM.
    coef0 : float, default=0.0
        coef0 of the kernel (-r).
    cache_size : float, default=100.0
        Kernel cache size in MB (-m).
    shrinking : int, default=1
        -h 0|1: whether to use the shrinking heuristics; -h alone and --help show
        this help (-h).
    hard_class : str, default="greedy"
        Hard class of each node: greedy (train both, keep the one removing more rows; default), alternate (the
        larger class first), larger (--hard-class).
    h1_c : float, default=inf
        Box of the hard class: inf (default, the primal as printed) or KAPPA >= 1, C = KAPPA m_s / m_h (--h1-c).
    min_remove : float, default=0.0
        A node must remove at least max(1, RHO |S|) rows (--min-remove).
    max_depth : int, default=256
        Nodes per list at most (--max-depth).
    rbf_depth : str, default="none"
        End every list in the RBF node (a -s smo model of all rows, kernel options -t -g -c ...): at depth K, at the
        cheapest depth within --rbf-tol of the best validation accuracy (auto), or never (none, the default) (--rbf-
        depth).
    rbf_select : str, default="validation"
        Where auto measures: a stratified 20 % split (default) or the training rows (--rbf-select).
    rbf_tol : float, default=0.5
        Accuracy auto may give up for a cheaper depth (--rbf-tol).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster (a Client, 'local', or a scheduler's address) from the path of an llsvm binary file
        every worker reads.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        The number of features seen in fit.
    n_iter_ : int
        The largest iteration count of the problems.
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem, where the solver has one.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        The model (``save`` writes llsvm-train's file).
    """

    _solvers = ('h1tree',)

    def __init__(self, *, solver=None, C=1.0, tol=None, n_jobs=None, random_state=1, max_iter=None, kernel="rbf",
                 degree=3, gamma=None, coef0=0.0, cache_size=100.0, shrinking=1, hard_class="greedy", h1_c=math.inf,
                 min_remove=0.0, max_depth=256, rbf_depth="none", rbf_select="validation", rbf_tol=0.5, client=None):
        self.solver = solver
        self.C = C
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_iter = max_iter
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.hard_class = hard_class
        self.h1_c = h1_c
        self.min_remove = min_remove
        self.max_depth = max_depth
        self.rbf_depth = rbf_depth
        self.rbf_select = rbf_select
        self.rbf_tol = rbf_tol
        self.client = client



class OnlineSVC(Classifier):
    """The online kernel SVMs (-s olsvm, olsvm-rhl, norma, pegaz, pegasos; default olsvm).

    Parameters
    ----------
    solver : int or str, default=None
        The solver (-s): 'olsvm', 'olsvm-rhl', 'norma', 'pegaz', 'pegasos'; None: 'olsvm'.
    C : float, default=1.0
        The cost of a training error (-c).
    tol : float, default=None
        The stopping tolerance (-e); None: the solver's default.
    n_jobs : int, default=None
        Threads (--threads); None: the solver's default.
    random_state : int, RandomState instance or None, default=1
        The seed (--seed); None: llsvm's default seed 1.
    max_iter : int, default=None
        The iteration limit (--max-iter); None: the solver's default.
    kernel : {'linear', 'poly', 'rbf', 'sigmoid'}, default="rbf"
        The kernel (-t).
    degree : int, default=3
        Degree of the polynomial kernel (-d).
    gamma : float, default=None
        Gamma of the kernel (-g); None: 1/num_features, as LIBSVM.
    coef0 : float, default=0.0
        coef0 of the kernel (-r).
    cache_size : float, default=100.0
        Kernel cache size in MB (-m).
    sigma : object, default=None
        Width of the Gaussian kernel exp(-|u-v|^2/(2 sigma^2)), instead of -g (--sigma).
    epochs : int, default=1
        Passes over the shuffled rows (--epochs).
    average : bool, default=False
        The model is the mean of the iterates, not the last one (--average).
    original : bool, default=False
        The lists as printed: each output computed from the support vectors, no output cache (the paper's timing
        figures) (--original).
    bias_update : bool, default=True
        Update the bias b on each violation (default on) (--no-bias-update).
    eta0 : object, default=None
        Kivinen's NORMA (with --eta0 and/or --lambda; default 1): step ETA0/sqrt(t), decay 1 - step lambda (without
        both: the faithful list) (--eta0).
    lam : object, default=None
        Regularization lambda (default 1/(C l)) (--lambda).
    batch : int, default=1
        Mini-batch size (-k).
    projection : bool, default=False
        Project w onto the ball of radius 1/sqrt(lambda) after each step (--projection).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster (a Client, 'local', or a scheduler's address) from the path of an llsvm binary file
        every worker reads.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        The number of features seen in fit.
    n_iter_ : int
        The largest iteration count of the problems.
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem, where the solver has one.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        The model (``save`` writes llsvm-train's file).
    """

    _solvers = ('olsvm', 'olsvm-rhl', 'norma', 'pegaz', 'pegasos')

    def __init__(self, *, solver=None, C=1.0, tol=None, n_jobs=None, random_state=1, max_iter=None, kernel="rbf",
                 degree=3, gamma=None, coef0=0.0, cache_size=100.0, sigma=None, epochs=1, average=False,
                 original=False, bias_update=True, eta0=None, lam=None, batch=1, projection=False, client=None):
        self.solver = solver
        self.C = C
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_iter = max_iter
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.cache_size = cache_size
        self.sigma = sigma
        self.epochs = epochs
        self.average = average
        self.original = original
        self.bias_update = bias_update
        self.eta0 = eta0
        self.lam = lam
        self.batch = batch
        self.projection = projection
        self.client = client



class ProjectionSVC(Linear, Classifier):
    """The 1-D projection SVMs (-s local1d, default, and project1d).

    Parameters
    ----------
    solver : int or str, default=None
        The solver (-s): 'local1d', 'project1d'; None: 'local1d'.
    C : float, default=1.0
        The cost of a training error (-c).
    tol : float, default=None
        The stopping tolerance (-e); None: the solver's default.
    n_jobs : int, default=None
        Threads (--threads); None: the solver's default.
    random_state : int, RandomState instance or None, default=1
        The seed (--seed); None: llsvm's default seed 1.
    max_iter : int, default=None
        The iteration limit (--max-iter); None: the solver's default.
    oned : str, default="scan"
        The 1-D solver: the paper's sorted scan SVM1D (default) or the exact 1-D optimum (weighted-median bias,
        golden-section search) (--oned).
    oned_norm : str, default="unit"
        Project on the unit direction, so the loss is the primal objective of the model (default), or as the paper
        prints it (--oned-norm).
    max_seconds : object, default=None
        Stop each binary problem's search after S seconds (--max-seconds).
    class_weight : dict or 'balanced', default=None
        C of class i multiplied by ``class_weight[i]`` (-wi).
    target_loss : object, default=None
        Stop once the loss is at most LOSS (--target-loss).
    fit_intercept : bool, default=True
        Whether to fit an intercept (-B intercept_scaling).
    intercept_scaling : float, default=1.0
        The constant feature appended to every row (-B).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster (a Client, 'local', or a scheduler's address) from the path of an llsvm binary file
        every worker reads.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        The number of features seen in fit.
    n_iter_ : int
        The largest iteration count of the problems.
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem, where the solver has one.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        The model (``save`` writes llsvm-train's file).
    """

    _solvers = ('local1d', 'project1d')

    def __init__(self, *, solver=None, C=1.0, tol=None, n_jobs=None, random_state=1, max_iter=None, oned="scan",
                 oned_norm="unit", max_seconds=None, class_weight=None, target_loss=None, fit_intercept=True,
                 intercept_scaling=1.0, client=None):
        self.solver = solver
        self.C = C
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.max_iter = max_iter
        self.oned = oned
        self.oned_norm = oned_norm
        self.max_seconds = max_seconds
        self.class_weight = class_weight
        self.target_loss = target_loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.client = client


__all__ = ["OutOfCoreSVC", "TreeSVC", "OnlineSVC", "ProjectionSVC"]
