// Central differences of a shooting NLP's objective and constraints, column
// by column, for the tests that check the exact gradients
// (optimal_control_test.cpp, squat_to_stand_test.cpp).
//
// A column takes either one central difference D(h) or the Richardson
// extrapolation (4 D(h/2) - D(h)) / 3 of two, whose truncation error is
// O(h^4): that lets h be large enough for the runs' own error over h to
// stay below the bound. Each test states its steps and why they suit its
// model.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <functional>
#include <string>

#include "optimal_control/shooting.hpp"

namespace daedalus::test_support {

// The step of one column, relative to max(1, |w_i|).
struct DifferenceStep {
  double h = 1e-3;
  bool richardson = true;
};

// Fills grad (n) and jac (m x n) with the differences of f and g at w.
// Returns false, with the NLP's error, when a run fails.
inline ::testing::AssertionResult ShootingDifferences(
    internal::ShootingNlp& nlp,
    const Eigen::VectorXd& w,
    const std::function<DifferenceStep(int)>& step,
    Eigen::VectorXd* grad,
    Eigen::MatrixXd* jac) {
  auto central = [&](int i, double h, double* df, Eigen::VectorXd* dg) {
    Eigen::VectorXd a = w, b = w;
    a[i] += h;
    b[i] -= h;
    double fa = 0.0, fb = 0.0;
    Eigen::VectorXd ga, gb;
    if (!nlp.Values(a, &fa, &ga) || !nlp.Values(b, &fb, &gb)) return false;
    *df = (fa - fb) / (2 * h);
    *dg = (ga - gb) / (2 * h);
    return true;
  };
  grad->resize(nlp.n());
  jac->resize(nlp.m(), nlp.n());
  for (int i = 0; i < nlp.n(); ++i) {
    const DifferenceStep s = step(i);
    const double h = s.h * std::max(1.0, std::abs(w[i]));
    double d1 = 0.0, d2 = 0.0;
    Eigen::VectorXd g1, g2;
    if (!central(i, h, &d1, &g1) ||
        (s.richardson && !central(i, 0.5 * h, &d2, &g2)))
      return ::testing::AssertionFailure()
             << "column " << nlp.variable_names()[size_t(i)] << ": "
             << nlp.error();
    if (s.richardson) {
      (*grad)[i] = (4.0 * d2 - d1) / 3.0;
      jac->col(i) = (4.0 * g2 - g1) / 3.0;
    } else {
      (*grad)[i] = d1;
      jac->col(i) = g1;
    }
  }
  return ::testing::AssertionSuccess();
}

// |grad - fd|_inf <= rel |grad|_inf (a zero gradient fails: the check
// would compare nothing).
inline void ExpectObjectiveGradientMatches(const Eigen::VectorXd& grad,
                                           const Eigen::VectorXd& fd,
                                           double rel) {
  const double scale = grad.lpNorm<Eigen::Infinity>();
  ASSERT_GT(scale, 0.0);
  EXPECT_LE((grad - fd).lpNorm<Eigen::Infinity>(), rel * scale)
      << "grad f\n"
      << grad.transpose() << "\nfd\n"
      << fd.transpose();
}

// Row r of jac against fd relative to the row's largest entry.
inline void ExpectJacobianRowMatches(const internal::ShootingNlp& nlp,
                                     const Eigen::MatrixXd& jac,
                                     const Eigen::MatrixXd& fd,
                                     int r,
                                     double rel) {
  const double scale = jac.row(r).lpNorm<Eigen::Infinity>();
  EXPECT_LE((jac.row(r) - fd.row(r)).lpNorm<Eigen::Infinity>(), rel * scale)
      << nlp.constraint_names()[size_t(r)] << "\n"
      << jac.row(r) << "\n"
      << fd.row(r);
}

}  // namespace daedalus::test_support
