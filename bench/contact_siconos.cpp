// Siconos 4.4's side of the bouncing ball (issue 36, item 8; docs/contact.md,
// "Side by side with MuJoCo and Siconos"): the ball of
// problems/models/bouncing_ball_contact.cpp (m = 1, dropped from rest at
// h0 = 1 m, g = 9.81, Newton's e = 0.9) as a LagrangianLinearTIDS with
// one LagrangianLinearTIR (the gap y) and a NewtonImpactNSL, run for 10 s
// by Siconos's two schemes:
//
//   ed   EventDriven with LsodarOSI (LSODAR's root finding locates each
//        impact; an impact LCP applies Newton's law, an
//        acceleration-level LCP decides whether a contact stays closed);
//        LSODAR's tolerances rtol = atol = --tol (default 1e-12: at 1e-10
//        and looser the run ends with an exception near the accumulation
//        point, a gap below Siconos's -_TOL_ED; measured, docs/contact.md)
//   mj   TimeStepping with MoreauJeanOSI (theta = 0.5) and one LCP per
//        step at the velocity level; step --step (default 0.002 s, MuJoCo's)
//
// Reported as one JSON line per run (each starting with '{'; Siconos
// prints its own diagnostics on stdout when it fails), as
// bench/contact_mujoco.cpp does:
// impact times (event-driven: the time of each nonsmooth event with a
// falling pre-impact velocity; Moreau-Jean: the step at which the
// percussion p(1) is nonzero after a step without), the restitution of
// the first impacts (post / pre velocity), the deepest penetration (-min
// y), the energy at given times, the number of events or steps and the
// loop's process CPU time. Siconos (Debian's libsiconos-kernel-dev and
// libsiconos-numerics-dev) is needed here only. The API follows Siconos's
// own examples (siconos-tutorials, examples/mechanics/BouncingBall:
// BouncingBallTS.cpp and BouncingBallED.cpp); the code is this project's.
//
// Newton's cradle (bench/cradle_side_by_side.py; docs/contact.md, "Newton's
// cradle beside Siconos and MuJoCo"): the balls of
// problems/models/newtons_cradle.cpp, by both schemes (cradle-ed,
// cradle-mj; default 0.1 s, Moreau-Jean at 1e-4 s), one JSON line each:
// the velocities after the first impact and at the end, the impact
// times, the kinetic energy at the end, the deepest overlap of two balls.
//
//   contact_siconos [ed|mj|rocking|cradle-ed|cradle-mj|all] [--tol T]
//     [--step H] [--t-end T] [--balls N] [--restitution E] [--spacing S]
//     [--activation-threshold A]
//
// Moreau-Jean activates a contact when its predicted gap y + h ydot / 2
// is at most MoreauJeanOSI's constraint activation threshold (Siconos's
// default 0; --activation-threshold sets it).
//
// Built by bench/CMakeLists.txt when Siconos is found, or by hand:
//   g++ -O2 -std=c++17 bench/contact_siconos.cpp -I/usr/include/siconos
//     -I/usr/include/siconos/kernel -I/usr/include/siconos/numerics
//     -lsiconos_kernel -lsiconos_numerics -o contact_siconos
#include <SiconosKernel.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace {

constexpr double kG = 9.81, kH0 = 1.0, kE = 0.9;

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string Num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.15g", x);
  return buf;
}

