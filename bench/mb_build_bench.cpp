// What a multibody model costs before its first step (issue 15): building
// the Model of a 30-body tree from its description, the first evaluation
// (which records the model's symbolic graph and compiles its stage
// program), a second evaluation (the steady cost), and a first short run
// (which also builds the integrator's Jacobian programs). Each on a freshly
// built model, in CPU seconds of this process: the first repetition
// ("cold") and the best of `--repeats` (default 3). Printed as a table;
// bench/mb_build_cost.py adds the compile-time comparison of a problem file
// written with the multibody description and one written with energies
// (docs/performance.md, "Multibody models: build and compile time").
//
//   build-bench/bench/mb_build_bench [--repeats N]
//   build-bench/bench/mb_build_bench --crossover   (the steady cost of the
//       two forms on spatial chains of 2 to 32 links)
//
// The tree: a base on a revolute joint to the ground, a spine of 3 bodies,
// a neck and head (2), two arms and two legs of 6 bodies each: 30 bodies,
// 30 revolute joints about x, y and z in turn, each body with its own mass,
// offset centre of mass and full inertia tensor. Forms: the energy form
// (M and h by automatic differentiation of per-body energies; compiled
// programs) and the recursive form (CRBA and RNEA on doubles and duals).
// Also the project's humanoid URDF on a fixed base (nv 26), both forms.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/multibody.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/urdf.hpp"

namespace {

namespace mb = daedalus::mb;
using mb::DynamicsForm;

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

// A limb of `n` bodies hanging from frame `parent`, joints about x, y, z in
// turn starting with `axis0`; returns the frame at its tip.
mb::FrameIndex AddLimb(mb::Multibody* s,
                       const std::string& name,
                       int n,
                       int axis0,
                       mb::FrameIndex parent,
                       const Eigen::Vector3d& step,
                       int* counter) {
  for (int i = 0; i < n; ++i) {
    const int k = (*counter)++;
    const double m = 1.0 + 0.1 * (k % 7);
    std::string body_name = name;
    body_name += std::to_string(i);
    const mb::BodyIndex body = s->AddBody(
        body_name,
        mb::SpatialBody(m, mb::PVec(0.01 * (k % 3), 0.005, 0.5 * step.norm()),
                        0.01 * m, 0.012 * m, 0.004 * m, 1e-4, -2e-4, 3e-4));
    s->AddJoint(body_name,
                mb::Joint::Revolute(Eigen::Vector3d::Unit((axis0 + i) % 3)),
                parent, s->BodyFrame(body));
    std::string tip = body_name;
    tip += "_end";
    parent = s->AddFrame(tip, body, mb::PVec(step.x(), step.y(), step.z()));
  }
  return parent;
}

daedalus::Model Tree30(DynamicsForm form) {
  daedalus::ModelBuilder b(form == DynamicsForm::kEnergy ? "tree30_energy"
                                                         : "tree30_recursive");
  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(mb::PVec(0.0, 0.0, -9.81));
  int counter = 0;
  const mb::FrameIndex base =
      AddLimb(&s, "base", 1, 2, s.world(), {0.0, 0.0, 0.1}, &counter);
  const mb::FrameIndex chest =
      AddLimb(&s, "spine", 3, 0, base, {0.0, 0.0, 0.15}, &counter);
  AddLimb(&s, "head", 2, 1, chest, {0.0, 0.0, 0.1}, &counter);
  AddLimb(&s, "larm", 6, 0, chest, {0.0, 0.12, -0.05}, &counter);
  AddLimb(&s, "rarm", 6, 0, chest, {0.0, -0.12, -0.05}, &counter);
  AddLimb(&s, "lleg", 6, 1, base, {0.0, 0.05, -0.15}, &counter);
  AddLimb(&s, "rleg", 6, 1, base, {0.0, -0.05, -0.15}, &counter);
  std::move(s).AddTo(&b, form);
  return std::move(b).Build();
}

// A spatial chain of n links (joints about z, y, x in turn, offset centres
// of mass, full inertia tensors): the crossover of the two forms' steady
// evaluation cost (--crossover).
daedalus::Model Chain(int n, DynamicsForm form) {
  std::string name = "chain";  // (GCC 12 warns falsely on "literal" + string)
  name += std::to_string(n);
  daedalus::ModelBuilder b(name);
  mb::Multibody s(mb::Dimension::kSpatial);
  s.SetGravity(mb::PVec(0.0, 0.0, -9.81));
  int counter = 0;
  AddLimb(&s, "l", n, 2, s.world(), {0.0, 0.02, 0.1}, &counter);
  std::move(s).AddTo(&b, form);
  return std::move(b).Build();
}

// A generic state: every coordinate and velocity nonzero (a quaternion's
// four numbers are normalized by the library).
void GenericState(const daedalus::Model& model,
                  Eigen::VectorXd* q,
                  Eigen::VectorXd* v) {
  q->resize(model.nq());
  v->resize(model.nv());
  for (int i = 0; i < model.nq(); ++i) (*q)[i] = 0.3 * std::sin(1.0 + i);
  for (int i = 0; i < model.nv(); ++i) (*v)[i] = 0.5 * std::cos(2.0 + i);
}

double SteadyEvaluation(const daedalus::Model& model) {
  daedalus::Workspace ws(model);
  ws.SetParameters(model.default_parameters());
  Eigen::VectorXd q, v;
  GenericState(model, &q, &v);
  ws.SetState(0.0, q, v);
  daedalus::EvaluateAll(&ws);  // records and compiles
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    const int reps = 200;
    const double t0 = CpuSeconds();
    for (int r = 0; r < reps; ++r) {
      ws.SetState(1e-3 * r, q, v);
      daedalus::EvaluateAll(&ws);
    }
    best = std::min(best, (CpuSeconds() - t0) / reps);
  }
  return best;
}

