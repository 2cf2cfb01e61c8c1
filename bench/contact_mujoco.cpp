// MuJoCo 2.2.2's side of the contact comparison (issues 36 and 37;
// docs/contact.md, "Side by side with MuJoCo and Siconos"): the bouncing
// ball, Housner's
// rocking block and the block on an incline below the friction angle, each
// an MJCF string loaded from memory, stepped with mj_step, and reported as
// one JSON line per run. bench/contact_side_by_side.py runs this program
// beside the Daedalus executables and prints the tables. It links MuJoCo
// only (Debian's libmujoco-dev 2.2.2), no Daedalus library:
//
//   contact_mujoco [ball|rocking|incline|cradle|all] [--variant NAME]
//     [--t-end T] [--balls N] [--restitution E] [--spacing S]
//
// ("all" leaves the cradle out; bench/cradle_side_by_side.py runs it.)
//
// Built by bench/CMakeLists.txt when MuJoCo is found, or by hand:
//   g++ -O2 -std=c++20 bench/contact_mujoco.cpp -lmujoco -o contact_mujoco
//
// The models (the geometry of problems/models/*.cpp):
//
// ball     a sphere (radius 0.1 m, m = 1) on a vertical slide joint above a
//          plane, its bottom at h0 = 1 m, g = 9.81, condim 1 (frictionless:
//          one constraint row, so that MuJoCo's one-row analysis applies).
//          MuJoCo has no restitution coefficient. In constraint space its
//          contact is the damped spring a + d (b v + k r) = (1 - d) a0
//          (MuJoCo's documentation, Modeling, "Solver parameters",
//          eq:constraint; d the impedance, r the penetration), and solref
//          in the "direct" format (-stiffness, -damping) sets k and b. In
//          2.2.2 (efc_KBIP, read back) k = stiffness / d_width^2 and b =
//          damping / d_width (today's documentation has k = stiffness d(r)
//          / d_width^2), so at d = d_width the effective spring d k is
//          stiffness / d_width and the damping d b is damping. A linear
//          oscillator with damping ratio zeta leaves after half a period
//          with e = exp(-pi zeta / sqrt(1 - zeta^2)); so for e = 0.9: zeta
//          = -ln e / sqrt(pi^2 + ln^2 e) = 0.033518, and for the natural
//          frequency w: stiffness = d_width w^2, damping = 2 zeta w. Runs:
//          w = 50 rad/s (MuJoCo's default time constant 0.02 s), 150 and
//          500 rad/s, at MuJoCo's default time step 0.002 s and default
//          solimp (0.9 0.95 0.001 0.5 2); "default" is solref 0.02 1
//          (critically damped: no bounce). The restitution it actually
//          gives is measured: the separation speed over the touching speed
//          of each contact, and sqrt of successive apex heights.
// rocking  Housner's block: half width b = 0.1, half height h = 0.3, m = 1,
//          I = m (b^2 + h^2) / 3, on slide x, slide z and a hinge about -y
//          (so that theta turns x towards z, as in the model), a box of
//          half depth 0.05 (four corner contacts), friction 1 (MuJoCo's
//          default, Daedalus's mu), released from rest at theta0 = 0.1 on
//          its left corner; MuJoCo's defaults otherwise (solref 0.02 1:
//          critically damped, the nearest thing to e = 0).
// incline  a cube (half size 0.1 m, m = 1) at rest on a plane inclined at
//          alpha = 0.3 rad (the plane and the cube turned by alpha about
//          y), friction 0.4 (MuJoCo has one coefficient: mu_s; the block
//          should stick since tan 0.3 = 0.309 < 0.4), a free joint, all
//          MuJoCo defaults (time step 0.002, solref 0.02 1, solimp 0.9
//          0.95 0.001 0.5 2, Newton solver, pyramidal cone); variants with
//          the elliptic cone, elliptic with impratio 10, and
//          noslip_iterations 10 on either cone (MuJoCo's documented remedy
//          for slip).
// cradle   Newton's cradle (problems/models/newtons_cradle.cpp): --balls N
//          spheres (diameter d = 0.05 m, m = 0.1) on slide joints along x,
//          no gravity, condim 1; ball 1 at v0 = 1 m/s, 0.01 m from the
//          others, which rest --spacing apart (default 0: touching).
//          Variants: "default" (solref 0.02 1, time step 0.002 s);
//          "direct_w500" and "direct_w5000_h1e-4": solref in the direct
//          format as for the ball, w = 500 rad/s at 0.002 s and w = 5000
//          rad/s at 1e-4 s, the damping ratio that gives one pair
//          --restitution (0 at e = 1). Reported at --t-end (default 0.1
//          s): the velocities, the kinetic energy, the deepest overlap, the
//          first touch and the last release of overlapping contacts.
//
// Times: the loop's process CPU time (clock_gettime
// (CLOCK_PROCESS_CPUTIME_ID)), without loading the model; the script adds
// each process's own time.
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kG = 9.81;

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string Num(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.12g", x);
  return buf;
}