std::string Array(const std::vector<double>& x) {
  std::string out = "[";
  for (std::size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + Num(x[i]);
  return out + "]";
}

struct Ball {
  SP::LagrangianLinearTIDS ds;
  SP::Interaction inter;
  SP::NonSmoothDynamicalSystem nsds;
};

Ball MakeBall(double t_end) {
  Ball b;
  SP::SiconosMatrix mass(new SimpleMatrix(1, 1));
  (*mass)(0, 0) = 1.0;
  SP::SiconosVector q0(new SiconosVector(1)), v0(new SiconosVector(1));
  (*q0)(0) = kH0;
  (*v0)(0) = 0.0;
  b.ds.reset(new LagrangianLinearTIDS(q0, v0, mass));
  SP::SiconosVector weight(new SiconosVector(1));
  (*weight)(0) = -kG;
  b.ds->setFExtPtr(weight);
  SP::SimpleMatrix H(new SimpleMatrix(1, 1));
  (*H)(0, 0) = 1.0;
  SP::NonSmoothLaw law(new NewtonImpactNSL(kE));
  SP::Relation relation(new LagrangianLinearTIR(H));
  b.inter.reset(new Interaction(law, relation));
  b.nsds.reset(new NonSmoothDynamicalSystem(0.0, t_end));
  b.nsds->insertDynamicalSystem(b.ds);
  b.nsds->link(b.inter, b.ds);
  return b;
}

// Energy m g y + m v^2 / 2 (m = 1) sampled at the grid of energy_times.
struct Sampler {
  std::vector<double> times = {1, 2, 4, 6, 8, 10}, energy;
  void At(double t, double y, double v, double tol) {
    if (energy.size() < times.size() &&
        std::fabs(t - times[energy.size()]) < tol)
      energy.push_back(kG * y + 0.5 * v * v);
  }
};

void Print(const char* scheme,
           const std::string& settings,
           double t_end,
           long steps,
           double cpu,
           const std::vector<double>& impacts,
           const std::vector<double>& e_ratio,
           double min_y,
           const Sampler& s,
           double y_end,
           double v_end,
           bool ok,
           const std::string& error) {
  std::vector<double> times = s.times;
  times.resize(s.energy.size());
  std::printf(
      "{\"engine\": \"siconos\", \"case\": \"bouncing_ball\", \"variant\": "
      "\"%s\", \"settings\": %s, \"t_end\": %s, \"steps\": %ld, \"cpu_s\": "
      "%s, \"impact_times\": %s, \"restitution_velocity\": %s, "
      "\"max_penetration\": %s, \"energy_times\": %s, \"energy\": %s, "
      "\"final_y\": %s, \"final_v\": %s, \"ok\": %s, \"error\": \"%s\"}\n",
      scheme, settings.c_str(), Num(t_end).c_str(), steps, Num(cpu).c_str(),
      Array(impacts).c_str(), Array(e_ratio).c_str(),
      Num(std::max(0.0, -min_y)).c_str(), Array(times).c_str(),
      Array(s.energy).c_str(), Num(y_end).c_str(), Num(v_end).c_str(),
      ok ? "true" : "false", error.c_str());
  std::fflush(stdout);
}

// Event-driven: LSODAR between events, impact and acceleration LCPs at
// them; the output grid every 0.01 s (TimeDiscretisation events).
void RunEventDriven(double tol, double t_end, long max_events) {
  Ball b = MakeBall(t_end);
  SP::LsodarOSI osi(new LsodarOSI());
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, 0.01));
  SP::OneStepNSProblem impact(new LCP()), acceleration(new LCP());
  SP::EventDriven s(new EventDriven(b.nsds, td));
  s->insertIntegrator(osi);
  s->insertNonSmoothProblem(impact, SICONOS_OSNSP_ED_IMPACT);
  s->insertNonSmoothProblem(acceleration, SICONOS_OSNSP_ED_SMOOTH_ACC);
  osi->setTol(1, tol, tol);
  SP::EventsManager events = s->eventsManager();
  SP::SiconosVector q = b.ds->q(), v = b.ds->velocity();
  std::vector<double> impacts, ratio;
  Sampler sampler;
  double min_y = (*q)(0);
  long n = 0;
  bool ok = true;
  std::string error;
  const double cpu0 = CpuSeconds();
  try {
    while (s->hasNextEvent() && n < max_events) {
      s->advanceToEvent();
      const bool nonsmooth = events->nextEvent()->getType() == NS_EVENT;
      s->processEvents();
      ++n;
      const double t = s->startingTime();
      if (nonsmooth) {
        // The pre-impact state is kept in the memories (index 1).
        const double v_minus = b.ds->velocityMemory().getSiconosVector(1)(0);
        if (v_minus < 0) {
          impacts.push_back(t);
          ratio.push_back(-(*v)(0) / v_minus);
        }
      }
      min_y = std::min(min_y, (*q)(0));
      sampler.At(t, (*q)(0), (*v)(0), 1e-9);
    }
    if (n >= max_events) {
      ok = false;
      error = "stopped after " + std::to_string(max_events) +
              " events at t = " + Num(s->startingTime());
    }
  } catch (const std::exception& e) {  // Siconos::exception among them
    ok = false;
    error = "exception at t = " + Num(s->startingTime());
    std::fprintf(stderr, "contact_siconos (event-driven): %s\n",
                 boost::diagnostic_information(e).c_str());
  }
  const double cpu = CpuSeconds() - cpu0;
  char settings[200];
  std::snprintf(settings, sizeof(settings),
                "{\"integrator\": \"LsodarOSI\", \"rtol\": %s, \"atol\": %s, "
                "\"output_step\": 0.01}",
                Num(tol).c_str(), Num(tol).c_str());
  Print(("event_driven_tol" + Num(tol)).c_str(), settings, t_end, n, cpu,
        impacts, ratio, min_y, sampler, (*q)(0), (*v)(0), ok, error);
}

