# The coordinate step of the hinge / squared-hinge SVM dual (header-only): the one update that _linear's dual CD,
# _llsvm's first and block passes and _stream's trainer share.
#
# Problem (Hsieh, Chang, Lin, Keerthi, Sundararajan, ICML 2008, eqs. (4)-(9); LIBLINEAR's solve_l2r_l1l2_svc),
# labels y_i in {-1,+1}, the bias (if any) as one more coordinate of x_i:
#     min_alpha  f(alpha) = 1/2 alpha^T (Q + D) alpha - e^T alpha,   0 <= alpha_i <= U_i,   Q_ij = y_i y_j x_i.x_j,
#     hinge loss (L1): D_ii = 0, U_i = C_i;   squared hinge (L2): D_ii = 1/(2 C_i), U_i = infinity,
# with w = sum_j alpha_j y_j x_j kept by the caller. Along coordinate i:
#     G  = y_i w.x_i - 1 + D_ii alpha_i                       (dual_gradient: the partial derivative)
#     PG = min(G, 0) at alpha_i = 0, max(G, 0) at alpha_i = U_i, else G   (projected_gradient)
#     alpha_i <- min(max(alpha_i - G / (Q_ii + D_ii), 0), U_i)   (dual_step: the exact minimizer along i, clipped)
# and the caller moves w by (alpha_new - alpha_old) y_i x_i. No stopping rule here: when to step, shrinking,
# eviction and caching stay each kernel's own. The arithmetic is exactly the kernels' before they shared it: G as
# (y_i w.x_i - 1) + D_ii alpha_i, the step as alpha_i - G / (Q_ii + D_ii) clipped by clip_box (which is
# min(max(., 0), U) bit for bit, -0.0 and infinities included).
from kernel_util cimport clip_box


cdef inline double dual_gradient(double y_wx, double alpha, double diag) noexcept nogil:
    """G = y_i w.x_i - 1 + D_ii alpha_i (diag = D_ii: 0 for the hinge loss)."""
    return y_wx - 1.0 + alpha * diag


cdef inline double projected_gradient(double G, double alpha, double upper) noexcept nogil:
    """PG: G, except 0 where G points out of the box at a bound (alpha_i = 0 and G > 0, alpha_i = U_i and G < 0)."""
    if alpha == 0.0:
        return G if G < 0.0 else 0.0
    if alpha == upper:
        return G if G > 0.0 else 0.0
    return G


cdef inline double dual_step(double G, double alpha, double QD, double diag, double upper) noexcept nogil:
    """The new alpha_i: min(max(alpha_i - G / (QD + diag), 0), upper); QD = Q_ii = ||x_i||^2 (+ bias^2)."""
    return clip_box(alpha - G / (QD + diag), upper)