std::string Array(const std::vector<double>& x) {
  std::string out = "[";
  for (std::size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + Num(x[i]);
  return out + "]";
}

// A model and its data, loaded from an MJCF string through a VFS.
class Sim {
 public:
  explicit Sim(const std::string& xml) {
    auto vfs = std::make_unique<mjVFS>();
    mj_defaultVFS(vfs.get());
    const char* name = "model.xml";
    if (mj_makeEmptyFileVFS(vfs.get(), name, static_cast<int>(xml.size())) != 0)
      throw std::runtime_error("MuJoCo VFS: cannot add the model");
    std::memcpy(vfs->filedata[mj_findFileVFS(vfs.get(), name)], xml.data(),
                xml.size());
    char error[1000] = "";
    m_ = mj_loadXML(name, vfs.get(), error, sizeof(error));
    mj_deleteVFS(vfs.get());
    if (!m_) throw std::runtime_error(std::string("MuJoCo: ") + error);
    d_ = mj_makeData(m_);
  }
  Sim(const Sim&) = delete;
  Sim& operator=(const Sim&) = delete;
  ~Sim() {
    mj_deleteData(d_);
    mj_deleteModel(m_);
  }
  mjModel* m() const { return m_; }
  mjData* d() const { return d_; }

  // Deepest penetration among the current contacts (0 if none).
  double Penetration() const {
    double p = 0.0;
    for (int i = 0; i < d_->ncon; ++i) p = std::max(p, -d_->contact[i].dist);
    return p;
  }

 private:
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
};

// The settings every JSON line repeats.
std::string Settings(const mjModel* m) {
  const char* cone = m->opt.cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal";
  const char* solver = m->opt.solver == mjSOL_NEWTON ? "Newton"
                       : m->opt.solver == mjSOL_CG   ? "CG"
                                                     : "PGS";
  const char* integrator = m->opt.integrator == mjINT_RK4 ? "RK4" : "Euler";
  char buf[400];
  std::snprintf(buf, sizeof(buf),
                "{\"timestep\": %s, \"integrator\": \"%s\", \"solver\": "
                "\"%s\", \"iterations\": %d, \"tolerance\": %s, \"cone\": "
                "\"%s\", \"impratio\": %s, \"noslip_iterations\": %d, "
                "\"solref\": %s, \"solimp\": %s}",
                Num(m->opt.timestep).c_str(), integrator, solver,
                m->opt.iterations, Num(m->opt.tolerance).c_str(), cone,
                Num(m->opt.impratio).c_str(), m->opt.noslip_iterations,
                Array({m->geom_solref[0], m->geom_solref[1]}).c_str(),
                Array({m->geom_solimp[0], m->geom_solimp[1], m->geom_solimp[2],
                       m->geom_solimp[3], m->geom_solimp[4]})
                    .c_str());
  return buf;
}

// Linear interpolation of the time at which x crosses 0 between two steps.
double Crossing(double t0, double x0, double t1, double x1) {
  return t0 + (t1 - t0) * x0 / (x0 - x1);
}

// ---- bouncing ball

constexpr double kBallRadius = 0.1;
constexpr double kH0 = 1.0;
constexpr double kRestitution = 0.9;

struct BallVariant {
  const char* name;
  double omega;  // natural frequency of the contact spring [rad/s]; 0: default
};

void RunBall(const BallVariant& v, double t_end) {
  const double ln_e = std::log(kRestitution);
  const double zeta = -ln_e / std::sqrt(kPi * kPi + ln_e * ln_e);
  // MuJoCo 2.2.2 scales the direct format to k = stiffness / d_width^2, b
  // = damping / d_width (efc_KBIP, read back), so that at d = d_width the
  // effective spring is d k = stiffness / d_width: stiffness = d_width w^2
  // makes it w^2, and the effective damping d b = damping = 2 zeta w.
  const double d_width = 0.95;  // solimp[1], MuJoCo's default
  const double stiffness = d_width * v.omega * v.omega;
  const double damping = 2.0 * zeta * v.omega;
  char solref[80];
  if (v.omega > 0)
    std::snprintf(solref, sizeof(solref), "solref=\"%.17g %.17g\"", -stiffness,
                  -damping);
  else
    solref[0] = '\0';
  char xml[1200];
  std::snprintf(xml, sizeof(xml),
                "<mujoco model=\"bouncing_ball\">\n"
                "  <option timestep=\"0.002\" gravity=\"0 0 %.17g\"/>\n"
                "  <default><geom condim=\"1\" %s/></default>\n"
                "  <worldbody>\n"
                "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\"/>\n"
                "    <body name=\"ball\" pos=\"0 0 %.17g\">\n"
                "      <joint name=\"z\" type=\"slide\" axis=\"0 0 1\"/>\n"
                "      <geom type=\"sphere\" size=\"%.17g\" mass=\"1\"/>\n"
                "    </body>\n"
                "  </worldbody>\n"
                "</mujoco>\n",
                -kG, solref, kH0 + kBallRadius, kBallRadius);
  Sim sim(xml);
  mjModel* m = sim.m();
  mjData* d = sim.d();
  const double h = m->opt.timestep;
  const long steps = std::lround(t_end / h);
  auto gap = [&] { return kH0 + d->qpos[0]; };  // the ball's bottom height
  // T + V with m = 1, and in contact the spring's d k r^2 / 2 (d k from
  // efc_KBIP: the stiffness and impedance of the step's contact row).
  auto energy = [&] {
    double e = kG * gap() + 0.5 * d->qvel[0] * d->qvel[0];
    if (gap() < 0 && d->nefc > 0)
      e += 0.5 * d->efc_KBIP[0] * d->efc_KBIP[2] * gap() * gap();
    return e;
  };
  std::vector<double> touch, touch_speed, leave, leave_speed, apex, e_at;
  std::vector<double> energy_times = {1, 2, 4, 6, 8, 10};
  std::vector<double> kbip;  // efc_KBIP at the deepest penetration
  double max_pen = 0.0, apex_now = gap();
  double t_prev = d->time, g_prev = gap(), v_prev = d->qvel[0];
  std::size_t next_e = 0;
  const double cpu0 = CpuSeconds();
  for (long s = 0; s < steps; ++s) {
    mj_step(m, d);
    const double t = d->time, g = gap(), vz = d->qvel[0];
    if (g_prev > 0 && g <= 0) {
      const double tc = Crossing(t_prev, g_prev, t, g);
      touch.push_back(tc);
      touch_speed.push_back(
          -(v_prev + (vz - v_prev) * (tc - t_prev) / (t - t_prev)));
      apex.push_back(apex_now);
    } else if (g_prev <= 0 && g > 0) {
      const double tc = Crossing(t_prev, g_prev, t, g);
      leave.push_back(tc);
      leave_speed.push_back(v_prev +
                            (vz - v_prev) * (tc - t_prev) / (t - t_prev));
      apex_now = g;
    }
    if (g > 0) apex_now = std::max(apex_now, g);
    if (-g > max_pen) {
      max_pen = -g;
      if (d->nefc > 0)
        kbip.assign(d->efc_KBIP, d->efc_KBIP + 4);  // one row (condim 1)
    }
    if (next_e < energy_times.size() &&
        std::fabs(t - energy_times[next_e]) < 0.5 * h) {
      e_at.push_back(energy());
      ++next_e;
    }
    t_prev = t;
    g_prev = g;
    v_prev = vz;
  }
  const double cpu = CpuSeconds() - cpu0;
  std::vector<double> e_velocity, e_apex;
  for (std::size_t k = 0; k < leave.size() && k < touch.size(); ++k)
    e_velocity.push_back(leave_speed[k] / touch_speed[k]);
  for (std::size_t k = 1; k < apex.size(); ++k)
    if (apex[k - 1] > 0) e_apex.push_back(std::sqrt(apex[k] / apex[k - 1]));
  energy_times.resize(e_at.size());
  std::printf(
      "{\"engine\": \"mujoco\", \"case\": \"bouncing_ball\", \"variant\": "
      "\"%s\", \"settings\": %s, \"omega\": %s, \"zeta\": %s, "
      "\"stiffness\": %s, \"damping\": %s, \"kbip_at_max_penetration\": %s, "
      "\"t_end\": %s, \"steps\": %ld, \"cpu_s\": %s, \"touch_times\": %s, "
      "\"touch_speeds\": %s, \"leave_times\": %s, \"leave_speeds\": %s, "
      "\"restitution_velocity\": %s, \"restitution_apex\": %s, "
      "\"max_penetration\": %s, \"final_gap\": %s, \"final_velocity\": %s, "
      "\"energy_times\": %s, \"energy\": %s}\n",
      v.name, Settings(m).c_str(), Num(v.omega).c_str(), Num(zeta).c_str(),
      Num(stiffness).c_str(), Num(damping).c_str(), Array(kbip).c_str(),
      Num(t_end).c_str(), steps, Num(cpu).c_str(), Array(touch).c_str(),
      Array(touch_speed).c_str(), Array(leave).c_str(),
      Array(leave_speed).c_str(), Array(e_velocity).c_str(),
      Array(e_apex).c_str(), Num(max_pen).c_str(), Num(gap()).c_str(),
      Num(d->qvel[0]).c_str(), Array(energy_times).c_str(),
      Array(e_at).c_str());
}

// ---- rocking block

constexpr double kB = 0.1, kH = 0.3, kTheta0 = 0.1;

void RunRocking(const char* variant, const char* option, double t_end) {
  const double inertia = (kB * kB + kH * kH) / 3.0;  // m = 1
  char xml[1400];
  std::snprintf(
      xml, sizeof(xml),
      "<mujoco model=\"rocking_block\">\n"
      "  <option timestep=\"0.002\" gravity=\"0 0 %.17g\" %s/>\n"
      "  <worldbody>\n"
      "    <geom name=\"ground\" type=\"plane\" size=\"0 0 1\"/>\n"
      "    <body name=\"block\">\n"
      "      <joint name=\"x\" type=\"slide\" axis=\"1 0 0\"/>\n"
      "      <joint name=\"z\" type=\"slide\" axis=\"0 0 1\"/>\n"
      "      <joint name=\"theta\" type=\"hinge\" axis=\"0 -1 0\"/>\n"
      "      <geom type=\"box\" size=\"%.17g 0.05 %.17g\"/>\n"
      "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"%.17g %.17g "
      "%.17g\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n",
      -kG, option, kB, kH, inertia, inertia, inertia);
  Sim sim(xml);
  mjModel* m = sim.m();
  mjData* d = sim.d();
  // Pivoting on the left corner at the origin: the centre at R(theta0) (b, h).
  const double c = std::cos(kTheta0), s = std::sin(kTheta0);
  d->qpos[0] = kB * c - kH * s;
  d->qpos[1] = kB * s + kH * c;
  d->qpos[2] = kTheta0;
  mj_forward(m, d);
  const double h = m->opt.timestep;
  const long steps = std::lround(t_end / h);
  auto energy = [&] {
    const double* v = d->qvel;
    return 0.5 * (v[0] * v[0] + v[1] * v[1]) + 0.5 * inertia * v[2] * v[2] +
           kG * d->qpos[1];
  };
  std::vector<double> crossings, amplitudes, e_at;
  std::vector<double> energy_times = {0.5, 1, 2, 3};
  double max_pen = sim.Penetration(), amp = std::fabs(d->qpos[2]);
  double t_prev = d->time, th_prev = d->qpos[2];
  const double e0 = energy();
  std::size_t next_e = 0;
  const double cpu0 = CpuSeconds();
  for (long k = 0; k < steps; ++k) {
    mj_step(m, d);
    const double t = d->time, th = d->qpos[2];
    if ((th_prev > 0 && th <= 0) || (th_prev < 0 && th >= 0)) {
      crossings.push_back(Crossing(t_prev, th_prev, t, th));
      amplitudes.push_back(amp);
      amp = 0.0;
    }
    amp = std::max(amp, std::fabs(th));
    max_pen = std::max(max_pen, sim.Penetration());
    if (next_e < energy_times.size() &&
        std::fabs(t - energy_times[next_e]) < 0.5 * h) {
      e_at.push_back(energy());
      ++next_e;
    }
    t_prev = t;
    th_prev = th;
  }
  const double cpu = CpuSeconds() - cpu0;
  amplitudes.push_back(amp);  // after the last crossing
  energy_times.resize(e_at.size());
  std::printf(
      "{\"engine\": \"mujoco\", \"case\": \"rocking_block\", \"variant\": "
      "\"%s\", \"settings\": %s, \"t_end\": %s, \"steps\": %ld, \"cpu_s\": "
      "%s, \"theta_zero_crossings\": %s, \"amplitudes\": %s, "
      "\"max_penetration\": %s, \"final_qpos\": %s, \"final_qvel\": %s, "
      "\"energy0\": %s, \"energy_times\": %s, \"energy\": %s}\n",
      variant, Settings(m).c_str(), Num(t_end).c_str(), steps, Num(cpu).c_str(),
      Array(crossings).c_str(), Array(amplitudes).c_str(), Num(max_pen).c_str(),
      Array({d->qpos[0], d->qpos[1], d->qpos[2]}).c_str(),
      Array({d->qvel[0], d->qvel[1], d->qvel[2]}).c_str(), Num(e0).c_str(),
      Array(energy_times).c_str(), Array(e_at).c_str());
}

// ---- block on an incline

constexpr double kAlpha = 0.3, kMu = 0.4, kHalf = 0.1;

void RunIncline(const char* variant, const char* option, double t_end) {
  const double qw = std::cos(0.5 * kAlpha), qy = std::sin(0.5 * kAlpha);
  // The plane's normal n = (sin alpha, 0, cos alpha); down the slope
  // s = (cos alpha, 0, -sin alpha); the cube's centre at n * half size.
  const double n[3] = {std::sin(kAlpha), 0.0, std::cos(kAlpha)};
  const double down[3] = {std::cos(kAlpha), 0.0, -std::sin(kAlpha)};
  char xml[1400];
  std::snprintf(
      xml, sizeof(xml),
      "<mujoco model=\"block_on_incline\">\n"
      "  <option timestep=\"0.002\" gravity=\"0 0 %.17g\" %s/>\n"
      "  <default><geom friction=\"%.17g 0.005 0.0001\"/></default>\n"
      "  <worldbody>\n"
      "    <geom name=\"incline\" type=\"plane\" size=\"0 0 1\" "
      "quat=\"%.17g 0 %.17g 0\"/>\n"
      "    <body name=\"block\" pos=\"%.17g 0 %.17g\" quat=\"%.17g 0 %.17g "
      "0\">\n"
      "      <freejoint/>\n"
      "      <geom type=\"box\" size=\"%.17g %.17g %.17g\" mass=\"1\"/>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "</mujoco>\n",
      -kG, option, kMu, qw, qy, n[0] * kHalf, n[2] * kHalf, qw, qy, kHalf,
      kHalf, kHalf);
  Sim sim(xml);
  mjModel* m = sim.m();
  mjData* d = sim.d();
  mj_forward(m, d);
  const double p0[3] = {d->qpos[0], d->qpos[1], d->qpos[2]};
  auto along = [&](const double* dir) {
    double x = 0.0;
    for (int i = 0; i < 3; ++i) x += (d->qpos[i] - p0[i]) * dir[i];
    return x;
  };
  const double h = m->opt.timestep;
  const long steps = std::lround(t_end / h);
  std::vector<double> times = {0.1, 1, 2, 5, 9, 10}, disp, normal;
  double max_pen = 0.0;
  std::size_t next = 0;
  const double cpu0 = CpuSeconds();
  for (long k = 0; k < steps; ++k) {
    mj_step(m, d);
    max_pen = std::max(max_pen, sim.Penetration());
    if (next < times.size() && std::fabs(d->time - times[next]) < 0.5 * h) {
      disp.push_back(along(down));
      normal.push_back(along(n));
      ++next;
    }
  }
  const double cpu = CpuSeconds() - cpu0;
  times.resize(disp.size());
  std::printf(
      "{\"engine\": \"mujoco\", \"case\": \"block_on_incline\", \"variant\": "
      "\"%s\", \"settings\": %s, \"t_end\": %s, \"steps\": %ld, \"cpu_s\": "
      "%s, \"times\": %s, \"displacement_down_slope\": %s, "
      "\"displacement_normal\": %s, \"final_velocity_down_slope\": %s, "
      "\"max_penetration\": %s, \"contacts\": %d}\n",
      variant, Settings(m).c_str(), Num(t_end).c_str(), steps, Num(cpu).c_str(),
      Array(times).c_str(), Array(disp).c_str(), Array(normal).c_str(),
      Num(d->qvel[0] * down[0] + d->qvel[2] * down[2]).c_str(),
      Num(max_pen).c_str(), d->ncon);
}

// ---- Newton's cradle

constexpr double kCradleM = 0.1, kCradleD = 0.05, kCradleV0 = 1.0,
                 kCradleGap0 = 0.01;

struct CradleSpec {
  int balls = 3;
  double e = 1.0, spacing = 0.0;
};

// omega > 0: solref in the direct format tuned, as for the ball, to the
// natural frequency omega and the damping ratio that leaves a single
// pair with restitution c.e; omega = 0: MuJoCo's default solref 0.02 1.
void RunCradle(const char* variant,
               double omega,
               double timestep,
               const CradleSpec& c,
               double t_end) {
  const double ln_e = std::log(std::max(c.e, 1e-300));
  const double zeta =
      c.e > 0 ? -ln_e / std::sqrt(kPi * kPi + ln_e * ln_e) : 1.0;
  const double stiffness = 0.95 * omega * omega, damping = 2.0 * zeta * omega;
  std::string xml = "<mujoco model=\"newtons_cradle\">\n  <option timestep=\"" +
                    Num(timestep) +
                    "\" gravity=\"0 0 0\"/>\n  <default><geom condim=\"1\"";
  if (omega > 0)
    xml += " solref=\"" + Num(-stiffness) + " " + Num(-damping) + "\"";
  xml += "/></default>\n  <worldbody>\n";
  for (int i = 0; i < c.balls; ++i) {
    const double x =
        i == 0 ? -kCradleGap0 - kCradleD : (i - 1) * (kCradleD + c.spacing);
    char body[400];
    std::snprintf(
        body, sizeof(body),
        "    <body pos=\"%.17g 0 0\">\n"
        "      <joint type=\"slide\" axis=\"1 0 0\"/>\n"
        "      <geom type=\"sphere\" size=\"%.17g\" mass=\"%.17g\"/>\n"
        "    </body>\n",
        x, 0.5 * kCradleD, kCradleM);
    xml += body;
  }
  xml += "  </worldbody>\n</mujoco>\n";
  Sim sim(xml);
  mjModel* m = sim.m();
  mjData* d = sim.d();
  d->qvel[0] = kCradleV0;
  const int n = c.balls;
  auto velocities = [&] { return std::vector<double>(d->qvel, d->qvel + n); };
  auto kinetic = [&] {
    double e = 0.0;
    for (int i = 0; i < n; ++i) e += d->qvel[i] * d->qvel[i];
    return 0.5 * kCradleM * e;
  };
  // Overlaps from the positions after the step (d->contact holds the
  // contacts found at the step's start).
  std::vector<double> x0(n);
  for (int i = 0; i < n; ++i)
    x0[i] = i == 0 ? -kCradleGap0 - kCradleD : (i - 1) * (kCradleD + c.spacing);
  double deepest = 0.0;
  auto touching = [&] {  // pairs overlapping; deepest: their deepest overlap
    int k = 0;
    deepest = 0.0;
    for (int i = 0; i + 1 < n; ++i) {
      const double gap =
          x0[i + 1] + d->qpos[i + 1] - x0[i] - d->qpos[i] - kCradleD;
      if (gap < 0) {
        ++k;
        deepest = std::max(deepest, -gap);
      }
    }
    return k;
  };
  const long steps = std::lround(t_end / timestep);
  double max_pen = 0.0, first_touch = -1.0, last_release = -1.0;
  int most = 0, prev = 0;
  const double cpu0 = CpuSeconds();
  for (long k = 0; k < steps; ++k) {
    mj_step(m, d);
    const int now = touching();
    if (now > 0 && first_touch < 0) first_touch = d->time;
    if (now == 0 && prev > 0) last_release = d->time;
    most = std::max(most, now);
    prev = now;
    max_pen = std::max(max_pen, deepest);
  }
  const double cpu = CpuSeconds() - cpu0;
  std::printf(
      "{\"engine\": \"mujoco\", \"case\": \"newtons_cradle\", \"variant\": "
      "\"%s\", \"balls\": %d, \"restitution\": %s, \"spacing\": %s, "
      "\"settings\": %s, \"omega\": %s, \"zeta\": %s, \"t_end\": %s, "
      "\"steps\": %ld, \"cpu_s\": %s, \"first_touch\": %s, "
      "\"last_release\": %s, \"most_overlapping\": %d, "
      "\"overlapping_at_end\": %d, \"final_v\": %s, \"energy0\": %s, "
      "\"energy_final\": %s, \"max_penetration\": %s}\n",
      variant, n, Num(c.e).c_str(), Num(c.spacing).c_str(), Settings(m).c_str(),
      Num(omega).c_str(), Num(zeta).c_str(), Num(t_end).c_str(), steps,
      Num(cpu).c_str(), Num(first_touch).c_str(), Num(last_release).c_str(),
      most, prev, Array(velocities()).c_str(),
      Num(0.5 * kCradleM * kCradleV0 * kCradleV0).c_str(),
      Num(kinetic()).c_str(), Num(max_pen).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "all", only;
  double t_end = -1.0;  // the case's default
  CradleSpec cradle;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--t-end" && i + 1 < argc) {
      t_end = std::atof(argv[++i]);
    } else if (a == "--variant" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--balls" && i + 1 < argc) {
      cradle.balls = std::atoi(argv[++i]);
    } else if (a == "--restitution" && i + 1 < argc) {
      cradle.e = std::atof(argv[++i]);
    } else if (a == "--spacing" && i + 1 < argc) {
      cradle.spacing = std::atof(argv[++i]);
    } else if (a == "ball" || a == "rocking" || a == "incline" ||
               a == "cradle" || a == "all") {
      which = a;
    } else {
      std::fprintf(
          stderr,
          "usage: %s [ball|rocking|incline|cradle|all] [--variant NAME] "
          "[--t-end T] [--balls N] [--restitution E] [--spacing "
          "S]\nunknown argument '%s'\n",
          argv[0], a.c_str());
      return 2;
    }
  }
  if (mj_version() != mjVERSION_HEADER) {
    std::fprintf(stderr, "MuJoCo library %d does not match its header %d\n",
                 mj_version(), mjVERSION_HEADER);
    return 1;
  }
  auto te = [&](double fallback) { return t_end > 0 ? t_end : fallback; };
  struct Run {
    const char* group;
    const char* variant;
    std::function<void()> run;
  };
  const std::vector<Run> runs = {
      {"ball", "direct_w50",
       [&] {
         RunBall({"direct_w50", 50.0}, te(10));
       }},
      {"ball", "direct_w150",
       [&] {
         RunBall({"direct_w150", 150.0}, te(10));
       }},
      {"ball", "direct_w500",
       [&] {
         RunBall({"direct_w500", 500.0}, te(10));
       }},
      {"ball", "default",
       [&] {
         RunBall({"default", 0.0}, te(10));
       }},
      {"rocking", "default", [&] { RunRocking("default", "", te(3)); }},
      {"rocking", "elliptic",
       [&] { RunRocking("elliptic", "cone=\"elliptic\"", te(3)); }},
      {"incline", "default", [&] { RunIncline("default", "", te(10)); }},
      {"incline", "elliptic",
       [&] { RunIncline("elliptic", "cone=\"elliptic\"", te(10)); }},
      {"incline", "elliptic_impratio10",
       [&] {
         RunIncline("elliptic_impratio10", "cone=\"elliptic\" impratio=\"10\"",
                    te(10));
       }},
      {"incline", "noslip10",
       [&] { RunIncline("noslip10", "noslip_iterations=\"10\"", te(10)); }},
      {"incline", "elliptic_noslip10",
       [&] {
         RunIncline("elliptic_noslip10",
                    "cone=\"elliptic\" noslip_iterations=\"10\"", te(10));
       }},
      {"cradle", "default",
       [&] { RunCradle("default", 0.0, 0.002, cradle, te(0.1)); }},
      {"cradle", "direct_w500",
       [&] { RunCradle("direct_w500", 500.0, 0.002, cradle, te(0.1)); }},
      {"cradle", "direct_w5000_h1e-4",
       [&] { RunCradle("direct_w5000_h1e-4", 5000.0, 1e-4, cradle, te(0.1)); }},
  };
  if (cradle.balls < 2 || cradle.e < 0 || cradle.e > 1 || cradle.spacing < 0) {
    std::fprintf(stderr,
                 "contact_mujoco: --balls >= 2, --restitution in "
                 "[0, 1], --spacing >= 0\n");
    return 2;
  }
  int done = 0;
  try {
    for (const Run& r : runs) {
      if (which != r.group &&
          (which != "all" || std::string(r.group) == "cradle"))
        continue;
      if (!only.empty() && only != r.variant) continue;
      r.run();
      ++done;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "contact_mujoco: %s\n", e.what());
    return 1;
  }
  if (done == 0) {
    std::fprintf(stderr, "contact_mujoco: no variant '%s' in '%s'\n",
                 only.c_str(), which.c_str());
    return 2;
  }
  return 0;
}