// Moreau-Jean time stepping: one velocity-level LCP per step.
void RunMoreauJean(double h, double t_end) {
  Ball b = MakeBall(t_end);
  SP::MoreauJeanOSI osi(new MoreauJeanOSI(0.5));
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem lcp(new LCP());
  SP::TimeStepping s(new TimeStepping(b.nsds, td, osi, lcp));
  SP::SiconosVector q = b.ds->q(), v = b.ds->velocity();
  SP::SiconosVector p = b.ds->p(1);
  std::vector<double> impacts, ratio;
  Sampler sampler;
  double min_y = (*q)(0), v_prev = (*v)(0);
  bool in_contact = false;
  long n = 0;
  bool ok = true;
  std::string error;
  const double cpu0 = CpuSeconds();
  try {
    while (s->hasNextEvent()) {
      s->computeOneStep();
      const double t = s->nextTime();
      const bool push = (*p)(0) > 0;
      if (push && !in_contact && v_prev < 0) {
        impacts.push_back(t);
        ratio.push_back(-(*v)(0) / v_prev);
      }
      in_contact = push;
      v_prev = (*v)(0);
      min_y = std::min(min_y, (*q)(0));
      sampler.At(t, (*q)(0), (*v)(0), 0.5 * h);
      s->nextStep();
      ++n;
    }
  } catch (const std::exception& e) {
    ok = false;
    error = "exception at step " + std::to_string(n);
    std::fprintf(stderr, "contact_siconos (Moreau-Jean): %s\n",
                 boost::diagnostic_information(e).c_str());
  }
  const double cpu = CpuSeconds() - cpu0;
  char settings[160];
  std::snprintf(settings, sizeof(settings),
                "{\"integrator\": \"MoreauJeanOSI\", \"theta\": 0.5, "
                "\"step\": %s}",
                Num(h).c_str());
  Print(("moreau_jean_h" + Num(h)).c_str(), settings, t_end, n, cpu, impacts,
        ratio, min_y, sampler, (*q)(0), (*v)(0), ok, error);
}

// ---- Housner's rocking block, Moreau-Jean with Coulomb friction

constexpr double kB = 0.1, kH = 0.3, kTheta0 = 0.1, kMu = 1.0;

// One bottom corner (side -1 left, +1 right) of the block (x, y, theta):
// y[0] its height (the gap), its Jacobian rows the gap's gradient and the
// corner's velocity along the ground (the friction row; y[1] unused).
class CornerR : public LagrangianScleronomousR {
 public:
  explicit CornerR(double side) : side_(side) {}
  void computeh(const BlockVector& q, BlockVector&, SiconosVector& y) override {
    const double th = q.getValue(2);
    y.setValue(0,
               q.getValue(1) + side_ * kB * std::sin(th) - kH * std::cos(th));
    y.setValue(1, 0.0);
  }
  void computeJachq(const BlockVector& q, BlockVector&) override {
    const double th = q.getValue(2), s = std::sin(th), c = std::cos(th);
    _jachq->setValue(0, 0, 0.0);
    _jachq->setValue(0, 1, 1.0);
    _jachq->setValue(0, 2, side_ * kB * c + kH * s);
    _jachq->setValue(1, 0, 1.0);
    _jachq->setValue(1, 1, 0.0);
    _jachq->setValue(1, 2, kH * c - side_ * kB * s);
  }

 private:
  double side_;
};

