// The cost of the optimal-control NLP's gradient (issue 38): the time of
// the objective's gradient of the shooting NLP (single shooting) as a
// multiple of one plain simulation of the same
// controlled model, at 10 and 100 control coefficients, by adjoints and by
// forward sensitivities; on a torque-driven pendulum (traceable: the
// compiled evaluator) and on golf_swing (compiled too since its clamp and
// wrist onset use Clamp and IfPositive; it was on dual numbers before).
// docs/optimal_control.md, "Cost", quotes the table.
//
//   build-bench/bench/optimal_control_bench [repeats] [pendulum|golf]
//       [adjoint|forward] [dense]
//
// `dense` turns the adjoint's shortcuts off (formulation/sens_programs.hpp,
// SetAdjointShortcuts): every column of f_p formed, as before them. With
// `check` instead, both are run and the largest relative difference of
// the two adjoint gradients is printed.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "daedalus/optimal_control.hpp"
#include "formulation/sens_programs.hpp"
#include "golf_swing.hpp"
#include "optimal_control/shooting.hpp"

namespace {

using namespace daedalus;

Problem TorquePendulum() {
  ModelBuilder b("torque_pendulum");
  b.Coordinates({"theta"});
  const Param m = b.Parameter("m", 1.0), l = b.Parameter("l", 1.0),
              g = b.Parameter("g", 9.81), c = b.Parameter("c", 0.1);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] * x.p[l] * x.p[l] * x.v[0] * x.v[0];
  });
  b.PotentialEnergy(
      [=](const auto& x) { return -x.p[m] * x.p[g] * x.p[l] * cos(x.q[0]); });
  b.Damping([=](const auto& x) {
    MatX<Scalar<decltype(x)>> d(1, 1);
    d(0, 0) = x.p[c];
    return d;
  });
  b.Input(
      "torque",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> col(1);
        col << 1.0;
        return col;
      },
      [](const auto& x) { return Scalar<decltype(x)>(0.0); });
  Problem p;
  p.model = std::move(b).Build();
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::VectorXd::Constant(1, 0.1);
    s.v = Eigen::VectorXd::Zero(1);
    return s;
  };
  p.defaults.t_end = 2.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-8;
  p.defaults.atol = 1e-10;
  p.defaults.formulation = Formulation::kUnstabilized;
  p.defaults.integrator = Integrator::kCvodesBdf;
  return p;
}

// Process CPU time: the bench is single-threaded, and the machine is
// shared (wall time under load would charge the other processes' share).
double Now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Row {
  double plain = 0.0, adjoint = 0.0, forward = 0.0;
  double check = -1.0;  // max relative difference, shortcuts on and off
};

