// The chart of eval/chart.hpp, seeded direction by direction for the sparse
// evaluator (daedalus/sparse_dynamics.hpp), whose functions are
// differentiated along their declared coordinates only.
//
// The sparse stages index everything that is a derivative (J's columns,
// M, L_q, momenta) by velocity, and seed the user's q along one velocity
// direction k at a time: on a scalar coordinate its tangent, on a unit
// quaternion block the tangent of n(q0) (x) exp(xi / 2) along e_k,
// n (x) (0, e_k) / 2, with the velocity correction -e_k x w / 2 of the
// chart's velocity (eval/chart.hpp); the second-order terms the chart adds
// (the curvature of exp along w, and the mixed term -(w x e_i) / 2 of the
// momenta's sweep) are written by the stages themselves. A model without
// quaternions takes none of this: velocity k is coordinate k.
#pragma once

#include <algorithm>
#include <vector>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// The quaternion block holding velocity k, or nullptr.
inline const QuaternionBlock* BlockOfVelocity(const ModelData& d, int k) {
  for (const QuaternionBlock& b : d.quaternions)
    if (k >= b.v && k < b.v + 3) return &b;
  return nullptr;
}

/// The coordinate of a scalar velocity k: each quaternion block before it
/// has one coordinate more than velocities.
inline int CoordinateOfVelocity(const ModelData& d, int k) {
  int j = k;
  for (const QuaternionBlock& b : d.quaternions)
    if (b.v < k) ++j;
  return j;
}

/// The velocities of declared coordinates cc (sorted): a scalar
/// coordinate's own, all three of a quaternion any of whose four
/// coordinates is listed. cc itself without quaternions.
inline std::vector<int> VelocityCoords(const ModelData& d,
                                       const std::vector<int>& cc) {
  if (d.quaternions.empty()) return cc;
  std::vector<int> out;
  for (int j : cc) {
    const int k = d.velocity_of[static_cast<size_t>(j)];
    if (k >= 0) {
      out.push_back(k);
      continue;
    }
    for (const QuaternionBlock& b : d.quaternions)
      if (j >= b.q && j < b.q + 4)
        for (int c = 0; c < 3; ++c) out.push_back(b.v + c);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The coordinates a list of velocities moves: those of CoordinateOfVelocity,
/// and all four of each quaternion block.
inline std::vector<int> CoordsOfVelocities(const ModelData& d,
                                           const std::vector<int>& vc) {
  if (d.quaternions.empty()) return vc;
  std::vector<int> out;
  for (int k : vc) {
    if (const QuaternionBlock* b = BlockOfVelocity(d, k)) {
      for (int c = 0; c < 4; ++c) out.push_back(b->q + c);
    } else {
      out.push_back(CoordinateOfVelocity(d, k));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// out = n (x) (0, e) / 2 for a quaternion n (4) and a 3-vector e.
inline void HalfPureProduct(const double* n, const double* e, double* out) {
  out[0] = -(n[1] * e[0] + n[2] * e[1] + n[3] * e[2]) * 0.5;
  out[1] = (n[0] * e[0] + (n[2] * e[2] - n[3] * e[1])) * 0.5;
  out[2] = (n[0] * e[1] + (n[3] * e[0] - n[1] * e[2])) * 0.5;
  out[3] = (n[0] * e[2] + (n[1] * e[1] - n[2] * e[0])) * 0.5;
}

/// The chart's first-order seed along velocity k with weight s: addq(j, x)
/// for each coordinate j it moves, addv(i, x) for the chart velocity's
/// correction -(s e_k) x w / 2 on a quaternion block (w: that block of v).
/// nval(j) is the value (normalized on quaternions) the functions see.
template <class NVal, class AddQ, class AddV>
void ChartSeed(const ModelData& d,
               const Eigen::VectorXd& v,
               int k,
               double s,
               NVal&& nval,
               AddQ&& addq,
               AddV&& addv) {
  const QuaternionBlock* b =
      d.quaternions.empty() ? nullptr : BlockOfVelocity(d, k);
  if (b == nullptr) {
    addq(d.quaternions.empty() ? k : CoordinateOfVelocity(d, k), s);
    return;
  }
  const int c = k - b->v;
  double e[3] = {0.0, 0.0, 0.0};
  e[c] = s;
  const double n[4] = {nval(b->q), nval(b->q + 1), nval(b->q + 2),
                       nval(b->q + 3)};
  double t[4];
  HalfPureProduct(n, e, t);
  for (int i = 0; i < 4; ++i) addq(b->q + i, t[i]);
  const double w[3] = {v[b->v], v[b->v + 1], v[b->v + 2]};
  // -(e x w) / 2
  addv(b->v, -0.5 * (e[1] * w[2] - e[2] * w[1]));
  addv(b->v + 1, -0.5 * (e[2] * w[0] - e[0] * w[2]));
  addv(b->v + 2, -0.5 * (e[0] * w[1] - e[1] * w[0]));
}

/// Clears what ChartSeed along k touched: clearq(j) on its coordinates,
/// clearv(i) on a quaternion block's velocities.
template <class ClearQ, class ClearV>
void ChartClear(const ModelData& d, int k, ClearQ&& clearq, ClearV&& clearv) {
  const QuaternionBlock* b =
      d.quaternions.empty() ? nullptr : BlockOfVelocity(d, k);
  if (b == nullptr) {
    clearq(d.quaternions.empty() ? k : CoordinateOfVelocity(d, k));
    return;
  }
  for (int i = 0; i < 4; ++i) clearq(b->q + i);
  for (int i = 0; i < 3; ++i) clearv(b->v + i);
}

}  // namespace daedalus::internal
