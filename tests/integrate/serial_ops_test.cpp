// The optimized vector operations and dense LU solver
// (src/integrate/serial_ops.hpp) against SUNDIALS's own serial vector and
// SUNLinSol_Dense; the dense Newton matrix's difference quotients
// (integrate/common.hpp) against closed forms.
#include "integrate/serial_ops.hpp"

#include <gtest/gtest.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "integrate/common.hpp"

namespace daedalus::internal {
namespace {
namespace serial_ops_test {

struct Ctx {
  SUNContext c = nullptr;
  Ctx() { SUNContext_Create(nullptr, &c); }
  ~Ctx() { SUNContext_Free(&c); }
};

// A pair of vectors with equal random contents: `fast` uses the optimized
// operations, `stock` SUNDIALS's.
struct Pair {
  N_Vector fast, stock;
  Pair(sunindextype n,
       SUNContext ctx,
       std::mt19937* rng,
       double lo = -2.0,
       double hi = 2.0)
      : fast(N_VNew_Serial(n, ctx)), stock(N_VNew_Serial(n, ctx)) {
    UseFastVectorOps(fast);
    std::uniform_real_distribution<double> U(lo, hi);
    for (sunindextype i = 0; i < n; ++i)
      NV_Ith_S(fast, i) = NV_Ith_S(stock, i) = U(*rng);
  }
  ~Pair() {
    N_VDestroy(fast);
    N_VDestroy(stock);
  }
};

void ExpectEqual(N_Vector a, N_Vector b, const char* what) {
  ASSERT_EQ(NV_LENGTH_S(a), NV_LENGTH_S(b));
  for (sunindextype i = 0; i < NV_LENGTH_S(a); ++i)
    EXPECT_EQ(NV_Ith_S(a, i), NV_Ith_S(b, i)) << what << " entry " << i;
}

// Every replaced operation gives SUNDIALS's result: exactly for the
// elementwise ones and for the reductions of short vectors (same summation
// order), and to round-off for the weighted norms of long vectors (four
// partial sums from 64 entries on) and fused sums of three or more vectors
// (summed in vector order). Lengths 1, 3, 10 and 1001 cover the loops'
// edges.
TEST(SerialOps, MatchTheSerialVector) {
  Ctx ctx;
  std::mt19937 rng(3);
  for (sunindextype n : {1, 3, 10, 1001}) {
    Pair x(n, ctx.c, &rng), y(n, ctx.c, &rng), z(n, ctx.c, &rng),
        w(n, ctx.c, &rng, 0.5, 3.0), id(n, ctx.c, &rng);
    N_VLinearSum(0.7, x.fast, -1.3, y.fast, z.fast);
    N_VLinearSum(0.7, x.stock, -1.3, y.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "linear sum");
    N_VLinearSum(1.0, x.fast, 1.0, z.fast, z.fast);  // aliased output
    N_VLinearSum(1.0, x.stock, 1.0, z.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "linear sum in place");
    N_VProd(x.fast, y.fast, z.fast);
    N_VProd(x.stock, y.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "prod");
    N_VDiv(x.fast, w.fast, z.fast);
    N_VDiv(x.stock, w.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "div");
    N_VScale(-2.5, x.fast, z.fast);
    N_VScale(-2.5, x.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "scale");
    N_VAbs(x.fast, z.fast);
    N_VAbs(x.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "abs");
    N_VInv(w.fast, z.fast);
    N_VInv(w.stock, z.stock);
    ExpectEqual(z.fast, z.stock, "inv");
    N_VAddConst(x.fast, 0.25, z.fast);
    N_VAddConst(x.stock, 0.25, z.stock);
    ExpectEqual(z.fast, z.stock, "add const");
    N_VConst(4.5, z.fast);
    N_VConst(4.5, z.stock);
    ExpectEqual(z.fast, z.stock, "const");
    EXPECT_EQ(N_VDotProd(x.fast, y.fast), N_VDotProd(x.stock, y.stock));
    EXPECT_EQ(N_VMaxNorm(x.fast), N_VMaxNorm(x.stock));
    EXPECT_EQ(N_VMin(x.fast), N_VMin(x.stock));
    EXPECT_EQ(N_VL1Norm(x.fast), N_VL1Norm(x.stock));
    // Relative round-off of a sum of n positive terms: n epsilon.
    const double norm_tol = n < 64 ? 0.0 : 1e-16 * static_cast<double>(n);
    auto near = [&](double a, double b, const char* what) {
      EXPECT_LE(std::abs(a - b), norm_tol * std::abs(b)) << what << " " << n;
    };
    near(N_VWL2Norm(x.fast, w.fast), N_VWL2Norm(x.stock, w.stock), "wl2");
    near(N_VWrmsNorm(x.fast, w.fast), N_VWrmsNorm(x.stock, w.stock), "wrms");
    EXPECT_GT(N_VWrmsNorm(x.fast, w.fast), 0.0);
    near(N_VWrmsNormMask(x.fast, w.fast, id.fast),
         N_VWrmsNormMask(x.stock, w.stock, id.stock), "wrms mask");

    // Fused operations.
    double c[3] = {0.5, -1.5, 2.0};
    N_Vector Xf[3] = {x.fast, y.fast, w.fast},
             Xs[3] = {x.stock, y.stock, w.stock};
    N_VLinearCombination(3, c, Xf, z.fast);
    N_VLinearCombination(3, c, Xs, z.stock);
    for (sunindextype i = 0; i < n; ++i)
      EXPECT_NEAR(NV_Ith_S(z.fast, i), NV_Ith_S(z.stock, i), 1e-15 * 8)
          << "linear combination " << i;
    Pair u(n, ctx.c, &rng), v(n, ctx.c, &rng);
    N_Vector Yf[2] = {y.fast, w.fast}, Ys[2] = {y.stock, w.stock};
    N_Vector Zf[2] = {u.fast, v.fast}, Zs[2] = {u.stock, v.stock};
    N_VScaleAddMulti(2, c, x.fast, Yf, Zf);
    N_VScaleAddMulti(2, c, x.stock, Ys, Zs);
    ExpectEqual(u.fast, u.stock, "scale-add multi 0");
    ExpectEqual(v.fast, v.stock, "scale-add multi 1");
    double df[2], ds[2];
    N_VDotProdMulti(2, x.fast, Yf, df);
    N_VDotProdMulti(2, x.stock, Ys, ds);
    EXPECT_EQ(df[0], ds[0]);
    EXPECT_EQ(df[1], ds[1]);
    N_VLinearSumVectorArray(2, 0.3, Yf, -0.6, Zf, Zf);
    N_VLinearSumVectorArray(2, 0.3, Ys, -0.6, Zs, Zs);
    ExpectEqual(u.fast, u.stock, "linear sum array");
    N_VScaleVectorArray(2, c, Yf, Zf);
    N_VScaleVectorArray(2, c, Ys, Zs);
    ExpectEqual(v.fast, v.stock, "scale array");
    double nf[2], ns[2];
    N_VWrmsNormVectorArray(2, Yf, Zf, nf);
    N_VWrmsNormVectorArray(2, Ys, Zs, ns);
    near(nf[1], ns[1], "wrms array");
    N_VWrmsNormMaskVectorArray(2, Yf, Zf, id.fast, nf);
    N_VWrmsNormMaskVectorArray(2, Ys, Zs, id.stock, ns);
    near(nf[0], ns[0], "wrms mask array");
    N_VConstVectorArray(2, -1.0, Zf);
    N_VConstVectorArray(2, -1.0, Zs);
    ExpectEqual(u.fast, u.stock, "const array");
  }
}

TEST(SerialOps, ClonesKeepTheFastOperations) {
  Ctx ctx;
  N_Vector v = N_VNew_Serial(4, ctx.c);
  UseFastVectorOps(v);
  N_Vector c = N_VClone(v);
  EXPECT_EQ(c->ops->nvlinearsum, v->ops->nvlinearsum);
  EXPECT_EQ(c->ops->nvwrmsnormmask, v->ops->nvwrmsnormmask);
  N_VDestroy(c);
  N_VDestroy(v);
}

// The LU solver against SUNLinSol_Dense and against Eigen, on random
// well-conditioned systems (diagonally shifted), sizes 1 to 12.
TEST(DenseLuSolver, SolvesLikeSunLinSolDense) {
  Ctx ctx;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (sunindextype n : {1, 2, 5, 10, 12}) {
    Eigen::MatrixXd M(n, n);
    for (sunindextype j = 0; j < n; ++j)
      for (sunindextype i = 0; i < n; ++i) M(i, j) = U(rng);
    M.diagonal().array() += 0.5;  // pivoting still needed off the diagonal
    Eigen::VectorXd rhs(n);
    for (sunindextype i = 0; i < n; ++i) rhs[i] = U(rng);
    N_Vector y = N_VNew_Serial(n, ctx.c), b = N_VClone(y), x1 = N_VClone(y),
             x2 = N_VClone(y);
    SUNMatrix A1 = SUNDenseMatrix(n, n, ctx.c),
              A2 = SUNDenseMatrix(n, n, ctx.c);
    for (sunindextype j = 0; j < n; ++j)
      for (sunindextype i = 0; i < n; ++i)
        SM_ELEMENT_D(A1, i, j) = SM_ELEMENT_D(A2, i, j) = M(i, j);
    for (sunindextype i = 0; i < n; ++i) NV_Ith_S(b, i) = rhs[i];
    SUNLinearSolver ours = MakeDenseLuSolver(y, A1, ctx.c);
    SUNLinearSolver stock = SUNLinSol_Dense(y, A2, ctx.c);
    ASSERT_EQ(SUNLinSolInitialize(ours), SUNLS_SUCCESS);
    ASSERT_EQ(SUNLinSolSetup(ours, A1), SUNLS_SUCCESS);
    ASSERT_EQ(SUNLinSolSolve(ours, A1, x1, b, 0.0), SUNLS_SUCCESS);
    SUNLinSolInitialize(stock);
    SUNLinSolSetup(stock, A2);
    SUNLinSolSolve(stock, A2, x2, b, 0.0);
    const Eigen::VectorXd ref = M.partialPivLu().solve(rhs);
    for (sunindextype i = 0; i < n; ++i) {
      EXPECT_NEAR(NV_Ith_S(x1, i), NV_Ith_S(x2, i), 1e-12) << n << " " << i;
      EXPECT_NEAR(NV_Ith_S(x1, i), ref[i], 1e-12) << n << " " << i;
    }
    // Solving in place (x == b) gives the same.
    N_VScale(1.0, b, x2);
    ASSERT_EQ(SUNLinSolSolve(ours, A1, x2, x2, 0.0), SUNLS_SUCCESS);
    for (sunindextype i = 0; i < n; ++i)
      EXPECT_EQ(NV_Ith_S(x2, i), NV_Ith_S(x1, i));
    SUNLinSolFree(ours);
    SUNLinSolFree(stock);
    SUNMatDestroy(A1);
    SUNMatDestroy(A2);
    for (N_Vector v : {y, b, x1, x2}) N_VDestroy(v);
  }
}

TEST(DenseLuSolver, ASingularMatrixIsARecoverableFailure) {
  Ctx ctx;
  N_Vector y = N_VNew_Serial(3, ctx.c);
  SUNMatrix A = SUNDenseMatrix(3, 3, ctx.c);
  SUNMatZero(A);
  SM_ELEMENT_D(A, 0, 0) = 1.0;
  SM_ELEMENT_D(A, 1, 1) = 2.0;  // third column zero
  SUNLinearSolver S = MakeDenseLuSolver(y, A, ctx.c);
  EXPECT_EQ(SUNLinSolSetup(S, A), SUNLS_LUFACT_FAIL);
  EXPECT_EQ(SUNLinSolLastFlag(S), 3);  // the failing column, as SUNDIALS
  SUNLinSolFree(S);
  SUNMatDestroy(A);
  N_VDestroy(y);
}

// f(y) = (3 y0 + y1^2, sin(y0) y1): the quotients match the closed-form
// Jacobian to the forward difference's O(sqrt(eps)) truncation.
TEST(DifferenceQuotientJacobian, MatchesTheClosedForm) {
  auto f = [](const double* y, double* out) {
    out[0] = 3.0 * y[0] + y[1] * y[1];
    out[1] = std::sin(y[0]) * y[1];
  };
  const double y[2] = {0.7, -1.3};
  double f0[2], jac[4], work[2];
  f(y, f0);
  DifferenceQuotientJacobian(f, 2, y, f0, 1e-9, 1e-11, jac, work);
  const double exact[4] = {3.0, std::cos(y[0]) * y[1], 2.0 * y[1],
                           std::sin(y[0])};  // column-major
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(jac[k], exact[k], 1e-6) << k;
}

// At rest (y = 0, f(y) at round-off) CVODES's own quotient steps y_j by
// about 1e3 h eps n |f0|_wrms (rtol |y_j| + atol), ~1e-27 here, so that
// the round-off of f is all its quotient sees. These steps are at least
// the tolerance scale atol: a linear f = A y carrying a round-off error of
// 1e-13 that changes with y (the standing humanoid's right-hand side at
// its equilibrium) keeps its quotients within 1e-13 / atol of A.
TEST(DifferenceQuotientJacobian, StepsAtTheToleranceScaleAtRest) {
  const int n = 3;
  Eigen::Matrix3d A;
  A << -2527.0, 1.0, 0.0, 0.5, -100.0, 3.0, 0.0, 2.0, -7.0;
  const double atol = 1e-11, noise = 1e-13;
  std::vector<double> steps;
  auto f = [&](const double* y, double* out) {
    const Eigen::Vector3d Y(y[0], y[1], y[2]);
    Eigen::Vector3d::Map(out) = A * Y;
    double moved = 0.0;
    for (int i = 0; i < n; ++i) moved = std::max(moved, std::abs(y[i]));
    if (moved > 0.0) {
      steps.push_back(moved);
      for (int i = 0; i < n; ++i) out[i] += (i % 2 ? noise : -noise);
    }
  };
  const double y[n] = {0.0, 0.0, 0.0};
  double f0[n], jac[n * n], work[n];
  f(y, f0);
  DifferenceQuotientJacobian(f, n, y, f0, 1e-9, atol, jac, work);
  ASSERT_EQ(steps.size(), static_cast<size_t>(n));
  for (double s : steps) EXPECT_EQ(s, atol);
  const Eigen::Map<const Eigen::Matrix3d> J(jac);
  EXPECT_LE((J - A).cwiseAbs().maxCoeff(), 1.0001 * noise / atol);
}

// Accelerations of 1e308 over atol 1e-10 overflow CVODES's weighted norms
// (its first step came out 0): named as an overflow, recoverable.
TEST(DifferenceQuotientJacobian, AnOverflowedRightHandSideIsNamed) {
  auto f = [](const double* y, double* out) { out[0] = -1e308 + y[0]; };
  const double y[1] = {0.0};
  double f0[1], jac[1], work[1];
  f(y, f0);
  try {
    DifferenceQuotientJacobian(f, 1, y, f0, 1e-8, 1e-10, jac, work);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("overflowed double precision"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace serial_ops_test
}  // namespace
}  // namespace daedalus::internal