void RunRocking(double h, double t_end) {
  const double inertia = (kB * kB + kH * kH) / 3.0;  // m = 1
  SP::SiconosMatrix mass(new SimpleMatrix(3, 3));
  (*mass)(0, 0) = 1.0;
  (*mass)(1, 1) = 1.0;
  (*mass)(2, 2) = inertia;
  // Pivoting on the left corner at the origin: the centre at R(theta0) (b, h).
  const double c0 = std::cos(kTheta0), s0 = std::sin(kTheta0);
  SP::SiconosVector q0(new SiconosVector(3)), v0(new SiconosVector(3));
  (*q0)(0) = kB * c0 - kH * s0;
  (*q0)(1) = kB * s0 + kH * c0;
  (*q0)(2) = kTheta0;
  SP::LagrangianLinearTIDS block(new LagrangianLinearTIDS(q0, v0, mass));
  SP::SiconosVector weight(new SiconosVector(3));
  (*weight)(1) = -kG;
  block->setFExtPtr(weight);
  SP::NonSmoothDynamicalSystem nsds(new NonSmoothDynamicalSystem(0.0, t_end));
  nsds->insertDynamicalSystem(block);
  std::vector<SP::Interaction> corners;
  for (double side : {-1.0, 1.0}) {
    SP::NonSmoothLaw law(new NewtonImpactFrictionNSL(0.0, 0.0, kMu, 2));
    SP::Relation relation(new CornerR(side));
    corners.emplace_back(new Interaction(law, relation));
    nsds->link(corners.back(), block);
  }
  SP::MoreauJeanOSI osi(new MoreauJeanOSI(0.5));
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem fc(new FrictionContact(2, SICONOS_FRICTION_2D_NSGS));
  SP::TimeStepping s(new TimeStepping(nsds, td, osi, fc));
  SP::SiconosVector q = block->q(), v = block->velocity();
  auto gap = [&](double side) {
    return (*q)(1) + side * kB * std::sin((*q)(2)) - kH * std::cos((*q)(2));
  };
  auto energy = [&] {
    return 0.5 * ((*v)(0) * (*v)(0) + (*v)(1) * (*v)(1)) +
           0.5 * inertia * (*v)(2) * (*v)(2) + kG * (*q)(1);
  };
  std::vector<double> crossings, amplitudes, e_at;
  std::vector<double> energy_times = {0.5, 1, 2, 3};
  double min_gap = 0.0, amp = kTheta0, t_prev = 0.0, th_prev = kTheta0;
  long n = 0;
  bool ok = true;
  std::string error;
  const double cpu0 = CpuSeconds();
  try {
    while (s->hasNextEvent()) {
      s->computeOneStep();
      const double t = s->nextTime(), th = (*q)(2);
      if ((th_prev > 0 && th <= 0) || (th_prev < 0 && th >= 0)) {
        crossings.push_back(t_prev + (t - t_prev) * th_prev / (th_prev - th));
        amplitudes.push_back(amp);
        amp = 0.0;
      }
      amp = std::max(amp, std::fabs(th));
      min_gap = std::min({min_gap, gap(-1.0), gap(1.0)});
      if (e_at.size() < energy_times.size() &&
          std::fabs(t - energy_times[e_at.size()]) < 0.5 * h)
        e_at.push_back(energy());
      t_prev = t;
      th_prev = th;
      s->nextStep();
      ++n;
    }
  } catch (const std::exception& e) {
    ok = false;
    error = "exception at step " + std::to_string(n);
    std::fprintf(stderr, "contact_siconos (rocking block): %s\n",
                 boost::diagnostic_information(e).c_str());
  }
  const double cpu = CpuSeconds() - cpu0;
  amplitudes.push_back(amp);
  energy_times.resize(e_at.size());
  std::printf(
      "{\"engine\": \"siconos\", \"case\": \"rocking_block\", \"variant\": "
      "\"moreau_jean_h%s\", \"settings\": {\"integrator\": "
      "\"MoreauJeanOSI\", \"theta\": 0.5, \"step\": %s, \"law\": "
      "\"NewtonImpactFrictionNSL(en 0, et 0, mu 1)\", \"problem\": "
      "\"FrictionContact(2), NSGS\"}, \"t_end\": %s, \"steps\": %ld, "
      "\"cpu_s\": %s, \"theta_zero_crossings\": %s, \"amplitudes\": %s, "
      "\"max_penetration\": %s, \"energy_times\": %s, \"energy\": %s, "
      "\"final_q\": %s, \"ok\": %s, \"error\": \"%s\"}\n",
      Num(h).c_str(), Num(h).c_str(), Num(t_end).c_str(), n, Num(cpu).c_str(),
      Array(crossings).c_str(), Array(amplitudes).c_str(),
      Num(-min_gap).c_str(), Array(energy_times).c_str(), Array(e_at).c_str(),
      Array({(*q)(0), (*q)(1), (*q)(2)}).c_str(), ok ? "true" : "false",
      error.c_str());
  std::fflush(stdout);
}