int Crossover() {
  std::printf(
      "steady EvaluateAll (M, h and the rest) of a spatial chain, CPU "
      "microseconds per call, best of 5 x 200\n");
  std::printf("%4s %10s %10s %8s %9s\n", "n", "energy", "recursive", "ratio",
              "compiled");
  for (int n : {2, 3, 4, 6, 8, 12, 16, 24, 32}) {
    const daedalus::Model e = Chain(n, DynamicsForm::kEnergy);
    const daedalus::Model r = Chain(n, DynamicsForm::kRecursive);
    const double te = SteadyEvaluation(e), tr = SteadyEvaluation(r);
    std::string why;
    const bool compiled = daedalus::IsCompiled(e, &why);
    std::printf("%4d %10.2f %10.2f %8.2f %9s\n", n, 1e6 * te, 1e6 * tr, te / tr,
                compiled ? "yes" : "no");
    if (!compiled)
      std::printf("     (the energy form on dual numbers: %s)\n", why.c_str());
  }
  return 0;
}

daedalus::Model Humanoid(DynamicsForm form) {
  daedalus::ModelBuilder b(
      form == DynamicsForm::kEnergy ? "humanoid_energy" : "humanoid_recursive");
  daedalus::urdf::ImportOptions opt;
  opt.dynamics = form;
  daedalus::urdf::Import(DAEDALUS_DATA_DIR "/humanoid.urdf", &b, opt);
  return std::move(b).Build();
}

struct Phases {
  double build = 1e300, first = 1e300, second = 1e300, run = 1e300;
  int nv = 0;
  bool compiled = false;
  std::string evaluator;
  long steps = 0;
};

void Measure(const std::function<daedalus::Model()>& make, Phases* ph) {
  // Build, first and second evaluation at a generic state.
  double t0 = CpuSeconds();
  const daedalus::Model model = make();
  double t1 = CpuSeconds();
  ph->build = std::min(ph->build, t1 - t0);
  ph->nv = model.nv();
  daedalus::Workspace ws(model);
  ws.SetParameters(model.default_parameters());
  Eigen::VectorXd q, v;
  GenericState(model, &q, &v);
  ws.SetState(0.0, q, v);
  t0 = CpuSeconds();
  daedalus::EvaluateAll(&ws);
  t1 = CpuSeconds();
  ph->first = std::min(ph->first, t1 - t0);
  ws.SetState(0.1, 0.9 * q, 1.1 * v);
  const int reps = 100;
  t0 = CpuSeconds();
  for (int r = 0; r < reps; ++r) daedalus::EvaluateAll(&ws);
  t1 = CpuSeconds();
  ph->second = std::min(ph->second, (t1 - t0) / reps);
  ph->compiled = daedalus::IsCompiled(model);

  // A first run on a model of its own: build included, 0.01 s of motion
  // from rest at q, CVODES BDF (the default; its Jacobian programs are
  // built on the first step).
  t0 = CpuSeconds();
  const daedalus::Model fresh = make();
  daedalus::SimulationOptions opt;
  opt.t_end = 0.01;
  opt.output_step = 0.01;
  opt.rtol = 1e-6;
  opt.atol = 1e-8;
  const daedalus::SimulationSummary sum =
      daedalus::Simulate(fresh, {q, Eigen::VectorXd::Zero(fresh.nv())},
                         fresh.default_parameters(), opt);
  t1 = CpuSeconds();
  if (!sum.ok) {
    std::fprintf(stderr, "mb_build_bench: the run of %s failed: %s\n",
                 fresh.name().c_str(), sum.error.c_str());
    std::exit(1);
  }
  ph->run = std::min(ph->run, t1 - t0);
  ph->steps = sum.stats.steps;
  ph->evaluator = sum.evaluator;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--crossover") == 0) {
      return Crossover();
    } else {
      std::fprintf(stderr,
                   "usage: mb_build_bench [--repeats N] [--crossover]\n");
      return 2;
    }
  }
  struct Case {
    const char* name;
    std::function<daedalus::Model()> make;
  };
  const std::vector<Case> cases = {
      {"tree30 energy", [] { return Tree30(DynamicsForm::kEnergy); }},
      {"tree30 recursive", [] { return Tree30(DynamicsForm::kRecursive); }},
      {"humanoid fixed energy", [] { return Humanoid(DynamicsForm::kEnergy); }},
      {"humanoid fixed recursive",
       [] { return Humanoid(DynamicsForm::kRecursive); }},
  };
  std::printf(
      "CPU seconds: the first repetition (cold; the first model's also pays "
      "the process's one-time costs) and the best of %d. 1st eval: records "
      "the symbolic graph and compiles the stage program when compiled; 1st "
      "run: a fresh model built, compiled and run 0.01 s\n",
      repeats);
  std::printf("%-29s %4s %9s %10s %10s %12s %12s %6s\n", "model", "nv",
              "compiled", "build", "1st eval", "next eval", "1st run", "steps");
  // The first repetition of the first case also pays the process's
  // one-time costs (first use of the allocator's arenas, of the code
  // pages, of static tables): printed apart as "cold".
  for (const Case& c : cases) {
    Phases cold, best;
    Measure(c.make, &cold);
    best = cold;
    for (int r = 1; r < repeats; ++r) Measure(c.make, &best);
    for (const auto& [label, ph] :
         {std::pair<const char*, const Phases&>{"cold", cold}, {"best", best}})
      std::printf("%-24s %-4s %4d %9s %10.4f %10.4f %12.3e %12.4f %6ld\n",
                  c.name, label, ph.nv, ph.compiled ? "yes" : "no", ph.build,
                  ph.first, ph.second, ph.run, ph.steps);
  }
  return 0;
}
