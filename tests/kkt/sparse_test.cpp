// The sparse path: sparse evaluation equals the dense one, declared sparsity
// is enforced, every sparse KKT solver agrees with the dense solver,
// redundant constraints give the unique motion with minimum-norm
// multipliers (seed 000: the reaction J' lambda is the invariant), and the
// maximal-coordinate chain reproduces the reduced one.
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
namespace sparse_test {

using ::testing::AllOf;
using testing::ChainWithDuplicateJoint;
using ::testing::HasSubstr;
using testing::kRoundOff;
using testing::NearRel;
using testing::Parallelogram;
using testing::ParallelogramState;
using testing::SledAndSupport;

// Solutions of well-conditioned KKT systems by different factorizations
// agree to a few hundred ulps of the largest entry; 1e-10 leaves room for
// the condition number of the chain's Schur complement (~1e3 for N = 6).
constexpr double kSolverAgreement = 1e-10;

// Dense and sparse evaluation of every stage at random states.
void ExpectSparseMatchesDense(const Model& model, int trials) {
  Workspace dw(model);
  SparseWorkspace sw(model);
  std::mt19937 gen{11};
  for (int k = 0; k < trials; ++k) {
    const Eigen::VectorXd q = testing::RandomVector(gen, model.nq(), -1, 1);
    const Eigen::VectorXd v = testing::RandomVector(gen, model.nv(), -2, 2);
    const double t = 0.1 * k;
    dw.SetState(t, q, v);
    sw.SetState(t, q, v);
    EvaluateAll(&dw);
    EvaluateSparseAll(&sw);
    ASSERT_GT(dw.M.norm(), 0.0);
    EXPECT_TRUE(NearRel(Eigen::MatrixXd(sw.M), dw.M, kRoundOff))
        << model.name();
    EXPECT_TRUE(NearRel(Eigen::MatrixXd(sw.J), dw.J, kRoundOff));
    EXPECT_TRUE(NearRel(sw.phi, dw.phi, kRoundOff));
    EXPECT_TRUE(NearRel(sw.phi_t, dw.phi_t, kRoundOff));
    EXPECT_TRUE(NearRel(sw.vel_residual, dw.vel_residual, kRoundOff));
    EXPECT_TRUE(NearRel(sw.bias, dw.bias, kRoundOff));
    EXPECT_TRUE(NearRel(sw.h, dw.h, kRoundOff));
    EXPECT_TRUE(NearRel(sw.momentum, dw.momentum, kRoundOff));
    EXPECT_NEAR(sw.energy, dw.energy, kRoundOff * (1 + std::abs(dw.energy)));
    EXPECT_NEAR(sw.L_t, dw.L_t, kRoundOff * (1 + std::abs(dw.L_t)));
  }
}

TEST(SparseEvaluation, MatchesDenseForDeclaredAndUndeclaredModels) {
  ExpectSparseMatchesDense(problems::ChainProblem(4).model, 5);
  ExpectSparseMatchesDense(SledAndSupport(), 5);
  // Undeclared structure (dense blocks), inputs, damping, dense M.
  ExpectSparseMatchesDense(testing::SeedCoupled(), 3);
  ExpectSparseMatchesDense(testing::SeedMovingSupport(), 3);
  ExpectSparseMatchesDense(testing::RodPairAbsolute(), 3);
  ExpectSparseMatchesDense(problems::ChainReducedProblem(3).model, 3);
}

TEST(SparseEvaluation, PatternsFollowTheDeclaration) {
  // Chain: 3 x 3 mass block per body, a revolute joint has two rows on six
  // coordinates, the pivot two rows on three.
  const int n = 50;
  SparseWorkspace ws(problems::ChainProblem(n).model);
  EXPECT_EQ(ws.M.nonZeros(), 9 * n);
  EXPECT_EQ(ws.J.nonZeros(), 2 * 3 + 2 * 6 * (n - 1));
  EXPECT_EQ(ws.J.rows(), 2 * n);
}

TEST(SparseEvaluation, CostIsLinearInTheNumberOfBodies) {
  // Count the calls of one joint function per evaluation: the sparse path
  // seeds only the joint's own six coordinates, four directions per
  // multi-direction sweep (two sweeps for Phi, the six Jacobian columns and
  // Phi_t), plus one bias sweep, whatever the size of the model.
  for (int n : {4, 40}) {
    ModelBuilder b("counted");
    std::vector<std::string> names;
    for (int i = 0; i < 3 * n; ++i)
      names.push_back(problems::IndexedName("c", i));
    b.Coordinates(names);
    for (int i = 0; i < n; ++i)
      b.BodyMassMatrix(Touches{{3 * i, 3 * i + 1, 3 * i + 2}},
                       [](const auto& s) {
                         return MatX<Scalar<decltype(s)>>::Identity(3, 3);
                       });
    auto calls = std::make_shared<int>(0);
    b.Holonomic("link", Touches{{0, 1, 2, 3, 4, 5}}, [calls](const auto& s) {
      ++*calls;
      return s.q[0] * s.q[3] + s.q[1] * s.q[4] + sin(s.q[2] - s.q[5]);
    });
    SparseWorkspace ws(std::move(b).Build());
    std::mt19937 gen{3};
    ws.SetState(0.0, testing::RandomVector(gen, 3 * n, -1, 1),
                testing::RandomVector(gen, 3 * n, -1, 1));
    EvaluateSparseAll(&ws);  // includes the one-time sparsity check
    *calls = 0;
    EvaluateSparseAll(&ws);
    EXPECT_EQ(*calls, 2 + 1) << "n = " << n;
  }
}

TEST(SparseEvaluation, AFailedEvaluationLeavesNoTangentsBehind) {
  // The workspace updates only the values of its dual copies of the state
  // between evaluations; a user function that throws mid-sweep must not
  // leave a seed that corrupts the next evaluation.
  ModelBuilder b("throws");
  b.Coordinates({"x0", "y0", "x1", "y1"});
  b.ConstantBodyMass(Touches{{0, 1}}, [](const Eigen::VectorXd&) {
    return Eigen::Matrix2d::Identity().eval();
  });
  b.ConstantBodyMass(Touches{{2, 3}}, [](const Eigen::VectorXd&) {
    return Eigen::Matrix2d::Identity().eval();
  });
  // Throws in the middle of its sweep (coordinates 1 and 3 seeded) at
  // y0 > 5; the rod's next sweep seeds other lanes on the same coordinates.
  b.PotentialEnergyTerm(Touches{{1, 3}}, [](const auto& s) {
    if (Value(s.q[1]) > 5.0) throw std::runtime_error("out of range");
    return 9.81 * (s.q[1] + s.q[3]);
  });
  b.Holonomic("rod", Touches{{0, 1, 2, 3}}, [](const auto& s) {
    const auto dx = s.q[2] - s.q[0], dy = s.q[3] - s.q[1];
    return dx * dx + dy * dy - 1.0;
  });
  b.Holonomic("pin", Touches{{0, 1}},
              [](const auto& s) { return s.q[0] * s.q[0] + s.q[1] * s.q[1]; });
  const Model model = std::move(b).Build();
  SparseWorkspace ws(model), fresh(model);
  const Eigen::Vector4d good(0.3, -0.2, 0.9, -0.7), v(0.1, 0.2, -0.3, 0.4);
  ws.SetState(0.0, good, v);
  EvaluateSparseAll(&ws);
  ws.SetState(0.0, Eigen::Vector4d(0.3, 6.0, 0.9, 6.5), v);
  EXPECT_THROW(EvaluateSparseAll(&ws), std::runtime_error);
  ws.SetState(0.0, good, v);
  fresh.SetState(0.0, good, v);
  EvaluateSparseAll(&ws);
  EvaluateSparseAll(&fresh);
  EXPECT_EQ(Eigen::MatrixXd(ws.J), Eigen::MatrixXd(fresh.J));
  EXPECT_EQ(ws.phi, fresh.phi);
  EXPECT_EQ(ws.bias, fresh.bias);
  EXPECT_EQ(ws.h, fresh.h);
  EXPECT_EQ(ws.phi_t, fresh.phi_t);
}

TEST(SparseEvaluation, UndeclaredCoordinateIsCaughtWithItsName) {
  ModelBuilder b("bad_declaration");
  b.Coordinates({"x0", "y0", "x1", "y1"});
  b.KineticEnergy([](const auto& s) { return 0.5 * s.v.squaredNorm(); });
  b.Holonomic("rod", Touches{{0, 1, 2}}, [](const auto& s) {
    const auto dx = s.q[2] - s.q[0], dy = s.q[3] - s.q[1];
    return dx * dx + dy * dy - 1.0;
  });
  SparseWorkspace ws(std::move(b).Build());
  ws.SetState(0.0, Eigen::Vector4d(0, 0, 1, 0.2), Eigen::Vector4d::Zero());
  EXPECT_THAT([&] { EvaluateSparsePosition(&ws); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("constraint 'rod'"), HasSubstr("'y1'"),
                        HasSubstr("{0, 1, 2}"), HasSubstr("Touches"))));