// ---- Newton's cradle (problems/models/newtons_cradle.cpp): N balls of
// mass m = 0.1 and diameter d = 0.05 on a line, ball 1 at v0 = 1 m/s
// gap0 = 0.01 m from the others, which rest `spacing` apart (0: touching).
// One LagrangianLinearTIDS of the N positions, N - 1 interactions
// y_i = x_(i+1) - x_i - d (LagrangianLinearTIR, H = (-1, 1), e = -d) with
// NewtonImpactNSL(e). No gravity (the balls slide along x).

constexpr double kCradleM = 0.1, kCradleD = 0.05, kCradleV0 = 1.0,
                 kCradleGap0 = 0.01;

struct CradleSpec {
  int balls = 3;
  double e = 1.0, spacing = 0.0;
};

struct Cradle {
  SP::LagrangianLinearTIDS ds;
  SP::NonSmoothDynamicalSystem nsds;
};

Cradle MakeCradle(const CradleSpec& c, double t_end) {
  const int n = c.balls;
  Cradle out;
  SP::SiconosMatrix mass(new SimpleMatrix(n, n));
  SP::SiconosVector q0(new SiconosVector(n)), v0(new SiconosVector(n));
  for (int i = 0; i < n; ++i) {
    (*mass)(i, i) = kCradleM;
    (*q0)(i) =
        i == 0 ? -kCradleGap0 - kCradleD : (i - 1) * (kCradleD + c.spacing);
    (*v0)(i) = i == 0 ? kCradleV0 : 0.0;
  }
  out.ds.reset(new LagrangianLinearTIDS(q0, v0, mass));
  out.nsds.reset(new NonSmoothDynamicalSystem(0.0, t_end));
  out.nsds->insertDynamicalSystem(out.ds);
  for (int i = 0; i + 1 < n; ++i) {
    SP::SimpleMatrix H(new SimpleMatrix(1, n));
    (*H)(0, i) = -1.0;
    (*H)(0, i + 1) = 1.0;
    SP::SiconosVector b(new SiconosVector(1));
    (*b)(0) = -kCradleD;
    SP::NonSmoothLaw law(new NewtonImpactNSL(c.e));
    SP::Relation relation(new LagrangianLinearTIR(H, b));
    SP::Interaction inter(new Interaction(law, relation));
    out.nsds->link(inter, out.ds);
  }
  return out;
}

std::vector<double> Values(const SiconosVector& x) {
  std::vector<double> out(x.size());
  for (unsigned i = 0; i < x.size(); ++i) out[i] = x(i);
  return out;
}

// The smallest gap x_(i+1) - x_i - d of the positions q.
double MinGap(const SiconosVector& q) {
  double g = 1.0;
  for (unsigned i = 0; i + 1 < q.size(); ++i)
    g = std::min(g, q(i + 1) - q(i) - kCradleD);
  return g;
}

double Kinetic(const SiconosVector& v) {
  double s = 0.0;
  for (unsigned i = 0; i < v.size(); ++i) s += v(i) * v(i);
  return 0.5 * kCradleM * s;
}

void PrintCradle(const char* variant,
                 const std::string& settings,
                 const CradleSpec& c,
                 double t_end,
                 long steps,
                 double cpu,
                 const std::vector<double>& impacts,
                 const std::vector<double>& first_v,
                 const SiconosVector& v_end,
                 double min_gap,
                 bool ok,
                 const std::string& error) {
  std::printf(
      "{\"engine\": \"siconos\", \"case\": \"newtons_cradle\", \"variant\": "
      "\"%s\", \"balls\": %d, \"restitution\": %s, \"spacing\": %s, "
      "\"settings\": %s, \"t_end\": %s, \"steps\": %ld, \"cpu_s\": %s, "
      "\"impact_times\": %s, \"first_impact_v\": %s, \"final_v\": %s, "
      "\"energy0\": %s, \"energy_final\": %s, \"max_penetration\": %s, "
      "\"ok\": %s, \"error\": \"%s\"}\n",
      variant, c.balls, Num(c.e).c_str(), Num(c.spacing).c_str(),
      settings.c_str(), Num(t_end).c_str(), steps, Num(cpu).c_str(),
      Array(impacts).c_str(), Array(first_v).c_str(),
      Array(Values(v_end)).c_str(),
      Num(0.5 * kCradleM * kCradleV0 * kCradleV0).c_str(),
      Num(Kinetic(v_end)).c_str(), Num(std::max(0.0, -min_gap)).c_str(),
      ok ? "true" : "false", error.c_str());
  std::fflush(stdout);
}

