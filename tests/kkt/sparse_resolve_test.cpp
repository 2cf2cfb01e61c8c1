// SparseKktSolver::Resolve (include/daedalus/sparse_kkt.hpp): new
// right-hand sides with the last solve's factors, against fresh solves,
// for every sparse method, redundant constraints included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <filesystem>
#include <memory>
#include <random>

#include "chain.hpp"
#include "chain_reduced.hpp"
#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/sparse_kkt.hpp"
#include "kkt/sparse_models.hpp"
#include "slider_crank.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace sparse_resolve_test {

using ::testing::AllOf;
using testing::ChainWithDuplicateJoint;
using ::testing::HasSubstr;
using testing::kRoundOff;
using testing::Parallelogram;
using testing::ParallelogramState;

// -------------------------------------------------------------- Resolve

// Resolve applies the factors of the last Solve to new right-hand sides, a
// fresh solver factors the same M and J and applies its factors: the same
// operations in the same order, so they agree to round-off (bitwise, as it
// happens); 1e-12 relative allows for an equally stable reordering.
constexpr double kResolveAgreement = 1e-12;

// max |a - b| over max |b|, after checking that b is not zero (an all-zero
// pair cannot pass).
::testing::AssertionResult AgreeRelative(const Eigen::VectorXd& a,
                                         const Eigen::VectorXd& b,
                                         double tol) {
  const double scale = b.lpNorm<Eigen::Infinity>();
  if (!(scale > 0.0)) return ::testing::AssertionFailure() << "b is zero";
  const double diff = (a - b).lpNorm<Eigen::Infinity>();
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "max |a - b| = " << diff << " > " << tol << " * " << scale;
}

// Componentwise (Oettli-Prager) backward error of (vdot, lambda) for
//   [M -J'; J 0] [vdot; lambda] = [f; -b]:
// the largest residual of a row over the sum of the magnitudes of its
// terms. A backward-stable solve makes it a small multiple of eps whatever
// the conditioning.
double KktBackwardError(const SparseMatrixD& M,
                        const SparseMatrixD& J,
                        const Eigen::VectorXd& f,
                        const Eigen::VectorXd& b,
                        const Eigen::VectorXd& vdot,
                        const Eigen::VectorXd& lambda) {
  const Eigen::MatrixXd Md(M), Jd(J);
  const Eigen::VectorXd res1 = Md * vdot - Jd.transpose() * lambda - f;
  const Eigen::VectorXd size1 = Md.cwiseAbs() * vdot.cwiseAbs() +
                                Jd.transpose().cwiseAbs() * lambda.cwiseAbs() +
                                f.cwiseAbs();
  const Eigen::VectorXd res2 = Jd * vdot + b;
  const Eigen::VectorXd size2 = Jd.cwiseAbs() * vdot.cwiseAbs() + b.cwiseAbs();
  double eta = 0.0;
  for (Eigen::Index i = 0; i < res1.size(); ++i)
    eta = std::max(eta, std::abs(res1[i]) / size1[i]);
  for (Eigen::Index i = 0; i < res2.size(); ++i)
    eta = std::max(eta, std::abs(res2[i]) / size2[i]);
  return eta;
}

// Solve at the state of `earlier`, then at that of `ws` (same pattern,
// other values: the factors and Resolve's copy of J must follow), each
// with its own right-hand side; then Resolve with random ones (b in the
// range of J, so that dependent rows stay consistent), against a fresh
// solve of the new system.
void ExpectResolveEqualsFreshSolve(const SparseWorkspace& earlier,
                                   const SparseWorkspace& ws,
                                   const KktOptions& o) {
  const Eigen::Index nv = ws.M.rows(), nc = ws.J.rows();
  const std::string what =
      std::string(ToString(o.method)) + " on " + ws.model().name();
  std::mt19937 gen{7};
  const Eigen::VectorXd f2 = testing::RandomVector(gen, nv, -1, 1);
  const Eigen::VectorXd b2 =
      ws.J * testing::RandomVector(gen, static_cast<int>(nv), -1, 1);
  SparseKktSolver solver(o);
  Eigen::VectorXd vdot1(nv), lambda1(nc), vdot(nv), lambda(nc);
  solver.Solve(earlier.M, earlier.J, earlier.Bu - earlier.h, earlier.bias,
               vdot1, lambda1);
  solver.Solve(ws.M, ws.J, ws.Bu - ws.h, ws.bias, vdot1, lambda1);
  ASSERT_GT((Eigen::MatrixXd(ws.J) - Eigen::MatrixXd(earlier.J)).norm(), 0.1)
      << what;
  const long factorizations = solver.num_factorizations();
  solver.Resolve(f2, b2, vdot, lambda);
  EXPECT_EQ(solver.num_factorizations(), factorizations) << what;
  EXPECT_EQ(solver.num_analyses(), 1) << what;

  SparseKktSolver fresh(o);
  Eigen::VectorXd vdot_ref(nv), lambda_ref(nc);
  fresh.Solve(ws.M, ws.J, f2, b2, vdot_ref, lambda_ref);
  // The new right-hand side really moves the solution, so returning the
  // last one cannot pass.
  ASSERT_GT((vdot_ref - vdot1).norm(), 0.1 * vdot_ref.norm()) << what;
  EXPECT_TRUE(AgreeRelative(vdot, vdot_ref, kResolveAgreement)) << what;
  EXPECT_TRUE(AgreeRelative(lambda, lambda_ref, kResolveAgreement)) << what;
  // kRoundOff (64 eps): measured 1.5e-16 to 3.9e-15 (at most 18 eps) for
  // every method and case here, the redundant ones included, and equal to
  // the fresh solve's. The Schur-complement paths are not backward stable
  // for an ill-conditioned M, but these mass matrices are well conditioned.
  EXPECT_LT(KktBackwardError(ws.M, ws.J, f2, b2, vdot, lambda), kRoundOff)
      << what;
}