  ModelBuilder e("bad_energy");
  e.Coordinates({"a", "b"});
  e.KineticEnergyTerm(Touches{{0}}, [](const auto& s) {
    return 0.5 * s.v[0] * s.v[0] * (1.0 + s.q[1] * s.q[1]);
  });
  e.KineticEnergyTerm(Touches{{1}},
                      [](const auto& s) { return 0.5 * s.v[1] * s.v[1]; });
  SparseWorkspace we(std::move(e).Build());
  we.SetState(0.0, Eigen::Vector2d(0.1, 0.4), Eigen::Vector2d(1.0, 1.0));
  EXPECT_THAT([&] { EvaluateSparseAll(&we); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("kinetic energy term 0"), HasSubstr("'b'"))));
}

TEST(SparseEvaluation, TouchesOutOfRangeIsRejectedAtBuild) {
  ModelBuilder b("out_of_range");
  b.Coordinates({"x"});
  b.KineticEnergy([](const auto& s) { return 0.5 * s.v[0] * s.v[0]; });
  b.Holonomic("c", Touches{{0, 3}}, [](const auto& s) { return s.q[0]; });
  EXPECT_THAT([&] { std::move(b).Build(); },
              ::testing::ThrowsMessage<std::invalid_argument>(AllOf(
                  HasSubstr("constraint 'c'"), HasSubstr("coordinate 3"))));
}