// Event-driven: every impact LCP spans the contacts whose gap is closed
// (Siconos's index set 1), so a strike on a touching row is one
// simultaneous impact. An impact: a nonsmooth event at which some gap was
// closing (from the pre-event velocities in the memory).
void RunCradleEventDriven(const CradleSpec& c,
                          double tol,
                          double t_end,
                          long max_events) {
  Cradle k = MakeCradle(c, t_end);
  SP::LsodarOSI osi(new LsodarOSI());
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, 0.001));
  SP::OneStepNSProblem impact(new LCP()), acceleration(new LCP());
  SP::EventDriven s(new EventDriven(k.nsds, td));
  s->insertIntegrator(osi);
  s->insertNonSmoothProblem(impact, SICONOS_OSNSP_ED_IMPACT);
  s->insertNonSmoothProblem(acceleration, SICONOS_OSNSP_ED_SMOOTH_ACC);
  osi->setTol(1, tol, tol);
  SP::EventsManager events = s->eventsManager();
  SP::SiconosVector q = k.ds->q(), v = k.ds->velocity();
  std::vector<double> impacts, first_v;
  double min_gap = MinGap(*q);
  long n = 0;
  bool ok = true;
  std::string error;
  const double cpu0 = CpuSeconds();
  try {
    while (s->hasNextEvent() && n < max_events) {
      s->advanceToEvent();
      const bool nonsmooth = events->nextEvent()->getType() == NS_EVENT;
      s->processEvents();
      ++n;
      if (nonsmooth) {
        const SiconosVector& vm = k.ds->velocityMemory().getSiconosVector(1);
        bool closing = false;
        for (unsigned i = 0; i + 1 < vm.size(); ++i)
          closing = closing || ((*q)(i + 1) - (*q)(i)-kCradleD < 1e-9 &&
                                vm(i + 1) - vm(i) < 0);
        if (closing) {
          impacts.push_back(s->startingTime());
          if (first_v.empty()) first_v = Values(*v);
        }
      }
      min_gap = std::min(min_gap, MinGap(*q));
    }
    if (n >= max_events) {
      ok = false;
      error = "stopped after " + std::to_string(max_events) + " events";
    }
  } catch (const std::exception& e) {
    ok = false;
    error = "exception at t = " + Num(s->startingTime());
    std::fprintf(stderr, "contact_siconos (cradle, event-driven): %s\n",
                 boost::diagnostic_information(e).c_str());
  }
  const double cpu = CpuSeconds() - cpu0;
  char settings[200];
  std::snprintf(settings, sizeof(settings),
                "{\"integrator\": \"LsodarOSI\", \"rtol\": %s, \"atol\": %s, "
                "\"output_step\": 0.001}",
                Num(tol).c_str(), Num(tol).c_str());
  PrintCradle(("event_driven_tol" + Num(tol)).c_str(), settings, c, t_end, n,
              cpu, impacts, first_v, *v, min_gap, ok, error);
}