// Seconds per plain run and per gradient (the value runs the gradient
// needs first subtracted: Gradients() runs them when w is new).
Row Measure(const Problem& p,
            const std::string& input,
            const std::string& objective,
            double t_end,
            int knots,
            int repeats,
            const std::string& method,
            bool check) {
  SimulationOptions sim = p.defaults;
  sim.t_end = t_end;
  sim.output_step = std::min(sim.output_step, t_end / (knots - 1));
  OptimalControlProblem ocp;
  ControlChannel ch;
  ch.input = input;
  for (int j = 0; j < knots; ++j) ch.knots.push_back(t_end * j / (knots - 1));
  ch.initial = Eigen::VectorXd::Constant(knots, 1.0);
  ch.add_to_model = true;
  ocp.controls.push_back(ch);
  ocp.objective.push_back({objective, 1.0});
  ocp.path_samples = 1;
  Row row;
  for (GradientMethod gm :
       {GradientMethod::kAdjoint, GradientMethod::kForward}) {
    if (!method.empty() && method != ToString(gm)) continue;
    OptimizeOptions o;
    o.shooting_intervals = 1;
    o.gradient = gm;
    internal::ShootingNlp nlp(p, ocp, sim, p.model.default_parameters(), o);
    Eigen::VectorXd w = nlp.x0(), grad;
    Eigen::MatrixXd jac;
    double values = 0.0, gradients = 0.0;
    for (int r = 0; r < repeats; ++r) {
      w[0] += 1e-3;  // a new point: nothing cached
      const double a = Now();
      if (!nlp.Values(w, nullptr, nullptr)) std::abort();
      const double b = Now();
      if (!nlp.Gradients(w, &grad, &jac)) std::abort();
      const double c = Now();
      values += b - a;
      gradients += c - b;
    }
    row.plain = values / repeats;
    (gm == GradientMethod::kAdjoint ? row.adjoint : row.forward) =
        gradients / repeats;
    if (check && gm == GradientMethod::kAdjoint) {
      Eigen::VectorXd off;
      internal::SetAdjointShortcuts(false);
      w[0] += 1e-3;  // new point: the gradient is computed again
      const bool ok =
          nlp.Values(w, nullptr, nullptr) && nlp.Gradients(w, &off, &jac);
      internal::SetAdjointShortcuts(true);
      Eigen::VectorXd on;
      internal::ShootingNlp again(p, ocp, sim, p.model.default_parameters(), o);
      if (!ok || !again.Values(w, nullptr, nullptr) ||
          !again.Gradients(w, &on, &jac))
        std::abort();
      row.check = (on - off).cwiseAbs().maxCoeff() /
                  std::max(1e-300, off.cwiseAbs().maxCoeff());
      if (objective.rfind("effort:", 0) == 0) {
        // Closed form: J = int u^2 dt with u = sum_j c_j hat_j on the
        // uniform grid over the horizon, dJ/dc = 2 G c, G the hats' Gram
        // matrix (h/6 (1, 4, 1), h/3 on the diagonal's two ends).
        const double h = t_end / (knots - 1);
        Eigen::VectorXd exact = Eigen::VectorXd::Zero(knots);
        for (int j = 0; j < knots; ++j) {
          const bool end = j == 0 || j == knots - 1;
          exact[j] += 2.0 * (end ? h / 3.0 : 2.0 * h / 3.0) * w[j];
          if (j > 0) exact[j] += 2.0 * h / 6.0 * w[j - 1];
          if (j + 1 < knots) exact[j] += 2.0 * h / 6.0 * w[j + 1];
        }
        const double scale = exact.cwiseAbs().maxCoeff();
        std::printf("  against the closed form: shortcuts %.2e, dense %.2e\n",
                    (on.head(knots) - exact).cwiseAbs().maxCoeff() / scale,
                    (off.head(knots) - exact).cwiseAbs().maxCoeff() / scale);
      }
    }
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::string only = argc > 2 ? argv[2] : "";
  const std::string method = argc > 3 ? argv[3] : "";  // adjoint | forward
  const std::string mode = argc > 4 ? argv[4] : "";    // dense | check
  if (mode == "dense") internal::SetAdjointShortcuts(false);
  const bool check = mode == "check";
  std::printf(
      "model            coefficients  plain [ms]  adjoint gradient [ms] "
      "(x plain)  forward gradient [ms] (x plain)\n");
  const Problem pendulum = TorquePendulum();
  const Problem golf = problems::GolfSwingProblem();
  for (int knots : {10, 100}) {
    if (only == "golf") break;
    const Row r = Measure(pendulum, "torque", "effort:torque", 2.0, knots,
                          repeats, method, check);
    std::printf(
        "torque_pendulum  %12d  %10.3f  %12.3f (%5.2f)  %12.3f (%5.2f)\n",
        knots, 1e3 * r.plain, 1e3 * r.adjoint, r.adjoint / r.plain,
        1e3 * r.forward, r.forward / r.plain);
    if (r.check >= 0.0)
      std::printf("  adjoint shortcuts on/off: %.2e\n", r.check);
  }
  for (int knots : {10, 100}) {
    if (only == "pendulum") break;
    const Row r = Measure(golf, "wrist", "clubhead_speed@impact", 0.35, knots,
                          repeats, method, check);
    std::printf(
        "golf_swing       %12d  %10.3f  %12.3f (%5.2f)  %12.3f (%5.2f)\n",
        knots, 1e3 * r.plain, 1e3 * r.adjoint, r.adjoint / r.plain,
        1e3 * r.forward, r.forward / r.plain);
    if (r.check >= 0.0)
      std::printf("  adjoint shortcuts on/off: %.2e\n", r.check);
  }
  return 0;
}
