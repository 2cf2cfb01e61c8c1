// SparseKktSolver::MultiplierChange (include/daedalus/sparse_kkt.hpp): the
// change of the multipliers for a change of the bias, by the last solve's
// factors, against the difference of two fresh solves, for every sparse
// method; and the ideal multipliers of a Baumgarte run on the sparse path,
// which it serves, against the dense path's.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "chain.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/sparse_kkt.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace multiplier_change_test {

TEST(SparseKkt, MultiplierChangeEqualsTheDifferenceOfTwoSolves) {
  const Model model = problems::ChainProblem(6).model;
  SparseWorkspace ws(model);
  std::mt19937 gen{11};
  ws.SetState(0.0, testing::RandomVector(gen, model.nq(), -1, 1),
              testing::RandomVector(gen, model.nv(), -2, 2));
  EvaluateSparseAll(&ws);
  const Eigen::Index nv = ws.M.rows(), nc = ws.J.rows();
  const Eigen::VectorXd f = ws.Bu - ws.h;
  // A bias change of the size Baumgarte's correction has, and one of the
  // size of the bias itself: the change must be exact in both.
  for (double size : {1e-6, 1.0}) {
    const Eigen::VectorXd db = size * testing::RandomVector(gen, nc, -1, 1);
    for (KktMethod m : {KktMethod::kSparseSchur, KktMethod::kSparseCholesky,
                        KktMethod::kSparseLu, KktMethod::kQr}) {
      KktOptions o;
      o.method = m;
      SparseKktSolver solver(o), other(o);
      Eigen::VectorXd vdot(nv), lambda(nc), vdot2(nv), lambda2(nc), dlambda(nc);
      solver.Solve(ws.M, ws.J, f, ws.bias, vdot, lambda);
      const long factorizations = solver.num_factorizations();
      solver.MultiplierChange(db, dlambda);
      EXPECT_EQ(solver.num_factorizations(), factorizations);
      other.Solve(ws.M, ws.J, f, ws.bias + db, vdot2, lambda2);
      const Eigen::VectorXd expected = lambda2 - lambda;
      ASSERT_GT(expected.norm(), 0.0);
      // The difference of two solves loses the digits the two multipliers
      // share: compare on the scale of the multipliers, 64 eps (measured
      // at most 5.4e-16 absolute).
      const double scale = std::max(lambda.lpNorm<Eigen::Infinity>(),
                                    dlambda.lpNorm<Eigen::Infinity>());
      EXPECT_LT((dlambda - expected).lpNorm<Eigen::Infinity>(),
                testing::kRoundOff * scale)
          << ToString(m) << " size " << size;
    }
  }
}

using daedalus::testing::Keep;

// The Baumgarte run's reported (ideal) multipliers and its constraint
// work come from MultiplierChange on the sparse path and from a whole
// second solve on the dense one: the same numbers to round-off at the
// first sample, and to integration error over a run.
TEST(SparseKkt, IdealMultipliersOfBaumgarteMatchTheDensePath) {
  const Problem p = problems::ChainProblem(4);
  SimulationOptions o;
  o.formulation = Formulation::kBaumgarte;
  o.t_end = 0.5;
  o.output_step = 0.05;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  const InitialState x0 = p.initial(p.model.default_parameters());
  Keep dense, sparse;
  o.kkt.method = KktMethod::kSchur;  // "dense"
  const SimulationSummary ds =
      Simulate(p.model, x0, p.model.default_parameters(), o, &dense);
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary ss =
      Simulate(p.model, x0, p.model.default_parameters(), o, &sparse);
  ASSERT_TRUE(ds.ok) << ds.error;
  ASSERT_TRUE(ss.ok) << ss.error;
  ASSERT_EQ(dense.samples.size(), sparse.samples.size());
  const Eigen::VectorXd& l0 = dense.samples.front().lambda;
  ASSERT_GT(l0.norm(), 0.1);
  EXPECT_LT((sparse.samples.front().lambda - l0).lpNorm<Eigen::Infinity>(),
            testing::kRoundOff * l0.lpNorm<Eigen::Infinity>());
  // Over the run: integration error at rtol 1e-10 on multipliers of order
  // 10 N (measured at most 1.5e-9).
  for (size_t k = 0; k < dense.samples.size(); ++k)
    EXPECT_LT((sparse.samples[k].lambda - dense.samples[k].lambda)
                  .lpNorm<Eigen::Infinity>(),
              1e-7)
        << "sample " << k;
}

}  // namespace multiplier_change_test
}  // namespace
}  // namespace daedalus