// Moreau-Jean: one velocity-level LCP a step over the contacts whose
// predicted gap y + h ydot / 2 is closed. An impact: a step with a nonzero
// percussion after a step without.
void RunCradleMoreauJean(const CradleSpec& c,
                         double h,
                         double threshold,
                         double t_end) {
  Cradle k = MakeCradle(c, t_end);
  SP::MoreauJeanOSI osi(new MoreauJeanOSI(0.5));
  if (threshold >= 0) osi->setConstraintActivationThreshold(threshold);
  SP::TimeDiscretisation td(new TimeDiscretisation(0.0, h));
  SP::OneStepNSProblem lcp(new LCP());
  SP::TimeStepping s(new TimeStepping(k.nsds, td, osi, lcp));
  SP::SiconosVector q = k.ds->q(), v = k.ds->velocity();
  SP::SiconosVector p = k.ds->p(1);
  std::vector<double> impacts, first_v;
  double min_gap = MinGap(*q);
  bool pushed = false;
  long n = 0;
  bool ok = true;
  std::string error;
  const double cpu0 = CpuSeconds();
  try {
    while (s->hasNextEvent()) {
      s->computeOneStep();
      bool push = false;
      for (unsigned i = 0; i < p->size(); ++i) push = push || (*p)(i) != 0.0;
      if (push && !pushed) {
        impacts.push_back(s->nextTime());
        if (first_v.empty()) first_v = Values(*v);
      }
      pushed = push;
      min_gap = std::min(min_gap, MinGap(*q));
      s->nextStep();
      ++n;
    }
  } catch (const std::exception& e) {
    ok = false;
    error = "exception at step " + std::to_string(n);
    std::fprintf(stderr, "contact_siconos (cradle, Moreau-Jean): %s\n",
                 boost::diagnostic_information(e).c_str());
  }
  const double cpu = CpuSeconds() - cpu0;
  char settings[160];
  std::snprintf(settings, sizeof(settings),
                "{\"integrator\": \"MoreauJeanOSI\", \"theta\": 0.5, "
                "\"step\": %s, \"activation_threshold\": %s}",
                Num(h).c_str(),
                Num(osi->constraintActivationThreshold()).c_str());
  std::string variant = "moreau_jean_h" + Num(h);
  if (threshold >= 0) variant += "_threshold" + Num(threshold);
  PrintCradle(variant.c_str(), settings, c, t_end, n, cpu, impacts, first_v, *v,
              min_gap, ok, error);
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "all";
  double tol = 1e-12, h = -1.0, t_end = -1.0;  // -1: the case's default
  long max_events = 100000;
  double threshold = -1.0;  // cradle-mj: -1 keeps Siconos's default
  CradleSpec cradle;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tol" && i + 1 < argc) {
      tol = std::atof(argv[++i]);
    } else if (a == "--step" && i + 1 < argc) {
      h = std::atof(argv[++i]);
    } else if (a == "--t-end" && i + 1 < argc) {
      t_end = std::atof(argv[++i]);
    } else if (a == "--max-events" && i + 1 < argc) {
      max_events = std::atol(argv[++i]);
    } else if (a == "--balls" && i + 1 < argc) {
      cradle.balls = std::atoi(argv[++i]);
    } else if (a == "--restitution" && i + 1 < argc) {
      cradle.e = std::atof(argv[++i]);
    } else if (a == "--activation-threshold" && i + 1 < argc) {
      threshold = std::atof(argv[++i]);
    } else if (a == "--spacing" && i + 1 < argc) {
      cradle.spacing = std::atof(argv[++i]);
    } else if (a == "ed" || a == "mj" || a == "rocking" || a == "all" ||
               a == "cradle-ed" || a == "cradle-mj") {
      which = a;
    } else {
      std::fprintf(stderr,
                   "usage: %s [ed|mj|rocking|cradle-ed|cradle-mj|all] "
                   "[--tol T] [--step H] [--t-end T] [--max-events N] "
                   "[--balls N] [--restitution E] [--spacing S] "
                   "[--activation-threshold A]\n"
                   "unknown argument '%s'\n",
                   argv[0], a.c_str());
      return 2;
    }
  }
  if (cradle.balls < 2 || cradle.e < 0 || cradle.e > 1 || cradle.spacing < 0) {
    std::fprintf(stderr,
                 "contact_siconos: --balls >= 2, --restitution in "
                 "[0, 1], --spacing >= 0\n");
    return 2;
  }
  const bool cradle_case = which == "cradle-ed" || which == "cradle-mj";
  const double te = t_end > 0 ? t_end : cradle_case ? 0.1 : 10.0;
  const double step = h > 0 ? h : cradle_case ? 1e-4 : 0.002;
  if (which == "ed" || which == "all") RunEventDriven(tol, te, max_events);
  if (which == "mj" || which == "all") RunMoreauJean(step, te);
  if (which == "rocking") RunRocking(step, te);
  if (which == "cradle-ed") RunCradleEventDriven(cradle, tol, te, max_events);
  if (which == "cradle-mj") RunCradleMoreauJean(cradle, step, threshold, te);
  return 0;
}
