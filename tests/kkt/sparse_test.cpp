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
#include "slider_crank.hpp"
#include "support/seed_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::kRoundOff;
using testing::NearRel;
using ::testing::Not;

// Solutions of well-conditioned KKT systems by different factorizations
// agree to a few hundred ulps of the largest entry; 1e-10 leaves room for
// the condition number of the chain's Schur complement (~1e3 for N = 6).
constexpr double kSolverAgreement = 1e-10;

// A sled (knife edge): (x, y, theta) with the nonholonomic constraint
// -sin(theta) vx + cos(theta) vy = 0, declared on its three coordinates,
// and a moving support pulling a second point mass (z) up at 0.3 m/s.
Model SledAndSupport() {
  ModelBuilder b("sled");
  b.Coordinates({"x", "y", "theta", "z"});
  b.KineticEnergyTerm(Touches{{0, 1, 2}}, [](const auto& s) {
    return 0.5 * 2.0 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]) +
           0.5 * 0.3 * s.v[2] * s.v[2];
  });
  // A velocity-and-position dependent term (a bead on a spinning rod) so
  // that M depends on q and the inertial forces are nonzero.
  b.KineticEnergyTerm(Touches{{2, 3}}, [](const auto& s) {
    return 0.5 * (1.0 + s.q[3] * s.q[3]) * s.v[3] * s.v[3] +
           0.5 * s.q[3] * s.q[3] * s.v[2] * s.v[2];
  });
  b.PotentialEnergyTerm(Touches{{3}},
                        [](const auto& s) { return 9.81 * s.q[3]; });
  b.PotentialEnergyTerm(Touches{{0, 2}}, [](const auto& s) {
    return 0.5 * s.q[0] * s.q[0] + cos(s.q[2]);
  });
  b.Nonholonomic("blade", Touches{{0, 1, 2}}, [](const auto& s) {
    return -sin(s.q[2]) * s.v[0] + cos(s.q[2]) * s.v[1];
  });
  b.Moving("lift", Touches{{3}},
           [](const auto& s) { return s.q[3] - (0.3 * s.t + 0.1); });
  return std::move(b).Build();
}

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

