// Inverse dynamics with constraints (include/daedalus/inverse_dynamics.hpp,
// docs/inverse_dynamics.md): local polynomial differentiation of the
// samples, then at each sample the projected weighted minimum-norm inputs
// and the minimum-norm multipliers.
#include "daedalus/inverse_dynamics.hpp"

#include <Eigen/Geometry>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "daedalus/dynamics.hpp"

namespace daedalus {

namespace {

// "line 12" when the motion came from a file, else "sample 3".
std::string Where(const MotionSamples& m, Eigen::Index i) {
  const auto k = static_cast<size_t>(i);
  if (k < m.lines.size()) return "line " + std::to_string(m.lines[k]);
  return "sample " + std::to_string(i);
}

std::string Source(const MotionSamples& m) {
  return m.source.empty() ? std::string("the motion") : "'" + m.source + "'";
}

// The shortest text that reads back to x.
std::string Num(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// The first non-finite entry of row i of x, or -1.
Eigen::Index NonFinite(const Eigen::MatrixXd& x, Eigen::Index i) {
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    if (!std::isfinite(x(i, j))) return j;
  return -1;
}

void CheckMotion(const Model& model,
                 const MotionSamples& m,
                 const InverseDynamicsOptions& o,
                 int window) {
  const Eigen::Index n = static_cast<Eigen::Index>(m.t.size());
  const int nq = model.nq(), nv = model.nv();
  const std::string src = Source(m);
  if (m.q.rows() != n || m.q.cols() != nq)
    throw std::invalid_argument(src + ": q is " + std::to_string(m.q.rows()) +
                                " x " + std::to_string(m.q.cols()) +
                                ", expected " + std::to_string(n) +
                                " samples x " + std::to_string(nq) +
                                " coordinates of model '" + model.name() + "'");
  for (const auto* x : {&m.v, &m.vdot}) {
    if (x->size() != 0 && (x->rows() != n || x->cols() != nv))
      throw std::invalid_argument(
          src + ": " + (x == &m.v ? "v" : "vdot") + " is " +
          std::to_string(x->rows()) + " x " + std::to_string(x->cols()) +
          ", expected " + std::to_string(n) + " samples x " +
          std::to_string(nv) + " velocities (or empty, to differentiate)");
  }
  if (o.degree < 2 || o.degree > 8)
    throw std::invalid_argument(
        "inverse dynamics: polynomial degree " + std::to_string(o.degree) +
        " is outside 2..8 (accelerations need degree 2 at least; above 8 "
        "the local fits are ill-conditioned)");
  if (window < o.degree + 1 || window > 4 * (o.degree + 1))
    throw std::invalid_argument(
        "inverse dynamics: window of " + std::to_string(window) +
        " samples for degree " + std::to_string(o.degree) +
        " (it needs degree + 1 = " + std::to_string(o.degree + 1) +
        " to 4 (degree + 1) samples)");
  const int nu = model.num_inputs();
  if (o.input_weights.size() != 0) {
    if (o.input_weights.size() != nu)
      throw std::invalid_argument(
          "inverse dynamics: " + std::to_string(o.input_weights.size()) +
          " input weights for the " + std::to_string(nu) +
          " input channels of model '" + model.name() + "'");
    for (int k = 0; k < nu; ++k)
      if (!(o.input_weights[k] > 0.0) || !std::isfinite(o.input_weights[k]))
        throw std::invalid_argument(
            "inverse dynamics: the weight of input '" + model.inputs()[k].name +
            "' is " + Num(o.input_weights[k]) + "; weights must be > 0");
  }
  if (n == 0) throw std::invalid_argument(src + " has no samples");
  const bool need_derivatives = m.vdot.size() == 0;
  if (need_derivatives && n < window)
    throw std::invalid_argument(
        src + " has " + std::to_string(n) + " sample" + (n == 1 ? "" : "s") +
        (n > 0 ? " (" + Where(m, 0) +
                     (n > 1 ? " to " + Where(m, n - 1) : std::string()) + ")"
               : std::string()) +
        "; accelerations by a local polynomial of degree " +
        std::to_string(o.degree) + " need at least " + std::to_string(window) +
        " samples: give more samples or lower the degree (--id-degree, at "
        "least "
        "2)");
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!std::isfinite(m.t[static_cast<size_t>(i)]))
      throw std::invalid_argument(src + ", " + Where(m, i) +
                                  ": the time is not a finite number");
    if (i > 0 &&
        !(m.t[static_cast<size_t>(i)] > m.t[static_cast<size_t>(i - 1)]))
      throw std::invalid_argument(
          src + ": time is not strictly increasing: " + Where(m, i) +
          " has t = " + Num(m.t[static_cast<size_t>(i)]) +
          " after t = " + Num(m.t[static_cast<size_t>(i - 1)]) + " at " +
          Where(m, i - 1) + "; sort the samples and remove repeated times");
    const char* what[] = {"q", "v", "vdot"};
    const Eigen::MatrixXd* mats[] = {&m.q, &m.v, &m.vdot};
    for (int k = 0; k < 3; ++k) {
      if (mats[k]->size() == 0) continue;
      const Eigen::Index j = NonFinite(*mats[k], i);
      if (j >= 0)
        throw std::invalid_argument(
            src + ", " + Where(m, i) + ": " + what[k] + " of " +
            (k == 0 ? "coordinate '" +
                          model.coordinate_names()[static_cast<size_t>(j)]
                    : "velocity '" +
                          model.velocity_names()[static_cast<size_t>(j)]) +
            "' is not a finite number");
    }
  }
}

// The row of weights that gives the k-th derivative at t[i] from the
// samples lo .. lo + w - 1, by the least-squares polynomial of degree d in
// the scaled variable s = (t - t[i]) / hs.
Eigen::RowVectorXd StencilRow(
    const std::vector<double>& t, size_t i, size_t lo, int w, int d, int k) {
  const double hs =
      (t[lo + static_cast<size_t>(w) - 1] - t[lo]) / static_cast<double>(w - 1);
  Eigen::MatrixXd V(w, d + 1);
  for (int j = 0; j < w; ++j) {
    const double s = (t[lo + static_cast<size_t>(j)] - t[i]) / hs;
    double p = 1.0;
    for (int c = 0; c <= d; ++c) {
      V(j, c) = p;
      p *= s;
    }
  }
  // Row k of the pseudo-inverse maps samples to the coefficient c_k;
  // the k-th derivative at s = 0 is k! c_k / hs^k.
  const Eigen::MatrixXd P =
      V.colPivHouseholderQr().solve(Eigen::MatrixXd::Identity(w, w));
  const double scale = (k == 1 ? 1.0 : 2.0) / std::pow(hs, k);
  return scale * P.row(k);
}

// Per coordinate i: the velocity index of a scalar coordinate, -1 inside
// a quaternion block. Coordinates and velocities are declared in the same
// order (model.hpp), a quaternion taking 4 coordinates and 3 velocities.
std::vector<int> ScalarVelocityOf(const Model& model) {
  std::vector<int> of(static_cast<size_t>(model.nq()), -1);
  std::vector<int> block_at(static_cast<size_t>(model.nq()), 0);
  for (const auto& b : model.quaternions())
    block_at[static_cast<size_t>(b.q)] = 1;
  int j = 0;
  for (int i = 0; i < model.nq(); ++i) {
    if (block_at[static_cast<size_t>(i)]) {
      i += 3;  // its four coordinates, three velocities
      j += 3;
      continue;
    }
    of[static_cast<size_t>(i)] = j++;
  }
  return of;
}

// The quaternion product a (x) b of (w, x, y, z) 4-vectors.
Eigen::Vector4d QuatMul(const Eigen::Vector4d& a, const Eigen::Vector4d& b) {
  const Eigen::Vector3d av = a.tail<3>(), bv = b.tail<3>();
  Eigen::Vector4d out;
  out[0] = a[0] * b[0] - av.dot(bv);
  out.tail<3>() = a[0] * bv + b[0] * av + av.cross(bv);
  return out;
}

Eigen::Vector4d Conj(const Eigen::Vector4d& a) {
  return Eigen::Vector4d(a[0], -a[1], -a[2], -a[3]);
}

// Velocities (and accelerations when qdd is given) from the derivatives of
// the coordinates (docs/inverse_dynamics.md, "Quaternions"): a scalar
// coordinate's velocity is its derivative; a quaternion q with q' = q (x)
// (0, w) / 2 (w in the rotated frame) has, for any norm s = |q| (the
// samples' own drift included),
//   w    = 2 vec(conj(q) (x) q') / |q|^2,
//   w'   = 2 (vec(conj(q) (x) q'') - (q . q') w) / |q|^2,
// since conj(q) (x) q' = s s' + s^2 (0, w) / 2 and conj(q') (x) q' is real.
void VelocitiesFromCoordinateRates(const Model& model,
                                   const Eigen::MatrixXd& q,
                                   const Eigen::MatrixXd& qd,
                                   const Eigen::MatrixXd* qdd,
                                   Eigen::MatrixXd* v,
                                   Eigen::MatrixXd* vdot) {
  const Eigen::Index n = q.rows();
  const std::vector<int> of = ScalarVelocityOf(model);
  v->resize(n, model.nv());
  if (qdd) vdot->resize(n, model.nv());
  for (Eigen::Index r = 0; r < n; ++r) {
    for (int i = 0; i < model.nq(); ++i) {
      const int j = of[static_cast<size_t>(i)];
      if (j < 0) continue;
      (*v)(r, j) = qd(r, i);
      if (qdd) (*vdot)(r, j) = (*qdd)(r, i);
    }
    for (const auto& b : model.quaternions()) {
      const Eigen::Vector4d qr = q.row(r).segment<4>(b.q).transpose();
      const Eigen::Vector4d qdr = qd.row(r).segment<4>(b.q).transpose();
      const double s2 = qr.squaredNorm();
      const Eigen::Vector3d w = 2.0 * QuatMul(Conj(qr), qdr).tail<3>() / s2;
      v->row(r).segment<3>(b.v) = w.transpose();
      if (qdd) {
        const Eigen::Vector4d qddr = qdd->row(r).segment<4>(b.q).transpose();
        const Eigen::Vector3d wd =
            2.0 * (QuatMul(Conj(qr), qddr).tail<3>() - qr.dot(qdr) * w) / s2;
        vdot->row(r).segment<3>(b.v) = wd.transpose();
      }
    }
  }
}

}  // namespace

