// Records MuJoCo's own numbers for MJCF models, the reference that
// tests/multibody/mjcf_test.cpp compares the MJCF importer with
// (docs/models.md, "Checking an import against MuJoCo"). MuJoCo (Debian's
// libmujoco-dev, 2.2.2) is needed here only: the library and the tests
// never link it.
//
//   mjcf_reference OUT.json [--states N] [--seed S]
//   LABEL=FILE.xml[:diag][:traj]...
//
// For each model, N states (qpos, qvel) drawn with std::mt19937(S + model
// index): hinge angles uniform in [-1.5, 1.5] rad, slide positions in
// [-0.5, 0.5], ball and free quaternions uniform on the unit sphere (four
// normal deviates, normalized), free-joint positions in [-1, 1]^3, every
// velocity in [-2, 2]; at each, after mj_forward:
//   M        mj_fullM (nv x nv, row major; ":diag" records its diagonal
//            only, for the 627-velocity humanoid100)
//   bias     qfrc_bias (Coriolis, centrifugal and gravity forces, mj_rne
//            at zero acceleration)
//   passive  qfrc_passive (joint springs and dampers)
// printed with 17 significant digits. A ":traj" model also gets a
// trajectory: from the first state, 0.3 s by MuJoCo's RK4 at 1e-5 s with
// contacts, limits and equalities disabled (Daedalus imports none of them
// as constraints), the final qpos and qvel. MuJoCo's coordinates are kept as
// they are: a free joint's qpos is the body's position and quaternion (w
// first) in the world, its qvel the linear velocity in the world then the
// angular velocity in the body frame; a ball joint's qvel is the angular
// velocity in the child body's frame (docs/models.md, "Coordinates").
//
// Built by bench/CMakeLists.txt when MuJoCo is found, or by hand:
//   g++ -O2 -std=c++20 bench/mjcf_reference.cpp -lmujoco -o /tmp/mjcf_reference
// tests/multibody/data/mujoco_reference.json was written by
//   bench/mjcf_reference.sh
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

// ":traj" models: 0.3 s of motion by RK4 at 1e-5 s (30 000 steps).
constexpr double kTrajectoryEnd = 0.3;
constexpr double kTrajectoryStep = 1e-5;

void PrintArray(std::FILE* out, const char* key, const mjtNum* x, int n) {
  std::fprintf(out, "\"%s\": [", key);
  for (int i = 0; i < n; ++i)
    std::fprintf(out, "%s%.17g", i ? ", " : "", static_cast<double>(x[i]));
  std::fprintf(out, "]");
}