// ---------------------------------------------------------------- KKT

struct Solved {
  Eigen::VectorXd vdot, lambda, reaction;
};

Solved SolveSparse(const SparseWorkspace& ws, KktMethod m, bool redundant) {
  KktOptions o;
  o.method = m;
  o.allow_redundant = redundant;
  SparseKktSolver s(o);
  KktResult r;
  s.Solve(ws, ws.bias, &r);
  return {r.vdot, r.lambda, r.reaction};
}

TEST(SparseKkt, EverySolverAgreesWithTheDenseSolver) {
  const Model model = problems::ChainProblem(6).model;
  Workspace dw(model);
  SparseWorkspace sw(model);
  std::mt19937 gen{5};
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd q = testing::RandomVector(gen, model.nq(), -1, 1);
    const Eigen::VectorXd v = testing::RandomVector(gen, model.nv(), -2, 2);
    dw.SetState(0.0, q, v);
    sw.SetState(0.0, q, v);
    EvaluateAll(&dw);
    EvaluateSparseAll(&sw);
    KktSolver dense(model, KktOptions{KktMethod::kSchur});
    KktResult ref;
    dense.Solve(dw, dw.bias, &ref);
    ASSERT_GT(ref.lambda.norm(), 1e-3);
    for (KktMethod m : {KktMethod::kSparseSchur, KktMethod::kSparseLu,
                        KktMethod::kSparseCholesky, KktMethod::kQr}) {
      const Solved s = SolveSparse(sw, m, false);
      EXPECT_TRUE(NearRel(s.vdot, ref.vdot, kSolverAgreement)) << ToString(m);
      EXPECT_TRUE(NearRel(s.lambda, ref.lambda, kSolverAgreement))
          << ToString(m);
      // Both block rows of the KKT system.
      EXPECT_TRUE(NearRel(dw.M * s.vdot - dw.J.transpose() * s.lambda,
                          dw.Bu - dw.h, kSolverAgreement));
      EXPECT_TRUE(NearRel(dw.J * s.vdot, -dw.bias, kSolverAgreement));
    }
  }
}

