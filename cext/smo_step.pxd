# The two-variable step that LIBSVM's Solver and the H1 node's MDM share (header-only, inline, nogil): the pair
# (i, j) of one label moves alpha_i by -delta and alpha_j by +delta, keeping alpha_i + alpha_j, then is clipped to
# [0, Ci] x [0, Cj] along that line, in LIBSVM's order of cases (svm.cpp, Solver::Solve, y_i == y_j).


cdef inline void same_label_step(double* ai, double* aj, double delta, double Ci, double Cj) noexcept nogil:
    cdef double total = ai[0] + aj[0]
    ai[0] -= delta
    aj[0] += delta
    if total > Ci:
        if ai[0] > Ci:
            ai[0] = Ci
            aj[0] = total - Ci
    elif aj[0] < 0.0:
        aj[0] = 0.0
        ai[0] = total
    if total > Cj:
        if aj[0] > Cj:
            aj[0] = Cj
            ai[0] = total - Cj
    elif ai[0] < 0.0:
        ai[0] = 0.0
        aj[0] = total