namespace internal {

// DifferentiateSamples, ending early (the rest of the rows undefined) once
// `stop` holds a signal.
Eigen::MatrixXd DifferentiateSamples(const std::vector<double>& t,
                                     const Eigen::MatrixXd& x,
                                     int k,
                                     int degree,
                                     int window,
                                     const std::atomic<int>* stop) {
  const size_t n = t.size();
  if ((k != 1 && k != 2) || degree < k || window < degree + 1 ||
      static_cast<size_t>(window) > n ||
      x.rows() != static_cast<Eigen::Index>(n))
    throw std::invalid_argument(
        "DifferentiateSamples: derivative " + std::to_string(k) + ", degree " +
        std::to_string(degree) + ", window " + std::to_string(window) + ", " +
        std::to_string(n) + " times and " + std::to_string(x.rows()) +
        " rows (needs k in {1, 2}, degree >= k, " +
        "degree + 1 <= window <= samples)");
  Eigen::MatrixXd out(x.rows(), x.cols());
  const size_t half = static_cast<size_t>(window - 1) / 2;
  for (size_t i = 0; i < n; ++i) {
    // A stop leaves the rest undefined: the caller reads the flag after.
    if (stop != nullptr && i % 1024 == 0 && stop->load() != 0) break;
    const size_t lo =
        std::min(i >= half ? i - half : 0, n - static_cast<size_t>(window));
    const Eigen::RowVectorXd row = StencilRow(t, i, lo, window, degree, k);
    out.row(static_cast<Eigen::Index>(i)) =
        row * x.middleRows(static_cast<Eigen::Index>(lo), window);
  }
  return out;
}

}  // namespace internal