TEST(SparseKkt, SchurSolverFollowsMassAndJacobianChangesBetweenSolves) {
  // One solver object over a sequence of states and parameters: the block
  // factors of M are reused only while M is unchanged, and the Schur
  // complement is refactored every call. Every solve must equal a fresh
  // dense solve (q-dependent M: the sled's bead; a constant M that changes
  // with a parameter: the chain's mass).
  struct Case {
    Model model;
    int mass_param;  // parameter index to vary, or -1
  };
  const Problem chain = problems::ChainProblem(7);
  for (const Case& c :
       {Case{SledAndSupport(), -1},
        Case{chain.model,
             static_cast<int>(chain.model.ParameterIndex("mass"))}}) {
    const Model& model = c.model;
    Workspace dw(model);
    SparseWorkspace sw(model);
    KktOptions o;
    o.method = KktMethod::kSparseSchur;
    SparseKktSolver solver(o);
    std::mt19937 gen{21};
    for (int trial = 0; trial < 6; ++trial) {
      Eigen::VectorXd p = model.default_parameters();
      if (c.mass_param >= 0) p[c.mass_param] *= 1.0 + 0.5 * (trial % 3);
      dw.SetParameters(p);
      sw.SetParameters(p);
      // Repeat each state once: the second solve reuses the block factors.
      const Eigen::VectorXd q = testing::RandomVector(gen, model.nq(), -1, 1);
      const Eigen::VectorXd v = testing::RandomVector(gen, model.nv(), -2, 2);
      for (int again = 0; again < 2; ++again) {
        dw.SetState(0.1 * trial, q, v);
        sw.SetState(0.1 * trial, q, v);
        EvaluateAll(&dw);
        EvaluateSparseAll(&sw);
        KktSolver dense(model, KktOptions{KktMethod::kSchur});
        KktResult ref, got;
        dense.Solve(dw, dw.bias, &ref);
        solver.Solve(sw, sw.bias, &got);
        ASSERT_GT(ref.lambda.norm(), 1e-6);
        EXPECT_TRUE(NearRel(got.vdot, ref.vdot, kSolverAgreement))
            << model.name() << " trial " << trial;
        EXPECT_TRUE(NearRel(got.lambda, ref.lambda, kSolverAgreement))
            << model.name() << " trial " << trial;
        EXPECT_TRUE(NearRel(got.power, ref.lambda.cwiseProduct(dw.J * dw.v),
                            kSolverAgreement));
      }
    }
    EXPECT_EQ(solver.num_analyses(), 1);
  }
}