TEST(SparseKkt, ResolveEqualsAFreshSolveForEveryMethod) {
  const Model model = problems::ChainProblem(6).model;
  SparseWorkspace earlier(model), ws(model);
  std::mt19937 gen{5};
  for (SparseWorkspace* w : {&earlier, &ws}) {
    w->SetState(0.0, testing::RandomVector(gen, model.nq(), -1, 1),
                testing::RandomVector(gen, model.nv(), -2, 2));
    EvaluateSparseAll(w);
  }
  for (KktMethod m : {KktMethod::kSparseSchur, KktMethod::kSparseCholesky,
                      KktMethod::kSparseLu, KktMethod::kQr}) {
    KktOptions o;
    o.method = m;
    ExpectResolveEqualsFreshSolve(earlier, ws, o);
  }
}

TEST(SparseKkt, ResolveOnRedundantConstraints) {
  // A duplicated joint (exactly equal rows) and the parallelogram's extra
  // crank (a row dependent through the geometry): qr, and every other
  // method through its redundant fallback.
  const int n = 5;
  const Model chain = ChainWithDuplicateJoint(n, 2);
  SparseWorkspace chain0(chain), chain1(chain);
  std::mt19937 gen{21};
  for (SparseWorkspace* w : {&chain0, &chain1}) {
    w->SetState(0.0, testing::RandomVector(gen, 3 * n, -1, 1),
                testing::RandomVector(gen, 3 * n, -2, 2));
    EvaluateSparseAll(w);
  }
  // Two states on the parallelogram's manifold (the extra crank is
  // dependent only there).
  const Model crank = Parallelogram(true);
  SparseWorkspace crank0(crank), crank1(crank);
  const InitialState x0 = ParallelogramState(0.2, -0.4);
  const InitialState x1 = ParallelogramState(0.7, 1.3);
  crank0.SetState(0.0, x0.q, x0.v);
  crank1.SetState(0.0, x1.q, x1.v);
  EvaluateSparseAll(&crank0);
  EvaluateSparseAll(&crank1);
  for (const auto& [earlier, ws] :
       {std::pair{&chain0, &chain1}, std::pair{&crank0, &crank1}}) {
    for (KktMethod m : {KktMethod::kQr, KktMethod::kSparseSchur,
                        KktMethod::kSparseCholesky, KktMethod::kSparseLu}) {
      KktOptions o;
      o.method = m;
      o.allow_redundant = true;
      ExpectResolveEqualsFreshSolve(*earlier, *ws, o);
    }
  }
}

TEST(SparseKkt, ResolveNeedsASuccessfulSolveOfTheSameSize) {
  // Two unit masses on a line, x0 + x1 = 0; the second mass matrix has
  // the same pattern but a zero mass (singular).
  SparseMatrixD M(2, 2), M0(2, 2), J(1, 2);
  std::vector<Eigen::Triplet<double, int>> t{{0, 0, 1.0}, {1, 1, 1.0}};
  M.setFromTriplets(t.begin(), t.end());
  t[1] = {1, 1, 0.0};
  M0.setFromTriplets(t.begin(), t.end());
  J.insert(0, 0) = 1.0;
  J.insert(0, 1) = 1.0;
  J.makeCompressed();
  ASSERT_EQ(M0.nonZeros(), 2);
  const Eigen::Vector2d f(1.0, -2.0);
  const Eigen::VectorXd b = Eigen::VectorXd::Constant(1, 0.5);
  Eigen::VectorXd vdot(2), lambda(1);
  KktOptions o;
  o.method = KktMethod::kSparseSchur;
  SparseKktSolver s(o);
  using ::testing::ThrowsMessage;
  EXPECT_THAT([&] { s.Resolve(f, b, vdot, lambda); },
              ThrowsMessage<std::logic_error>(
                  HasSubstr("no successful Solve whose factors")));
  s.Solve(M, J, f, b, vdot, lambda);
  s.Resolve(f, b, vdot, lambda);
  // Closed form: lambda = -(b + J M^-1 f) / (J M^-1 J') = -(0.5 - 1) / 2.
  EXPECT_NEAR(lambda[0], 0.25, kRoundOff);
  Eigen::VectorXd too_long(3);
  EXPECT_THAT([&] { s.Resolve(too_long, b, vdot, lambda); },
              ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("nv = 2"), HasSubstr("nc = 1"))));
  // A Solve that throws leaves no factors to reuse.
  EXPECT_THROW(s.Solve(M0, J, f, b, vdot, lambda), KktError);
  EXPECT_THAT([&] { s.Resolve(f, b, vdot, lambda); },
              ThrowsMessage<std::logic_error>(
                  HasSubstr("no successful Solve whose factors")));
}

}  // namespace sparse_resolve_test
}  // namespace
}  // namespace daedalus