// The chain plus a second copy of one joint ("declared twice").
Model ChainWithDuplicateJoint(int n, int dup) {
  Problem p = problems::ChainProblem(n);
  ModelBuilder b("chain_dup");
  // Rebuild the chain's declarations and add the duplicate.
  std::vector<std::string> names = p.model.coordinate_names();
  b.Coordinates(names);
  const auto& d = p.model.data();
  for (size_t i = 0; i < d.parameter_names.size(); ++i)
    b.Parameter(d.parameter_names[i], d.parameter_defaults[i]);
  for (const auto& t : d.kinetic_terms) {
    const auto fn = t.fn;
    b.KineticEnergyTerm(Touches{t.coords}, [fn](const auto& s) {
      return internal::Invoke(fn, s);
    });
  }
  for (const auto& t : d.potential_terms) {
    const auto fn = t.fn;
    b.PotentialEnergyTerm(Touches{t.coords}, [fn](const auto& s) {
      return internal::Invoke(fn, s);
    });
  }
  auto add = [&](const internal::ConstraintDecl& c, const std::string& name) {
    const auto fn = c.fn;
    b.Holonomic(
        name, Touches{c.coords},
        [fn](const auto& s) {
          using S = Scalar<decltype(s)>;
          VecX<S> out;
          internal::Invoke(fn, s, out);
          return out;
        },
        c.rows);
  };
  for (const auto& c : d.constraints) add(c, c.name);
  add(d.constraints[dup],
      std::string(d.constraints[dup].name).append("_again"));
  return std::move(b).Build();
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

// Parallelogram: point masses P1 = (x1, y1) and P2 = (x2, y2) on unit
// cranks pivoted at O1 = (0, 0) and O2 = (1, 0), joined by a unit coupler;
// with `extra`, a third unit crank from O3 = (2, 0) to P3 = 2 P2 - P1 (the
// coupler extended), which is redundant on the parallelogram's motion.
Model Parallelogram(bool extra) {
  ModelBuilder b(extra ? "parallelogram_extra" : "parallelogram");
  b.Coordinates({"x1", "y1", "x2", "y2"});
  b.KineticEnergyTerm(Touches{{0, 1}}, [](const auto& s) {
    return 0.5 * 1.0 * (s.v[0] * s.v[0] + s.v[1] * s.v[1]);
  });
  b.KineticEnergyTerm(Touches{{2, 3}}, [](const auto& s) {
    return 0.5 * 2.0 * (s.v[2] * s.v[2] + s.v[3] * s.v[3]);
  });
  b.PotentialEnergyTerm(Touches{{1, 3}}, [](const auto& s) {
    return 9.81 * (1.0 * s.q[1] + 2.0 * s.q[3]);
  });
  b.Holonomic("crank1", Touches{{0, 1}}, [](const auto& s) {
    return s.q[0] * s.q[0] + s.q[1] * s.q[1] - 1.0;
  });
  b.Holonomic("crank2", Touches{{2, 3}}, [](const auto& s) {
    return (s.q[2] - 1.0) * (s.q[2] - 1.0) + s.q[3] * s.q[3] - 1.0;
  });
  b.Holonomic("coupler", Touches{{0, 1, 2, 3}}, [](const auto& s) {
    return (s.q[2] - s.q[0]) * (s.q[2] - s.q[0]) +
           (s.q[3] - s.q[1]) * (s.q[3] - s.q[1]) - 1.0;
  });
  if (extra)
    b.Holonomic("crank3", Touches{{0, 1, 2, 3}}, [](const auto& s) {
      const auto x3 = 2.0 * s.q[2] - s.q[0] - 2.0, y3 = 2.0 * s.q[3] - s.q[1];
      return x3 * x3 + y3 * y3 - 1.0;
    });
  return std::move(b).Build();
}

InitialState ParallelogramState(double angle, double rate) {
  InitialState s;
  const double c = std::cos(angle), sn = std::sin(angle);
  s.q = Eigen::Vector4d(c, sn, 1.0 + c, sn);
  s.v = rate * Eigen::Vector4d(-sn, c, -sn, c);
  return s;
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

// ----------------------------------------------------------- simulation

struct Recorded : Observer {
  std::vector<Sample> samples;
  void OnSample(const Sample& s) override { samples.push_back(s); }
};

TEST(SparseSimulation, MaximalAndReducedChainsAgreeOnTheTip) {
  // Two formulations of one system, integrated independently at
  // rtol 1e-9: the tip positions (a path of ~1 m) agree to the integration
  // tolerance. The global error of each run is the tolerance times the
  // error growth over 1 s; 1e-8 m allows a growth factor of 10 (measured:
  // 7e-10 m for N = 2, 1e-12 m for N = 20).
  constexpr double kTipAgreement = 1e-8;
  for (int n : {2, 5, 20}) {
    SimulationOptions o;
    o.t_end = 1.0;
    o.output_step = 0.05;
    o.rtol = 1e-9;
    o.atol = 1e-11;
    o.integrator = Integrator::kCvodesAdams;
    o.formulation = Formulation::kBaumgarte;
    o.kkt.method = KktMethod::kSparseSchur;
    const Problem pm = problems::ChainProblem(n);
    const Problem pr = problems::ChainReducedProblem(n);
    Recorded rm, rr;
    const SimulationSummary sm =
        Simulate(pm.model, pm.initial(pm.model.default_parameters()),
                 pm.model.default_parameters(), o, &rm);
    o.kkt.method = KktMethod::kSchur;
    const SimulationSummary sr =
        Simulate(pr.model, pr.initial(pr.model.default_parameters()),
                 pr.model.default_parameters(), o, &rr);
    ASSERT_TRUE(sm.ok) << sm.error;
    ASSERT_TRUE(sr.ok) << sr.error;
    ASSERT_EQ(rm.samples.size(), rr.samples.size());
    double worst = 0.0, moved = 0.0;
    const Eigen::Vector2d tip0 = problems::ChainTip(rm.samples[0].q);
    for (size_t k = 0; k < rm.samples.size(); ++k) {
      const Eigen::Vector2d a = problems::ChainTip(rm.samples[k].q);
      const Eigen::Vector2d b = problems::ChainReducedTip(rr.samples[k].q);
      worst = std::max(worst, (a - b).norm());
      moved = std::max(moved, (a - tip0).norm());
    }
    EXPECT_GT(moved, 0.1) << "n = " << n;  // the tip really swings
    EXPECT_LT(worst, kTipAgreement) << "n = " << n;
    // Energy is conserved by both (no work terms): residual at tolerance.
    EXPECT_LT(sm.energy_residual_max, 1e-6);
    EXPECT_LT(sr.energy_residual_max, 1e-6);
  }
}

TEST(SparseSimulation, SparseAndDensePathsGiveTheSameRun) {
  const Problem p = problems::ChainProblem(4);
  SimulationOptions o;
  o.t_end = 0.5;
  o.output_step = 0.1;
  o.rtol = 1e-9;
  o.atol = 1e-11;
  o.formulation = Formulation::kProjection;
  o.integrator = Integrator::kCvodesBdf;
  const Eigen::VectorXd params = p.model.default_parameters();
  o.kkt.method = KktMethod::kSchur;
  const SimulationSummary d = Simulate(p.model, p.initial(params), params, o);
  o.kkt.method = KktMethod::kSparseLu;
  const SimulationSummary s = Simulate(p.model, p.initial(params), params, o);
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_TRUE(s.ok) << s.error;
  // Independent step sequences at rtol 1e-9: agreement to ~1e-7.
  EXPECT_TRUE(NearRel(s.final.q, d.final.q, 1e-7));
  EXPECT_TRUE(NearRel(s.final.lambda, d.final.lambda, 1e-6));
  EXPECT_LT(s.drift_position_max, 1e-12);  // projection to round-off
  EXPECT_GT(s.stats.projections, 0);
}

TEST(SparseSimulation, EnergyBookkeepingMatchesTheDensePath) {
  // The sparse path integrates only the work components that can be
  // nonzero (no ideal work on stationary rows): the per-row constraint and
  // ideal work must still equal the dense path's, which integrates all of
  // them, and the energy balance must close. The sled has a moving row
  // (ideal work of the lift) and a nonholonomic one.
  const Model model = SledAndSupport();
  InitialState x0;
  x0.q = Eigen::Vector4d(0.2, -0.1, 0.4, 0.1);
  x0.v = Eigen::Vector4d(0.5 * std::cos(0.4), 0.5 * std::sin(0.4), 1.0, 0.3);
  SimulationOptions o;
  o.t_end = 0.5;
  o.output_step = 0.1;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  o.formulation = Formulation::kBaumgarte;
  o.integrator = Integrator::kCvodesAdams;
  const Eigen::VectorXd params = model.default_parameters();
  o.kkt.method = KktMethod::kSchur;
  const SimulationSummary d = Simulate(model, x0, params, o);
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary s = Simulate(model, x0, params, o);
  ASSERT_TRUE(d.ok) << d.error;
  ASSERT_TRUE(s.ok) << s.error;
  const int lift = model.constraint_row(1);
  ASSERT_GT(std::abs(d.final.ideal_constraint_work[lift]), 1e-3);
  // Independent step sequences at rtol 1e-10.
  EXPECT_TRUE(NearRel(s.final.ideal_constraint_work,
                      d.final.ideal_constraint_work, 1e-7));
  EXPECT_TRUE(NearRel(s.final.constraint_work, d.final.constraint_work, 1e-7));
  EXPECT_NEAR(s.final.explicit_time_work, d.final.explicit_time_work, 1e-9);
  EXPECT_LT(s.energy_residual_max, 1e-8);
  EXPECT_LT(d.energy_residual_max, 1e-8);

  // A stationary chain does no ideal work: exactly zero on both paths.
  const Problem chain = problems::ChainProblem(5);
  const Eigen::VectorXd cp = chain.model.default_parameters();
  o.rtol = 1e-8;
  o.atol = 1e-10;
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary c = Simulate(chain.model, chain.initial(cp), cp, o);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.final.ideal_constraint_work.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_EQ(c.final.constraint_work.size(), chain.model.nc());
  EXPECT_GT(c.final.constraint_work.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_LT(c.energy_residual_max, 1e-8);
}

TEST(SparseSimulation, RedundantParallelogramMovesLikeThePlainOne) {
  SimulationOptions o;
  o.t_end = 1.0;
  o.output_step = 0.1;
  o.rtol = 1e-9;
  o.atol = 1e-11;
  o.formulation = Formulation::kProjection;
  o.kkt.method = KktMethod::kQr;
  // Hanging cranks swinging 0.5 rad about the bottom: far from the change
  // points at 0 and pi where all four points align and the mechanism
  // itself is singular.
  const InitialState x = ParallelogramState(-M_PI / 2 + 0.5, 0.0);
  const Eigen::VectorXd none(0);
  const SimulationSummary a = Simulate(Parallelogram(false), x, none, o);
  const SimulationSummary b = Simulate(Parallelogram(true), x, none, o);
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  ASSERT_GT((a.final.q - x.q).norm(), 0.1);
  // Independent step sequences at rtol 1e-9: agreement to ~1e-7.
  EXPECT_TRUE(NearRel(b.final.q, a.final.q, 1e-7));
  // Outputs are interpolated between projected steps: drift at the
  // tolerance, for the redundant row too.
  EXPECT_LT(b.drift_position_max, 1e-9);
  // The step count shows the redundant run is as smooth as the plain one.
  EXPECT_LT(b.stats.steps, 2 * a.stats.steps);
}

TEST(SparseSimulation, ContradictoryConstraintsFailTheRunWithTheirNames) {
  ModelBuilder b("contradiction");
  b.Coordinates({"x", "y"});
  b.KineticEnergyTerm(Touches{{0, 1}},
                      [](const auto& s) { return 0.5 * s.v.squaredNorm(); });
  b.Holonomic("at_zero", Touches{{0}}, [](const auto& s) { return s.q[0]; });
  b.Holonomic("at_one", Touches{{0}},
              [](const auto& s) { return s.q[0] - 1.0; });
  SimulationOptions o;
  o.t_end = 0.1;
  o.formulation = Formulation::kProjection;
  o.kkt.method = KktMethod::kQr;
  const SimulationSummary s =
      Simulate(std::move(b).Build(),
               InitialState{Eigen::Vector2d(0.5, 0.0), Eigen::Vector2d::Zero()},
               Eigen::VectorXd(0), o);
  EXPECT_FALSE(s.ok);
  EXPECT_THAT(s.error, AllOf(HasSubstr("contradictory"), HasSubstr("at_one")));
}

TEST(SparseKkt, MethodNamesRoundTrip) {
  for (KktMethod m : {KktMethod::kAuto, KktMethod::kSchur, KktMethod::kFullLu,
                      KktMethod::kSparseSchur, KktMethod::kSparseLu,
                      KktMethod::kSparseCholesky, KktMethod::kQr})
    EXPECT_EQ(KktMethodFromString(ToString(m)), m) << ToString(m);
  EXPECT_THAT([] { KktMethodFromString("cholesky"); },
              ::testing::ThrowsMessage<std::invalid_argument>(
                  AllOf(HasSubstr("'cholesky'"), HasSubstr("sparse-lu"))));
}

TEST(SparseSimulation, BodiesOptionBuildsTheChainAndRejectsBadValues) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "daedalus_sparse_test")
          .string();
  auto run_with = [&](std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return run(
        {{"bodies", 10, 1, 10000, "number of links"}},
        [](const std::vector<IntOption>& o) {
          return problems::ChainProblem(o[0].value);
        },
        static_cast<int>(argv.size()), argv.data());
  };
  EXPECT_EQ(run_with({"chain", "--bodies", "3", "--t-end", "0.02", "--quiet",
                      "--output-dir", dir}),
            0);
  EXPECT_EQ(run_with({"chain", "--bodies=0", "--quiet"}), 2);
  EXPECT_EQ(run_with({"chain", "--bodies", "2.5", "--quiet"}), 2);
}

// Every formulation runs on both KKT paths (formulation/support.hpp): GGL on
// IDAS with the sparse evaluator integrates the same residual as the dense
// evaluator, so the two runs agree to their integration tolerance.
TEST(SparseSimulation, GglOnIdasAgreesWithTheDensePath) {
  // The slider-crank of SUNDIALS's idasSlCrank_dns, GGL on IDAS at its own
  // tolerances (rtol 1e-6, atol 1e-7).
  const Problem p = problems::SliderCrankProblem();
  SimulationOptions o = p.defaults;
  o.t_end = 2.0;
  o.output_step = 0.1;
  const Eigen::VectorXd params = p.model.default_parameters();
  o.kkt.method = KktMethod::kSchur;
  const SimulationSummary dense =
      Simulate(p.model, p.initial(params), params, o);
  o.kkt.method = KktMethod::kSparseSchur;
  const SimulationSummary sparse =
      Simulate(p.model, p.initial(params), params, o);
  ASSERT_EQ(o.formulation, Formulation::kGgl);
  ASSERT_TRUE(dense.ok) << dense.error;
  ASSERT_TRUE(sparse.ok) << sparse.error;
  EXPECT_THAT(sparse.evaluator, HasSubstr("sparse path"));
  EXPECT_THAT(dense.evaluator, Not(HasSubstr("sparse path")));
  // The crank turns: the comparison is not between two rest states.
  ASSERT_GT((sparse.final.q - p.initial(params).q).norm(), 0.1);
  // The residuals agree to round-off and so do the Newton matrices: the two
  // integrations differ by far less than their tolerance.
  EXPECT_LT((sparse.final.q - dense.final.q).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_LT((sparse.final.lambda - dense.final.lambda).cwiseAbs().maxCoeff(),
            1e-6 * (1.0 + dense.final.lambda.cwiseAbs().maxCoeff()));
  EXPECT_GT(sparse.stats.steps, 0);
}

}  // namespace
}  // namespace daedalus