// A state of the model's joints, drawn as the header says.
void DrawState(const mjModel* m, std::mt19937* rng, mjData* d) {
  std::uniform_real_distribution<double> angle(-1.5, 1.5), slide(-0.5, 0.5),
      pos(-1.0, 1.0), vel(-2.0, 2.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto unit_quaternion = [&](mjtNum* q) {
    double n = 0.0;
    for (int k = 0; k < 4; ++k) {
      q[k] = normal(*rng);
      n += q[k] * q[k];
    }
    n = std::sqrt(n);
    for (int k = 0; k < 4; ++k) q[k] /= n;
  };
  for (int j = 0; j < m->njnt; ++j) {
    mjtNum* q = d->qpos + m->jnt_qposadr[j];
    switch (m->jnt_type[j]) {
      case mjJNT_FREE:
        for (int k = 0; k < 3; ++k) q[k] = pos(*rng);
        unit_quaternion(q + 3);
        break;
      case mjJNT_BALL:
        unit_quaternion(q);
        break;
      case mjJNT_SLIDE:
        q[0] = slide(*rng);
        break;
      case mjJNT_HINGE:
        q[0] = angle(*rng);
        break;
    }
  }
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = vel(*rng);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: mjcf_reference OUT.json [--states N] [--seed S] "
                 "LABEL=FILE.xml[:diag][:traj]...\n");
    return 2;
  }
  int states = 5;
  unsigned seed = 7;
  std::vector<std::string> models;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--states") == 0 && i + 1 < argc) {
      states = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = static_cast<unsigned>(std::atoi(argv[++i]));
    } else {
      models.emplace_back(argv[i]);
    }
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::fprintf(stderr, "mjcf_reference: cannot write %s\n", argv[1]);
    return 1;
  }
  std::fprintf(out,
               "{\"generator\": \"bench/mjcf_reference.cpp\", \"mujoco\": "
               "\"%s\", \"states\": %d, \"seed\": %u, \"models\": [\n",
               mj_versionString(), states, seed);
  for (size_t mi = 0; mi < models.size(); ++mi) {
    std::string spec = models[mi];
    bool diag = false, traj = false;
    for (bool again = true; again;) {
      again = false;
      for (auto [suffix, flag] :
           {std::pair<const char*, bool*>{":diag", &diag}, {":traj", &traj}}) {
        const size_t n = std::strlen(suffix);
        if (spec.size() > n && spec.compare(spec.size() - n, n, suffix) == 0) {
          *flag = true;
          spec.resize(spec.size() - n);
          again = true;
        }
      }
    }
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "mjcf_reference: '%s' is not LABEL=FILE\n",
                   spec.c_str());
      return 2;
    }
    const std::string label = spec.substr(0, eq), file = spec.substr(eq + 1);
    char error[1000] = "";
    mjModel* m = mj_loadXML(file.c_str(), nullptr, error, sizeof(error));
    if (!m) {
      std::fprintf(stderr, "mjcf_reference: %s: %s\n", file.c_str(), error);
      return 1;
    }
    mjData* d = mj_makeData(m);
    std::mt19937 rng(seed + static_cast<unsigned>(mi));
    std::vector<mjtNum> full(static_cast<size_t>(m->nv) * m->nv), dg(m->nv);
    std::fprintf(out,
                 "%s{\"label\": \"%s\", \"nq\": %d, \"nv\": %d, \"gravity\": "
                 "[%.17g, %.17g, %.17g], \"timestep\": %.17g,\n",
                 mi ? ",\n" : "", label.c_str(), m->nq, m->nv,
                 m->opt.gravity[0], m->opt.gravity[1], m->opt.gravity[2],
                 m->opt.timestep);
    // The joints (name, type, first qpos and qvel) and the bodies' inertias
    // as MuJoCo compiled them (mass, centre of mass ipos and principal
    // axes iquat in the body frame, principal moments).
    static const char* const kTypes[] = {"free", "ball", "slide", "hinge"};
    std::fprintf(out, "\"joints\": [");
    for (int j = 0; j < m->njnt; ++j)
      std::fprintf(
          out,
          "%s{\"name\": \"%s\", \"type\": \"%s\", \"qpos\": %d, "
          "\"qvel\": %d}",
          j ? ", " : "",
          mj_id2name(m, mjOBJ_JOINT, j) ? mj_id2name(m, mjOBJ_JOINT, j) : "",
          kTypes[m->jnt_type[j]], m->jnt_qposadr[j], m->jnt_dofadr[j]);
    std::fprintf(out, "],\n\"bodies\": [");
    for (int b = 1; b < m->nbody; ++b) {
      const char* name = mj_id2name(m, mjOBJ_BODY, b);
      std::fprintf(out, "%s{\"name\": \"%s\", \"mass\": %.17g, ",
                   b > 1 ? ",\n" : "", name ? name : "", m->body_mass[b]);
      PrintArray(out, "ipos", m->body_ipos + 3 * b, 3);
      std::fprintf(out, ", ");
      PrintArray(out, "iquat", m->body_iquat + 4 * b, 4);
      std::fprintf(out, ", ");
      PrintArray(out, "inertia", m->body_inertia + 3 * b, 3);
      std::fprintf(out, "}");
    }
    std::fprintf(out, "],\n\"states\": [\n");
    for (int s = 0; s < states; ++s) {
      mj_resetData(m, d);
      DrawState(m, &rng, d);
      mj_forward(m, d);
      mj_fullM(m, full.data(), d->qM);
      std::fprintf(out, "%s{", s ? ",\n" : "");
      PrintArray(out, "qpos", d->qpos, m->nq);
      std::fprintf(out, ", ");
      PrintArray(out, "qvel", d->qvel, m->nv);
      std::fprintf(out, ", ");
      if (diag) {
        for (int i = 0; i < m->nv; ++i)
          dg[static_cast<size_t>(i)] = full[static_cast<size_t>(i) * m->nv + i];
        PrintArray(out, "M_diag", dg.data(), m->nv);
      } else {
        PrintArray(out, "M", full.data(), m->nv * m->nv);
      }
      std::fprintf(out, ", ");
      PrintArray(out, "bias", d->qfrc_bias, m->nv);
      std::fprintf(out, ", ");
      PrintArray(out, "passive", d->qfrc_passive, m->nv);
      std::fprintf(out, "}");
    }
    std::fprintf(out, "]");
    if (traj) {
      // A trajectory from the first state's qpos and qvel, RK4 at a fine
      // step with contacts, limits and equalities off (what Daedalus
      // imports of them: none enforced), no control.
      std::mt19937 again(seed + static_cast<unsigned>(mi));
      mj_resetData(m, d);
      DrawState(m, &again, d);
      std::fprintf(out, ",\n\"trajectory\": {\"t_end\": %.17g, \"dt\": %.17g, ",
                   kTrajectoryEnd, kTrajectoryStep);
      PrintArray(out, "qpos0", d->qpos, m->nq);
      std::fprintf(out, ", ");
      PrintArray(out, "qvel0", d->qvel, m->nv);
      m->opt.integrator = mjINT_RK4;
      m->opt.timestep = kTrajectoryStep;
      m->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_EQUALITY;
      const int steps =
          static_cast<int>(std::lround(kTrajectoryEnd / kTrajectoryStep));
      for (int k = 0; k < steps; ++k) mj_step(m, d);
      std::fprintf(out, ", ");
      PrintArray(out, "qpos", d->qpos, m->nq);
      std::fprintf(out, ", ");
      PrintArray(out, "qvel", d->qvel, m->nv);
      std::fprintf(out, "}");
    }
    std::fprintf(out, "}");
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  std::fprintf(out, "\n]}\n");
  std::fclose(out);
  return 0;
}