TEST(SparseKkt, AnalysesOnceAndRefactorizesPerSolve) {
  const Model model = problems::ChainProblem(30).model;
  SparseWorkspace ws(model);
  for (KktMethod m : {KktMethod::kSparseSchur, KktMethod::kSparseLu,
                      KktMethod::kSparseCholesky}) {
    KktOptions o;
    o.method = m;
    SparseKktSolver s(o);
    std::mt19937 gen{9};
    KktResult r;
    for (int k = 0; k < 4; ++k) {
      ws.SetState(0.0, testing::RandomVector(gen, model.nq(), -1, 1),
                  testing::RandomVector(gen, model.nv(), -1, 1));
      EvaluateSparseAll(&ws);
      s.Solve(ws, ws.bias, &r);
    }
    EXPECT_EQ(s.num_analyses(), 1) << ToString(m);
    EXPECT_EQ(s.num_factorizations(), 4) << ToString(m);
  }
}

TEST(SparseKkt, AutomaticChoiceFollowsSizeAndStructure) {
  auto choice = [](const Model& m) {
    const SparseWorkspace ws(m);
    return ResolveKktMethod(KktMethod::kAuto, ws.M, ws.J);
  };
  EXPECT_EQ(choice(problems::ChainProblem(1).model), KktMethod::kSchur);
  EXPECT_EQ(choice(problems::ChainProblem(2).model), KktMethod::kSparseSchur);
  EXPECT_EQ(choice(problems::ChainProblem(100).model), KktMethod::kSparseSchur);
  // Joint angles: M is full, so dense stays best.
  EXPECT_EQ(choice(problems::ChainReducedProblem(kDenseBelowNv + 5).model),
            KktMethod::kSchur);
}

TEST(SparseKkt, SingularMassMatrixIsReported) {
  ModelBuilder b("massless");
  b.Coordinates({"x", "phantom"});
  b.KineticEnergyTerm(Touches{{0}},
                      [](const auto& s) { return 0.5 * s.v[0] * s.v[0]; });
  b.KineticEnergyTerm(Touches{{1}},
                      [](const auto& s) { return 0.0 * s.v[1] * s.v[1]; });
  SparseWorkspace ws(std::move(b).Build());
  ws.SetState(0.0, Eigen::Vector2d::Zero(), Eigen::Vector2d::Zero());
  EvaluateSparseAll(&ws);
  for (KktMethod m : {KktMethod::kSparseSchur, KktMethod::kSparseLu,
                      KktMethod::kSparseCholesky}) {
    EXPECT_THAT([&] { SolveSparse(ws, m, false); },
                ::testing::ThrowsMessage<KktError>(HasSubstr("singular")))
        << ToString(m);
  }
}

