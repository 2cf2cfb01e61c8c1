// The check of a model's declared sparsity (Touches) that the sparse
// workspace makes at its first evaluation (daedalus/sparse_dynamics.hpp).
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "daedalus/sparse_dynamics.hpp"
#include "eval/sparse_chart.hpp"

namespace daedalus {

namespace {

// A tangent that shows a dependence: finite and non-zero. A NaN one says
// nothing (the function is not finite at this state: slider_crank_mb
// --param a=1 --kkt sparse-lu blamed a Touches declaration for the NaN of
// a failed projection); that failure is reported where it is evaluated.
bool TangentShowsDependence(double tangent) {
  return std::isfinite(tangent) && tangent != 0.0;
}

}  // namespace

void CheckDeclaredSparsity(SparseWorkspace* ws) {
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nq = model.nq(), nv = model.nv();
  // Random tangents (fixed seed: the check is reproducible) of size ~1 on
  // every coordinate and velocity; each function sees them on the
  // coordinates (and their velocities) it did not declare only. Its
  // tangent must then vanish exactly: AD propagates nothing through values
  // a function does not use.
  std::mt19937 gen{20260601};
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  Eigen::VectorXd rq(nq), rv(nv);
  for (int j = 0; j < std::max(nq, nv); ++j) {
    if (j < nq) rq[j] = dist(gen) * (gen() % 2 ? 1.0 : -1.0);
    if (j < nv) rv[j] = dist(gen) * (gen() % 2 ? 1.0 : -1.0);
  }
  const D1 t1(ws->t, 0.0);
  auto clear = [&] {
    for (int j = 0; j < nq; ++j) ws->q1[j].d = 0.0;
    for (int j = 0; j < nv; ++j) ws->v1[j].d = 0.0;
  };
  auto seed_all = [&](bool on_v) {
    for (int j = 0; j < nq; ++j) ws->q1[j].d = rq[j];
    for (int j = 0; j < nv; ++j) ws->v1[j].d = on_v ? rv[j] : 0.0;
  };
  // Off on the declared coordinates cc and their velocities.
  auto mask = [&](const std::vector<int>& cc) {
    for (int j : cc) ws->q1[j].d = 0.0;
    for (int k : internal::VelocityCoords(d, cc)) ws->v1[k].d = 0.0;
  };
  // Finds one undeclared coordinate the function depends on (O(nq) calls,
  // only on the error path).
  auto culprit = [&](const std::vector<int>& cc, auto&& eval) -> std::string {
    clear();
    const std::vector<int> vc = internal::VelocityCoords(d, cc);
    for (int j = 0; j < nq; ++j) {
      if (std::binary_search(cc.begin(), cc.end(), j)) continue;
      ws->q1[j].d = 1.0;
      const bool dep = eval();
      ws->q1[j].d = 0.0;
      if (dep)
        return "coordinate '" + model.coordinate_names()[j] + "' (index " +
               std::to_string(j) + ")";
    }
    for (int k = 0; k < nv; ++k) {
      if (std::binary_search(vc.begin(), vc.end(), k)) continue;
      ws->v1[k].d = 1.0;
      const bool dep = eval();
      ws->v1[k].d = 0.0;
      if (dep)
        return "velocity of '" + model.velocity_names()[k] + "' (index " +
               std::to_string(k) + ")";
    }
    return "an undeclared coordinate";
  };
  auto list = [&](const std::vector<int>& cc) {
    std::string s = "{";
    for (size_t i = 0; i < cc.size(); ++i)
      s += (i ? ", " : "") + std::to_string(cc[i]);
    return s + "}";
  };

  for (size_t ci = 0; ci < d.constraints.size(); ++ci) {
    const auto& c = d.constraints[ci];
    if (c.coords.empty()) continue;
    const bool on_v = c.kind == ConstraintKind::kNonholonomic;
    auto eval = [&] {
      c.fn.f1(Point<D1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
      for (Eigen::Index r = 0; r < ws->out1.size(); ++r)
        if (TangentShowsDependence(ws->out1[r].d)) return true;
      return false;
    };
    seed_all(on_v);
    mask(c.coords);
    const bool bad = eval();
    if (bad) {
      const std::string who = culprit(c.coords, eval);
      clear();
      throw std::invalid_argument(
          "model '" + model.name() + "': constraint '" + c.name +
          "' depends on " + who + ", which its Touches declaration " +
          list(c.coords) +
          " does not list; add the coordinate to Touches (or fix the "
          "function's indices)");
    }
  }
  for (size_t k = 0; k < d.kinetic_terms.size() + d.potential_terms.size();
       ++k) {
    const bool kin = k < d.kinetic_terms.size();
    const auto& term = kin ? d.kinetic_terms[k]
                           : d.potential_terms[k - d.kinetic_terms.size()];
    auto eval = [&] {
      return TangentShowsDependence(
          term.fn.f1(Point<D1>{ws->q1, ws->v1, t1, ws->p1}).d);
    };
    seed_all(true);
    mask(term.coords);
    if (eval()) {
      const std::string who = culprit(term.coords, eval);
      clear();
      throw std::invalid_argument(
          "model '" + model.name() +
          "': " + (kin ? "kinetic energy term " : "potential energy term ") +
          std::to_string(kin ? k : k - d.kinetic_terms.size()) +
          " depends on " + who + ", which its Touches declaration " +
          list(term.coords) + " does not list; add the coordinate to Touches");
    }
  }
  clear();
  ws->checked_ = true;
}

}  // namespace daedalus
