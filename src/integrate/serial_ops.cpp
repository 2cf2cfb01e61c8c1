#include "integrate/serial_ops.hpp"

#include <nvector/nvector_serial.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>
#include <utility>

namespace daedalus::internal {

namespace {

// ------------------------------------------------------------- vectors
//
// Each kernel reads element i of every input before writing element i of
// the output, so an output may alias an input, as SUNDIALS allows.

// The kernels below are compiled twice on x86-64 (GCC, clang): for the
// baseline ISA (SSE2) and for AVX2, which does four doubles per
// instruction; UseFastVectorOps picks the AVX2 ones when the CPU has it
// (__builtin_cpu_supports). No FMA in either, and no reassociation: the
// two give the same bits, element by element and in every sum.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(DAEDALUS_NO_MULTIVERSION)
#define DAEDALUS_VECTOR_AVX2 1
#define DAEDALUS_KERNEL inline __attribute__((always_inline))
#else
#define DAEDALUS_VECTOR_AVX2 0
#define DAEDALUS_KERNEL inline
#endif

inline double* D(N_Vector v) { return NV_DATA_S(v); }
inline sunindextype N(N_Vector v) { return NV_LENGTH_S(v); }

DAEDALUS_KERNEL void LinearSum(
    realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z) {
  const double *xd = D(x), *yd = D(y);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = a * xd[i] + b * yd[i];
}
DAEDALUS_KERNEL void Const(realtype c, N_Vector z) {
  double* zd = D(z);
  std::fill(zd, zd + N(z), c);
}
DAEDALUS_KERNEL void Prod(N_Vector x, N_Vector y, N_Vector z) {
  const double *xd = D(x), *yd = D(y);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = xd[i] * yd[i];
}
DAEDALUS_KERNEL void Div(N_Vector x, N_Vector y, N_Vector z) {
  const double *xd = D(x), *yd = D(y);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = xd[i] / yd[i];
}
DAEDALUS_KERNEL void Scale(realtype c, N_Vector x, N_Vector z) {
  const double* xd = D(x);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = c * xd[i];
}
DAEDALUS_KERNEL void Abs(N_Vector x, N_Vector z) {
  const double* xd = D(x);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = std::abs(xd[i]);
}
DAEDALUS_KERNEL void Inv(N_Vector x, N_Vector z) {
  const double* xd = D(x);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = 1.0 / xd[i];
}
DAEDALUS_KERNEL void AddConst(N_Vector x, realtype b, N_Vector z) {
  const double* xd = D(x);
  double* zd = D(z);
  const sunindextype n = N(x);
  for (sunindextype i = 0; i < n; ++i) zd[i] = xd[i] + b;
}
DAEDALUS_KERNEL realtype DotProd(N_Vector x, N_Vector y) {
  const double *xd = D(x), *yd = D(y);
  const sunindextype n = N(x);
  double s = 0.0;
  for (sunindextype i = 0; i < n; ++i) s += xd[i] * yd[i];
  return s;
}
DAEDALUS_KERNEL realtype MaxNorm(N_Vector x) {
  const double* xd = D(x);
  const sunindextype n = N(x);
  double m = 0.0;
  for (sunindextype i = 0; i < n; ++i) m = std::max(m, std::abs(xd[i]));
  return m;
}
// Long vectors (the sparse path's chains) sum in four partial sums, whose
// additions overlap; short ones in order, as nvector_serial does.
constexpr sunindextype kSplitSums = 64;
DAEDALUS_KERNEL realtype WSqrSum(N_Vector x, N_Vector w) {
  const double *xd = D(x), *wd = D(w);
  const sunindextype n = N(x);
  double s = 0.0;
  sunindextype i = 0;
  if (n >= kSplitSums) {
    double s1 = 0.0, s2 = 0.0, s3 = 0.0;
    for (; i + 4 <= n; i += 4) {
      const double p0 = xd[i] * wd[i], p1 = xd[i + 1] * wd[i + 1];
      const double p2 = xd[i + 2] * wd[i + 2], p3 = xd[i + 3] * wd[i + 3];
      s += p0 * p0;
      s1 += p1 * p1;
      s2 += p2 * p2;
      s3 += p3 * p3;
    }
    s = (s + s1) + (s2 + s3);
  }
  for (; i < n; ++i) {
    const double p = xd[i] * wd[i];
    s += p * p;
  }
  return s;
}
realtype WSqrSumMask(N_Vector x, N_Vector w, N_Vector id) {
  const double *xd = D(x), *wd = D(w), *idd = D(id);
  const sunindextype n = N(x);
  double s = 0.0;
  for (sunindextype i = 0; i < n; ++i) {
    if (idd[i] > 0.0) {
      const double p = xd[i] * wd[i];
      s += p * p;
    }
  }
  return s;
}
DAEDALUS_KERNEL realtype WrmsNorm(N_Vector x, N_Vector w) {
  return std::sqrt(WSqrSum(x, w) / static_cast<double>(N(x)));
}
realtype WrmsNormMask(N_Vector x, N_Vector w, N_Vector id) {
  return std::sqrt(WSqrSumMask(x, w, id) / static_cast<double>(N(x)));
}
realtype Min(N_Vector x) {
  const double* xd = D(x);
  const sunindextype n = N(x);
  if (n == 0) return std::numeric_limits<double>::max();
  double m = xd[0];
  for (sunindextype i = 1; i < n; ++i) m = std::min(m, xd[i]);
  return m;
}
realtype WL2Norm(N_Vector x, N_Vector w) { return std::sqrt(WSqrSum(x, w)); }
realtype L1Norm(N_Vector x) {
  const double* xd = D(x);
  const sunindextype n = N(x);
  double s = 0.0;
  for (sunindextype i = 0; i < n; ++i) s += std::abs(xd[i]);
  return s;
}

// Fused and vector-array operations (return 0: success).
// z = sum_k c_k X_k, summed in vector order; z may be X[0] (SUNDIALS
// allows no other aliasing), so the first vector is scaled in place before
// the others are added.
DAEDALUS_KERNEL int LinearCombination(int nv,
                                      realtype* c,
                                      N_Vector* X,
                                      N_Vector z) {
  double* zd = D(z);
  const int n = static_cast<int>(N(z));
  const double* x0 = D(X[0]);
  const double c0 = c[0];
  for (int i = 0; i < n; ++i) zd[i] = c0 * x0[i];
  for (int k = 1; k < nv; ++k) {
    const double* __restrict xk = D(X[k]);
    double* __restrict zk = zd;
    const double ck = c[k];
    for (int i = 0; i < n; ++i) zk[i] += ck * xk[i];
  }
  return 0;
}
DAEDALUS_KERNEL int ScaleAddMulti(
    int nv, realtype* a, N_Vector x, N_Vector* Y, N_Vector* Z) {
  const double* xd = D(x);
  const sunindextype n = N(x);
  for (int k = 0; k < nv; ++k) {
    const double* yd = D(Y[k]);
    double* zd = D(Z[k]);
    for (sunindextype i = 0; i < n; ++i) zd[i] = a[k] * xd[i] + yd[i];
  }
  return 0;
}
int DotProdMulti(int nv, N_Vector x, N_Vector* Y, realtype* d) {
  for (int k = 0; k < nv; ++k) d[k] = DotProd(x, Y[k]);
  return 0;
}
int LinearSumVectorArray(
    int nv, realtype a, N_Vector* X, realtype b, N_Vector* Y, N_Vector* Z) {
  for (int k = 0; k < nv; ++k) LinearSum(a, X[k], b, Y[k], Z[k]);
  return 0;
}
int ScaleVectorArray(int nv, realtype* c, N_Vector* X, N_Vector* Z) {
  for (int k = 0; k < nv; ++k) Scale(c[k], X[k], Z[k]);
  return 0;
}
int ConstVectorArray(int nv, realtype c, N_Vector* Z) {
  for (int k = 0; k < nv; ++k) Const(c, Z[k]);
  return 0;
}
int WrmsNormVectorArray(int nv, N_Vector* X, N_Vector* W, realtype* nrm) {
  for (int k = 0; k < nv; ++k) nrm[k] = WrmsNorm(X[k], W[k]);
  return 0;
}
int WrmsNormMaskVectorArray(
    int nv, N_Vector* X, N_Vector* W, N_Vector id, realtype* nrm) {
  for (int k = 0; k < nv; ++k) nrm[k] = WrmsNormMask(X[k], W[k], id);
  return 0;
}
// Z[j][i] = a[j] X[i] + Y[j][i], for i < nvec, j < nsum.
int ScaleAddMultiVectorArray(
    int nvec, int nsum, realtype* a, N_Vector* X, N_Vector** Y, N_Vector** Z) {
  for (int i = 0; i < nvec; ++i) {
    const double* xd = D(X[i]);
    const sunindextype n = N(X[i]);
    for (int j = 0; j < nsum; ++j) {
      const double* yd = D(Y[j][i]);
      double* zd = D(Z[j][i]);
      for (sunindextype e = 0; e < n; ++e) zd[e] = a[j] * xd[e] + yd[e];
    }
  }
  return 0;
}
// Z[i] = sum_j c[j] X[j][i], for i < nvec: LinearCombination of each
// member, so Z[i] may be X[0][i] (as SUNDIALS allows) and every element
// is summed in j order as before. Written element by element with the
// vectors' data pointers read inside the loop, it was the sensitivities'
// largest vector operation (IDAS calls it twice a step: 1.1e3
// instructions each at n = 21, 6 % of the plain run at n_p = 1).
int LinearCombinationVectorArray(
    int nvec, int nsum, realtype* c, N_Vector** X, N_Vector* Z) {
  constexpr int kGathered = 8;  // IDAS sums at most max order + 1 = 6
  N_Vector x[kGathered];
  for (int i = 0; i < nvec; ++i) {
    if (nsum > kGathered) {
      double* zd = D(Z[i]);
      const sunindextype n = N(Z[i]);
      for (sunindextype e = 0; e < n; ++e) {
        double s = c[0] * D(X[0][i])[e];
        for (int j = 1; j < nsum; ++j) s += c[j] * D(X[j][i])[e];
        zd[e] = s;
      }
      continue;
    }
    for (int j = 0; j < nsum; ++j) x[j] = X[j][i];
    LinearCombination(nsum, c, x, Z[i]);
  }
  return 0;
}

#if DAEDALUS_VECTOR_AVX2
// The same kernels for AVX2 (see the top of the file).
__attribute__((target("avx2"))) void LinearSumAvx2(
    realtype a, N_Vector x, realtype b, N_Vector y, N_Vector z) {
  LinearSum(a, x, b, y, z);
}
__attribute__((target("avx2"))) void ConstAvx2(realtype c, N_Vector z) {
  Const(c, z);
}
__attribute__((target("avx2"))) void ProdAvx2(N_Vector x,
                                              N_Vector y,
                                              N_Vector z) {
  Prod(x, y, z);
}
__attribute__((target("avx2"))) void DivAvx2(N_Vector x,
                                             N_Vector y,
                                             N_Vector z) {
  Div(x, y, z);
}
__attribute__((target("avx2"))) void ScaleAvx2(realtype c,
                                               N_Vector x,
                                               N_Vector z) {
  Scale(c, x, z);
}
__attribute__((target("avx2"))) void AbsAvx2(N_Vector x, N_Vector z) {
  Abs(x, z);
}
__attribute__((target("avx2"))) void InvAvx2(N_Vector x, N_Vector z) {
  Inv(x, z);
}
__attribute__((target("avx2"))) void AddConstAvx2(N_Vector x,
                                                  realtype b,
                                                  N_Vector z) {
  AddConst(x, b, z);
}
__attribute__((target("avx2"))) realtype DotProdAvx2(N_Vector x, N_Vector y) {
  return DotProd(x, y);
}
__attribute__((target("avx2"))) realtype MaxNormAvx2(N_Vector x) {
  return MaxNorm(x);
}
__attribute__((target("avx2"))) realtype WSqrSumAvx2(N_Vector x, N_Vector w) {
  return WSqrSum(x, w);
}
__attribute__((target("avx2"))) realtype WrmsNormAvx2(N_Vector x, N_Vector w) {
  return WrmsNorm(x, w);
}
__attribute__((target("avx2"))) int LinearCombinationAvx2(int nv,
                                                          realtype* c,
                                                          N_Vector* X,
                                                          N_Vector z) {
  return LinearCombination(nv, c, X, z);
}
__attribute__((target("avx2"))) int ScaleAddMultiAvx2(
    int nv, realtype* a, N_Vector x, N_Vector* Y, N_Vector* Z) {
  return ScaleAddMulti(nv, a, x, Y, Z);
}
bool HasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
#endif

// --------------------------------------------------------- dense LU
//
// LU with partial pivoting of a column-major n x n matrix in place (the
// right-looking algorithm of LAPACK's dgetf2): column k is divided by the
// largest pivot below the diagonal, and the trailing block updated.

struct LuContent {
  sunindextype n = 0;
  sunindextype* pivots = nullptr;  // row swapped with row k at step k
  long last_flag = 0;
};
LuContent* Content(SUNLinearSolver S) {
  return static_cast<LuContent*>(S->content);
}

SUNLinearSolver_Type LuType(SUNLinearSolver) { return SUNLINEARSOLVER_DIRECT; }
SUNLinearSolver_ID LuId(SUNLinearSolver) { return SUNLINEARSOLVER_CUSTOM; }
int LuInitialize(SUNLinearSolver S) {
  Content(S)->last_flag = SUNLS_SUCCESS;
  return SUNLS_SUCCESS;
}

// Loops run on int indices over restrict-qualified columns: a Newton
// matrix has a few dozen rows, where the compiler's run-time overlap checks
// and vector prologues would cost more than the arithmetic.
int LuSetup(SUNLinearSolver S, SUNMatrix A) {
  LuContent* c = Content(S);
  const int n = static_cast<int>(c->n);
  double* a = SM_DATA_D(A);
  sunindextype* piv = c->pivots;
  for (int k = 0; k < n; ++k) {
    double* __restrict colk = a + static_cast<std::ptrdiff_t>(k) * n;
    int p = k;
    double best = std::abs(colk[k]);
    for (int i = k + 1; i < n; ++i) {
      const double v = std::abs(colk[i]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    piv[k] = p;
    if (colk[p] == 0.0) {
      c->last_flag = k + 1;  // as SUNLinSol_Dense: the failing column
      return SUNLS_LUFACT_FAIL;
    }
    if (p != k)
      for (int j = 0; j < n; ++j) {
        double* col = a + static_cast<std::ptrdiff_t>(j) * n;
        std::swap(col[k], col[p]);
      }
    const double inv = 1.0 / colk[k];
    for (int i = k + 1; i < n; ++i) colk[i] *= inv;
    for (int j = k + 1; j < n; ++j) {
      double* __restrict colj = a + static_cast<std::ptrdiff_t>(j) * n;
      const double akj = colj[k];
      if (akj == 0.0) continue;
      for (int i = k + 1; i < n; ++i) colj[i] -= colk[i] * akj;
    }
  }
  c->last_flag = SUNLS_SUCCESS;
  return SUNLS_SUCCESS;
}

// x <- A^-1 x from the factors: row swaps, then L (unit lower) and U,
// column by column. With the size a template parameter (the Newton systems
// of small models) every loop is unrolled; a loop per column with a
// run-time trip count of a few elements costs more in control than in
// arithmetic.
template <int kN>
void LuSubstitute(int n_runtime,
                  const double* __restrict a,
                  const sunindextype* __restrict piv,
                  double* __restrict x) {
  const int n = kN > 0 ? kN : n_runtime;
  for (int k = 0; k < n; ++k)
    if (piv[k] != k) std::swap(x[k], x[piv[k]]);
  for (int k = 0; k < n; ++k) {
    const double* colk = a + static_cast<std::ptrdiff_t>(k) * n;
    const double xk = x[k];
    for (int i = k + 1; i < n; ++i) x[i] -= colk[i] * xk;
  }
  for (int k = n - 1; k >= 0; --k) {
    const double* colk = a + static_cast<std::ptrdiff_t>(k) * n;
    x[k] /= colk[k];
    const double xk = x[k];
    for (int i = 0; i < k; ++i) x[i] -= colk[i] * xk;
  }
}

// The instantiation of size n (1 .. sizeof...(kSizes)), or the run-time
// loops beyond.
template <int... kSizes>
void LuSubstituteDispatch(int n,
                          const double* a,
                          const sunindextype* piv,
                          double* x,
                          std::integer_sequence<int, kSizes...>) {
  const bool done =
      ((n == kSizes + 1 ? (LuSubstitute<kSizes + 1>(n, a, piv, x), true)
                        : false) ||
       ...);
  if (!done) LuSubstitute<0>(n, a, piv, x);
}

int LuSolve(
    SUNLinearSolver S, SUNMatrix A, N_Vector x, N_Vector b, realtype /*tol*/) {
  LuContent* c = Content(S);
  const int n = static_cast<int>(c->n);
  double* xd = D(x);
  if (xd != D(b)) std::copy_n(D(b), n, xd);
  LuSubstituteDispatch(n, SM_DATA_D(A), c->pivots, xd,
                       std::make_integer_sequence<int, 16>());
  c->last_flag = SUNLS_SUCCESS;
  return SUNLS_SUCCESS;
}

sunindextype LuLastFlag(SUNLinearSolver S) { return Content(S)->last_flag; }
int LuSpace(SUNLinearSolver S, long* lenrw, long* leniw) {
  *lenrw = 0;
  *leniw = 2 + Content(S)->n;
  return SUNLS_SUCCESS;
}
int LuFree(SUNLinearSolver S) {
  if (S == nullptr) return SUNLS_SUCCESS;
  if (S->content != nullptr) {
    LuContent* c = Content(S);
    delete[] c->pivots;
    delete c;
    S->content = nullptr;
  }
  SUNLinSolFreeEmpty(S);
  return SUNLS_SUCCESS;
}

}  // namespace

void UseFastVectorOps(N_Vector v) {
  if (N_VGetVectorID(v) != SUNDIALS_NVEC_SERIAL)
    throw std::logic_error("UseFastVectorOps: not a serial vector");
  N_Vector_Ops o = v->ops;
  o->nvlinearsum = LinearSum;
  o->nvconst = Const;
  o->nvprod = Prod;
  o->nvdiv = Div;
  o->nvscale = Scale;
  o->nvabs = Abs;
  o->nvinv = Inv;
  o->nvaddconst = AddConst;
  o->nvdotprod = DotProd;
  o->nvmaxnorm = MaxNorm;
  o->nvwrmsnorm = WrmsNorm;
  o->nvwrmsnormmask = WrmsNormMask;
  o->nvmin = Min;
  o->nvwl2norm = WL2Norm;
  o->nvl1norm = L1Norm;
  o->nvlinearcombination = LinearCombination;
  o->nvscaleaddmulti = ScaleAddMulti;
  o->nvdotprodmulti = DotProdMulti;
  o->nvlinearsumvectorarray = LinearSumVectorArray;
  o->nvscalevectorarray = ScaleVectorArray;
  o->nvconstvectorarray = ConstVectorArray;
  o->nvwrmsnormvectorarray = WrmsNormVectorArray;
  o->nvwrmsnormmaskvectorarray = WrmsNormMaskVectorArray;
  o->nvscaleaddmultivectorarray = ScaleAddMultiVectorArray;
  o->nvlinearcombinationvectorarray = LinearCombinationVectorArray;
  o->nvdotprodlocal = DotProd;
  o->nvmaxnormlocal = MaxNorm;
  o->nvminlocal = Min;
  o->nvl1normlocal = L1Norm;
  o->nvwsqrsumlocal = WSqrSum;
  o->nvwsqrsummasklocal = WSqrSumMask;
#if DAEDALUS_VECTOR_AVX2
  static const bool avx2 = HasAvx2();
  if (avx2) {
    o->nvlinearsum = LinearSumAvx2;
    o->nvconst = ConstAvx2;
    o->nvprod = ProdAvx2;
    o->nvdiv = DivAvx2;
    o->nvscale = ScaleAvx2;
    o->nvabs = AbsAvx2;
    o->nvinv = InvAvx2;
    o->nvaddconst = AddConstAvx2;
    o->nvdotprod = DotProdAvx2;
    o->nvmaxnorm = MaxNormAvx2;
    o->nvwrmsnorm = WrmsNormAvx2;
    o->nvlinearcombination = LinearCombinationAvx2;
    o->nvscaleaddmulti = ScaleAddMultiAvx2;
    o->nvdotprodlocal = DotProdAvx2;
    o->nvmaxnormlocal = MaxNormAvx2;
    o->nvwsqrsumlocal = WSqrSumAvx2;
  }
#endif
}

SUNLinearSolver MakeDenseLuSolver(N_Vector y, SUNMatrix A, SUNContext ctx) {
  if (SUNMatGetID(A) != SUNMATRIX_DENSE ||
      SUNDenseMatrix_Rows(A) != SUNDenseMatrix_Columns(A) ||
      SUNDenseMatrix_Rows(A) != N_VGetLength(y))
    throw std::logic_error(
        "MakeDenseLuSolver: needs a square dense matrix of the vector's "
        "length");
  SUNLinearSolver S = SUNLinSolNewEmpty(ctx);
  if (S == nullptr) throw std::bad_alloc();
  S->ops->gettype = LuType;
  S->ops->getid = LuId;
  S->ops->initialize = LuInitialize;
  S->ops->setup = LuSetup;
  S->ops->solve = LuSolve;
  S->ops->lastflag = LuLastFlag;
  S->ops->space = LuSpace;
  S->ops->free = LuFree;
  auto* c = new LuContent;
  c->n = SUNDenseMatrix_Rows(A);
  c->pivots = new sunindextype[static_cast<std::size_t>(c->n)];
  S->content = c;
  return S;
}

}  // namespace daedalus::internal