TEST(SparseKkt, DuplicateConstraintSplitsItsMultiplierEvenly) {
  // Seed 000: with a redundant constraint the multipliers are not unique
  // but the motion and J' lambda are; the minimum-norm choice splits a
  // duplicated row's multiplier equally between the copies.
  const int n = 5, dup = 2;
  const Model ref_model = problems::ChainProblem(n).model;
  const Model model = ChainWithDuplicateJoint(n, dup);
  std::mt19937 gen{21};
  const Eigen::VectorXd q = testing::RandomVector(gen, 3 * n, -1, 1);
  const Eigen::VectorXd v = testing::RandomVector(gen, 3 * n, -2, 2);
  SparseWorkspace rw(ref_model), ws(model);
  rw.SetState(0.0, q, v);
  ws.SetState(0.0, q, v);
  EvaluateSparseAll(&rw);
  EvaluateSparseAll(&ws);
  const Solved ref = SolveSparse(rw, KktMethod::kSparseSchur, false);
  const int r0 = model.constraint_row(dup), rd = model.constraint_row(n);
  ASSERT_GT(ref.lambda.segment(r0, 2).norm(), 1e-3);

  // Not allowed: an error naming the dependent rows.
  EXPECT_THAT([&] { SolveSparse(ws, KktMethod::kSparseSchur, false); },
              ::testing::ThrowsMessage<KktError>(
                  AllOf(HasSubstr("dependent constraint rows"),
                        HasSubstr("joint2"), HasSubstr("--kkt qr"))));

  for (KktMethod m : {KktMethod::kQr, KktMethod::kSparseSchur,
                      KktMethod::kSparseLu, KktMethod::kSparseCholesky}) {
    KktOptions o;
    o.method = m;
    o.allow_redundant = true;
    SparseKktSolver s(o);
    KktResult r;
    s.Solve(ws, ws.bias, &r);
    EXPECT_EQ(s.dependent_rows().size(), 2u) << ToString(m);
    EXPECT_FALSE(s.redundancy_report().empty());
    EXPECT_TRUE(NearRel(r.vdot, ref.vdot, kSolverAgreement)) << ToString(m);
    EXPECT_TRUE(NearRel(r.reaction, ref.reaction, kSolverAgreement));
    EXPECT_TRUE(NearRel(r.lambda.segment(r0, 2),
                        0.5 * ref.lambda.segment(r0, 2), kSolverAgreement));
    EXPECT_TRUE(NearRel(r.lambda.segment(rd, 2),
                        0.5 * ref.lambda.segment(r0, 2), kSolverAgreement));
  }

  // The dense solver gives the same minimum-norm answer.
  Workspace dw(model);
  dw.SetState(0.0, q, v);
  EvaluateAll(&dw);
  KktOptions o;
  o.allow_redundant = true;
  KktSolver dense(model, o);
  KktResult r;
  dense.Solve(dw, dw.bias, &r);
  EXPECT_EQ(dense.dependent_rows().size(), 2u);
  EXPECT_TRUE(NearRel(r.vdot, ref.vdot, kSolverAgreement));
  EXPECT_TRUE(NearRel(r.lambda.segment(rd, 2), 0.5 * ref.lambda.segment(r0, 2),
                      kSolverAgreement));
}

TEST(SparseKkt, ParallelogramWithExtraLinkHasTheSameMotionAndReaction) {
  const InitialState x = ParallelogramState(0.7, 1.3);
  SparseWorkspace w3(Parallelogram(false)), w4(Parallelogram(true));
  w3.SetState(0.0, x.q, x.v);
  w4.SetState(0.0, x.q, x.v);
  EvaluateSparseAll(&w3);
  EvaluateSparseAll(&w4);
  ASSERT_LT(w4.phi.cwiseAbs().maxCoeff(), kRoundOff);  // on the manifold
  const Solved ref = SolveSparse(w3, KktMethod::kSparseSchur, false);
  ASSERT_GT(ref.reaction.norm(), 1.0);
  KktOptions o;
  o.method = KktMethod::kQr;
  SparseKktSolver s(o);
  KktResult r;
  s.Solve(w4, w4.bias, &r);
  ASSERT_EQ(s.dependent_rows().size(), 1u);
  EXPECT_TRUE(NearRel(r.vdot, ref.vdot, kSolverAgreement));
  EXPECT_TRUE(NearRel(r.reaction, ref.reaction, kSolverAgreement));
  // Minimum norm: lambda is orthogonal to the null space of J'.
  const Eigen::MatrixXd J = Eigen::MatrixXd(w4.J);
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(J.transpose(), Eigen::ComputeFullV);
  const Eigen::VectorXd null = svd.matrixV().col(3);
  ASSERT_LT((J.transpose() * null).norm(), 1e-12);
  EXPECT_LT(std::abs(null.dot(r.lambda)), kSolverAgreement * r.lambda.norm());
  // Another multiplier vector with the same reaction exists: not unique.
  EXPECT_TRUE(NearRel(J.transpose() * (r.lambda + null), r.reaction, 1e-12));
}