Eigen::MatrixXd DifferentiateSamples(const std::vector<double>& t,
                                     const Eigen::MatrixXd& x,
                                     int k,
                                     int degree,
                                     int window) {
  return internal::DifferentiateSamples(t, x, k, degree, window, nullptr);
}

std::string InverseDynamicsResult::actuation() const {
  if (under_actuated && over_actuated) return "under- and over-actuated";
  if (under_actuated) return "under-actuated";
  if (over_actuated) return "over-actuated";
  return "fully actuated";
}

void CheckInverseDynamicsInput(const Model& model,
                               const Eigen::VectorXd& params,
                               const MotionSamples& motion,
                               const InverseDynamicsOptions& options) {
  const int window = options.window > 0 ? options.window : options.degree + 1;
  CheckMotion(model, motion, options, window);
  if (params.size() != model.num_parameters())
    throw std::invalid_argument(
        "inverse dynamics: " + std::to_string(params.size()) +
        " parameters for model '" + model.name() + "', which has " +
        std::to_string(model.num_parameters()));
  for (const auto& b : model.quaternions())
    for (Eigen::Index i = 0; i < motion.q.rows(); ++i)
      if (!(motion.q.row(i).segment<4>(b.q).norm() > 0.0))
        throw std::invalid_argument(
            Source(motion) + ", " + Where(motion, i) + ": the quaternion '" +
            b.name + "' is zero; a quaternion sample needs a non-zero norm");
}