TEST(SparseKkt, ScalingAConstraintRescalesOnlyItsMultiplier) {
  // Seed 000: scaling a constraint rescales its multiplier; the reaction is
  // the invariant. Crank 1 written as 3 (x^2 + y^2 - 1).
  ModelBuilder b("scaled");
  b.Coordinates({"x", "y"});
  b.KineticEnergyTerm(Touches{{0, 1}}, [](const auto& s) {
    return 0.5 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]);
  });
  b.PotentialEnergyTerm(Touches{{1}},
                        [](const auto& s) { return 9.81 * s.q[1]; });
  b.Holonomic("rod3", Touches{{0, 1}}, [](const auto& s) {
    return 3.0 * (s.q[0] * s.q[0] + s.q[1] * s.q[1] - 1.0);
  });
  SparseWorkspace ws(std::move(b).Build());
  ModelBuilder u("unit");
  u.Coordinates({"x", "y"});
  u.KineticEnergyTerm(Touches{{0, 1}}, [](const auto& s) {
    return 0.5 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]);
  });
  u.PotentialEnergyTerm(Touches{{1}},
                        [](const auto& s) { return 9.81 * s.q[1]; });
  u.Holonomic("rod", Touches{{0, 1}}, [](const auto& s) {
    return s.q[0] * s.q[0] + s.q[1] * s.q[1] - 1.0;
  });
  SparseWorkspace wu(std::move(u).Build());
  const Eigen::Vector2d q(std::sin(0.4), -std::cos(0.4));
  const Eigen::Vector2d v = 1.1 * Eigen::Vector2d(std::cos(0.4), std::sin(0.4));
  ws.SetState(0.0, q, v);
  wu.SetState(0.0, q, v);
  EvaluateSparseAll(&ws);
  EvaluateSparseAll(&wu);
  const Solved a = SolveSparse(ws, KktMethod::kSparseSchur, false);
  const Solved c = SolveSparse(wu, KktMethod::kSparseSchur, false);
  EXPECT_NEAR(a.lambda[0], c.lambda[0] / 3.0, kRoundOff);
  EXPECT_TRUE(NearRel(a.reaction, c.reaction, kRoundOff));
  EXPECT_TRUE(NearRel(a.vdot, c.vdot, kRoundOff));
}

TEST(SparseKkt, ContradictoryConstraintsRemainAnErrorNamingThem) {
  // x = 0 and x = 1: dependent rows whose stabilized right-hand sides
  // disagree (Baumgarte's beta^2 Phi differs between the two).
  ModelBuilder b("contradiction");
  b.Coordinates({"x", "y"});
  b.KineticEnergyTerm(Touches{{0, 1}},
                      [](const auto& s) { return 0.5 * s.v.squaredNorm(); });
  b.Holonomic("at_zero", Touches{{0}}, [](const auto& s) { return s.q[0]; });
  b.Holonomic("at_one", Touches{{0}},
              [](const auto& s) { return s.q[0] - 1.0; });
  const Model model = std::move(b).Build();
  SparseWorkspace ws(model);
  ws.SetState(0.0, Eigen::Vector2d(0.5, 0.0), Eigen::Vector2d::Zero());
  EvaluateSparseAll(&ws);
  const Eigen::VectorXd bias = ws.bias + 100.0 * ws.phi;  // beta = 10 /s
  KktOptions o;
  o.method = KktMethod::kQr;
  SparseKktSolver s(o);
  KktResult r;
  EXPECT_THAT([&] { s.Solve(ws, bias, &r); },
              ::testing::ThrowsMessage<KktError>(
                  AllOf(HasSubstr("contradictory"), HasSubstr("at_one"))));
  Workspace dw(model);
  dw.SetState(0.0, Eigen::Vector2d(0.5, 0.0), Eigen::Vector2d::Zero());
  EvaluateAll(&dw);
  KktSolver dense(model, o);
  EXPECT_THAT([&] { dense.Solve(dw, bias, &r); },
              ::testing::ThrowsMessage<KktError>(HasSubstr("contradictory")));
}

}  // namespace sparse_test
}  // namespace
}  // namespace daedalus