InverseDynamicsResult InverseDynamics(const Model& model,
                                      const Eigen::VectorXd& params,
                                      const MotionSamples& motion,
                                      const InverseDynamicsOptions& options) {
  const int window = options.window > 0 ? options.window : options.degree + 1;
  CheckInverseDynamicsInput(model, params, motion, options);
  const int nv = model.nv(), nc = model.nc(), nu = model.num_inputs();
  const Eigen::Index n = static_cast<Eigen::Index>(motion.t.size());

  InverseDynamicsResult res;
  // Velocities and accelerations: given, or from the local fits.
  Eigen::MatrixXd v = motion.v, vdot = motion.vdot;
  res.velocities_from = "given";
  res.accelerations_from = "given";
  // Each quaternion sample normalized first: the samples' norm jitter
  // (an integrator's projection) is not differentiated.
  Eigen::MatrixXd q = motion.q;
  for (const auto& b : model.quaternions())
    for (Eigen::Index i = 0; i < n; ++i) {
      const double s = q.row(i).segment<4>(b.q).norm();
      if (!(s > 0.0))
        throw std::invalid_argument(
            Source(motion) + ", " + Where(motion, i) + ": the quaternion '" +
            b.name + "' is zero; a quaternion sample needs a non-zero norm");
      q.row(i).segment<4>(b.q) /= s;
    }
  // Then each given the sign nearer the previous sample's: q and -q are
  // one rotation, and a file whose quaternion flips sign between two rows
  // (a writer that keeps w >= 0, say) would otherwise be differentiated
  // across a jump of 2 |q| (issue 40: a residual of 3554 instead of 3e-4).
  for (const auto& b : model.quaternions()) {
    // Sign changes between consecutive samples of the file (a flip over
    // one row is two), then the samples whose sign is reversed.
    int flips = 0, reversed = 0;
    bool reversing = false;
    Eigen::Vector4d prev = q.row(0).segment<4>(b.q).transpose();
    for (Eigen::Index i = 1; i < n; ++i) {
      const Eigen::Vector4d cur = q.row(i).segment<4>(b.q).transpose();
      if (cur.dot(prev) < 0.0) {
        ++flips;
        reversing = !reversing;
      }
      prev = cur;
      if (reversing) {
        q.row(i).segment<4>(b.q) *= -1.0;
        ++reversed;
      }
    }
    if (flips > 0)
      res.notes.push_back(
          "the quaternion '" + b.name + "' changes sign " +
          std::to_string(flips) + " time" + (flips == 1 ? "" : "s") +
          " between consecutive samples (q and -q are the same rotation); " +
          std::to_string(reversed) + " sample" + (reversed == 1 ? "" : "s") +
          " were given the opposite sign before differentiating");
  }
  if (v.size() == 0) {
    // q' (and q'') by the local fits, then the velocities (accelerations)
    // by the quaternion kinematics (the identity without quaternions).
    const Eigen::MatrixXd qd = internal::DifferentiateSamples(
        motion.t, q, 1, options.degree, window, options.stop);
    Eigen::MatrixXd qdd;
    if (vdot.size() == 0)
      qdd = internal::DifferentiateSamples(motion.t, q, 2, options.degree,
                                           window, options.stop);
    Eigen::MatrixXd vdot_q;
    VelocitiesFromCoordinateRates(
        model, q, qd, vdot.size() == 0 ? &qdd : nullptr, &v, &vdot_q);
    res.velocities_from = "differentiated positions";
    if (vdot.size() == 0) {
      vdot = vdot_q;
      res.accelerations_from = "differentiated positions";
    }
  } else if (vdot.size() == 0) {
    vdot = internal::DifferentiateSamples(motion.t, v, 1, options.degree,
                                          window, options.stop);
    res.accelerations_from = "differentiated velocities";
  }

  // The fits above stop early on a signal; then no sample is computed
  // (the loop below ends at once).
  const bool fits_stopped =
      options.stop != nullptr && options.stop->load() != 0;
  // W^-1/2 of the input weights.
  Eigen::VectorXd wi = Eigen::VectorXd::Ones(nu);
  if (options.input_weights.size() == nu)
    wi = options.input_weights.cwiseSqrt().cwiseInverse();

  res.dof = nv;
  res.residual_max_per_coordinate = Eigen::VectorXd::Zero(nv);
  res.input_max_abs = Eigen::VectorXd::Zero(nu);
  res.input_work = Eigen::VectorXd::Zero(nu);
  res.constraint_work = Eigen::VectorXd::Zero(nc);

  Workspace ws(model);
  ws.SetParameters(params);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (options.stop != nullptr && options.stop->load() != 0) {
      res.ok = false;
      res.stop_code = options.stop->load();
      res.error =
          "interrupted (signal " + std::to_string(res.stop_code) +
          (fits_stopped ? ") while differentiating the " + std::to_string(n) +
                              " samples, before the first"
                        : ") after " + std::to_string(i) + " of " +
                              std::to_string(n) + " samples");
      break;
    }
    InverseDynamicsSample s;
    s.t = motion.t[static_cast<size_t>(i)];
    s.q = q.row(i).transpose();
    s.v = v.row(i).transpose();
    s.vdot = vdot.row(i).transpose();
    try {
      ws.SetState(s.t, s.q, s.v);
      EvaluateAll(&ws);
      const Eigen::VectorXd r = ws.M * s.vdot + ws.h;
      if (!r.allFinite()) throw std::runtime_error("M vdot + h is not finite");

      // The motion's free directions: an orthonormal basis N of null(J).
      Eigen::MatrixXd N;
      Eigen::JacobiSVD<Eigen::MatrixXd> svd_j;
      if (nc > 0) {
        svd_j.compute(ws.J, Eigen::ComputeThinU | Eigen::ComputeFullV);
        svd_j.setThreshold(options.rank_tolerance);
        s.rank_J = static_cast<int>(svd_j.rank());
        N = svd_j.matrixV().rightCols(nv - s.rank_J);
      } else {
        N = Eigen::MatrixXd::Identity(nv, nv);
      }
      const int dof = static_cast<int>(N.cols());

      // Inputs: weighted minimum-norm least squares of N' B u = N' r.
      s.u = Eigen::VectorXd::Zero(nu);
      if (nu > 0 && dof > 0) {
        const Eigen::MatrixXd A = N.transpose() * ws.B * wi.asDiagonal();
        Eigen::JacobiSVD<Eigen::MatrixXd> svd_a(
            A, Eigen::ComputeThinU | Eigen::ComputeThinV);
        svd_a.setThreshold(options.rank_tolerance);
        s.rank_inputs = static_cast<int>(svd_a.rank());
        s.u = wi.asDiagonal() * svd_a.solve(Eigen::VectorXd(N.transpose() * r));
      }
      // Multipliers: minimum-norm least squares of J' lambda = r - B u.
      const Eigen::VectorXd rest = r - ws.B * s.u;
      s.lambda = Eigen::VectorXd::Zero(nc);
      if (nc > 0 && s.rank_J > 0) {
        // pinv(J') = U_r S_r^-1 V_r' from J = U S V'.
        const int rk = s.rank_J;
        const Eigen::VectorXd y =
            svd_j.matrixV().leftCols(rk).transpose() * rest;
        s.lambda = svd_j.matrixU().leftCols(rk) *
                   y.cwiseQuotient(svd_j.singularValues().head(rk));
      }
      s.residual = rest - ws.J.transpose() * s.lambda;
      s.residual_norm = s.residual.norm();

      // Powers and the motion's constraint residuals.
      s.input_power = s.u.cwiseProduct(ws.B.transpose() * s.v);
      s.constraint_power = s.lambda.cwiseProduct(ws.J * s.v);
      if (nc > 0) {
        double pos = 0.0;
        for (int c = 0; c < model.num_constraints(); ++c) {
          const auto& decl = model.constraints()[static_cast<size_t>(c)];
          if (decl.kind == ConstraintKind::kNonholonomic) continue;
          pos = std::max(pos, ws.phi.segment(model.constraint_row(c), decl.rows)
                                  .cwiseAbs()
                                  .maxCoeff());
        }
        s.constraint_position = pos;
        s.constraint_velocity = ws.vel_residual.cwiseAbs().maxCoeff();
        s.constraint_acceleration =
            (ws.J * s.vdot + ws.bias).cwiseAbs().maxCoeff();
      }
      const bool ok =
          s.u.allFinite() && s.lambda.allFinite() && s.residual.allFinite();
      if (!ok)
        throw std::runtime_error(
            "the inputs or multipliers are not finite (a singular "
            "configuration?)");

      // Classification and maxima.
      res.dof = std::min(res.dof, dof);
      if (s.rank_inputs < dof) res.under_actuated = true;
      if (s.rank_inputs < nu) res.over_actuated = true;
      if (s.rank_J < nc) res.redundant_constraints = true;
    } catch (const std::exception& e) {
      res.ok = false;
      res.error = Source(motion) + ", " + Where(motion, i) +
                  " (t = " + Num(s.t) + "): " + e.what();
      break;
    }
    if (res.samples.empty() || s.residual_norm > res.residual_max) {
      res.residual_max = s.residual_norm;
      res.t_residual_max = s.t;
    }
    res.residual_max_per_coordinate =
        res.residual_max_per_coordinate.cwiseMax(s.residual.cwiseAbs());
    res.input_max_abs = res.input_max_abs.cwiseMax(s.u.cwiseAbs());
    res.constraint_position_max =
        std::max(res.constraint_position_max, s.constraint_position);
    res.constraint_velocity_max =
        std::max(res.constraint_velocity_max, s.constraint_velocity);
    res.constraint_acceleration_max =
        std::max(res.constraint_acceleration_max, s.constraint_acceleration);
    if (!res.samples.empty()) {
      const InverseDynamicsSample& p = res.samples.back();
      const double dt = s.t - p.t;
      res.input_work += 0.5 * dt * (p.input_power + s.input_power);
      res.constraint_work +=
          0.5 * dt * (p.constraint_power + s.constraint_power);
    }
    res.samples.push_back(std::move(s));
  }

  // Only the levels the motion gives are judged. A differentiated level
  // inherits the constraints from the level it comes from, up to the local
  // fits' truncation error (reported as the accelerations' error order):
  // with the 1e-6 default a golfer_3d run sampled every millisecond showed
  // |J vdot + b| ~ 1e-4 from the fits alone, and was warned as a motion
  // the model cannot follow.
  double worst = res.constraint_position_max;
  if (res.velocities_from == "given")
    worst = std::max(worst, res.constraint_velocity_max);
  if (res.accelerations_from == "given")
    worst = std::max(worst, res.constraint_acceleration_max);
  if (worst > options.constraint_warning) {
    std::ostringstream os;
    os << "the motion does not satisfy the constraints: max |Phi| "
       << res.constraint_position_max << ", max |J v + Phi_t| "
       << res.constraint_velocity_max << ", max |J vdot + b| "
       << res.constraint_acceleration_max << " (warning above "
       << options.constraint_warning
       << "); the inputs are those of a motion the model cannot follow";
    res.warnings.push_back(os.str());
  }
  if (res.under_actuated && !res.samples.empty()) {
    Eigen::Index j = 0;
    res.residual_max_per_coordinate.maxCoeff(&j);
    std::ostringstream os;
    os << "under-actuated: no input drives some free direction of the "
          "motion; the unexplained generalized force (residual_*) reaches "
       << res.residual_max << " (2-norm) at t = " << res.t_residual_max
       << ", most in coordinate '"
       << model.velocity_names()[static_cast<size_t>(j)] << "'";
    res.warnings.push_back(os.str());
  }
  if (res.over_actuated)
    res.warnings.push_back(
        "over-actuated: several inputs produce the motion; the reported "
        "ones minimize sum_k w_k u_k^2");
  if (res.redundant_constraints)
    res.warnings.push_back(
        "redundant constraints: the multipliers are not unique; the "
        "reported ones have minimum norm");
  return res;
}

}  // namespace daedalus
