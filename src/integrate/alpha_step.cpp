// The generalized-alpha / HHT step (generalized_alpha.cpp's head: the
// scheme of Arnold and Bruls 2007 on the index-3 residual, Newton on the
// accelerations and the scaled multipliers), and its Lie-group form on
// models with unit quaternions (nq != nv; eval/chart.hpp).
//
// Lie group. After Bruls, Cardona and Arnold (2012, "Lie group
// generalized-alpha time integration of constrained flexible multibody
// systems", Mech Mach Theory 48:121-137), the position update is
//   q1 = q0 (x) exp(h Dq),  Dq = v0 + h (1/2 - beta) a0 + h beta a1
// on each quaternion block (Retract: the exact exponential, so |q1| = 1
// to round-off whatever the step), q1 = q0 + h Dq on the scalar
// coordinates, with the velocity and a-recursions unchanged (all in the
// tangent space, nv). The equations of motion and Phi(q1) = 0 hold at
// t1 as on vector spaces. Without quaternions the update is the vector
// one, written as before (q0 + h v0 + h^2 (1/2 - beta) a0 + h^2 beta a1,
// the same floating-point operations: the scheme is bit for bit what it
// was on those models).
//
// Newton. The unknowns stay vdot1 and the scaled multipliers; each
// iteration recomputes q1 from Dq through the exponential, so the
// position correction is a retraction and q1 stays on the group. A change
// dvdot moves h Dq by beta' h^2 dvdot and q1 by q1 (x) exp(T(h Dq)
// beta' h^2 dvdot / 2) to first order, T the tangent operator (the right
// Jacobian of the exponential), T(x) = I - x~/2 + O(|x|^2). The iteration
// matrix takes T = I, as Bruls et al. (2012) discuss: the
// stiffness block is K N(q1), K = dF/dq the DaeForm Jacobian's position
// columns and N(q1) dxi = q1 (x) (0, dxi) / 2 their chart direction (the
// derivative of F(q1 (x) exp(xi / 2)) at xi = 0, where J = Phi_q N), and
// the constraint block J = Phi_q N likewise. The residual is exact, so
// the iteration still converges to the exact discrete solution; the
// omitted T - I = O(h |Dq|) enters a block already scaled by beta' h^2,
// so the matrix is off by O(h^3 |Dq| |K|) against the O(1) mass block:
// the modified Newton's contraction factor grows by that much, and
// (measured, tests/integrate/lie_alpha_test.cpp) the iteration counts of
// the quaternion models stay those of the vector models at the same step.
//
// Measures. The Newton corrections and the local error estimate are
// tangent vectors (nv): a quaternion block's three components are angles
// in radians, weighed against 1 (the unit quaternion's size: rtol + atol,
// as a coordinate of size 1), scalar coordinates against |q_j| as before
// (TangentMagnitudes). The error estimate is projected onto the
// constraint manifold's tangent space through the chart
// (ProjectTangentError).
#include "integrate/alpha_step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "eval/chart.hpp"

namespace daedalus::internal {

namespace {

// Newton iterations allowed per step before the step is cut.
constexpr int kMaxAlphaNewton = 10;
// The Newton weights' floor, relative to the largest unknown: 1e4 units
// of round-off. A correction below it cannot be resolved whatever the
// tolerance (at rtol 1e-13 the pendulum's multipliers stalled at 300
// units of their round-off); an iteration that stops contracting within
// kStallFloors of these floors has converged to round-off.
constexpr double kRoundOffFloor = 1e4 * std::numeric_limits<double>::epsilon();
constexpr double kStallFloors = 100.0;

}  // namespace

Eigen::VectorXd TangentMagnitudes(const ModelData* chart,
                                  const Eigen::VectorXd& q) {
  if (chart == nullptr) return q.cwiseAbs();
  Eigen::VectorXd m(static_cast<Eigen::Index>(chart->velocities.size()));
  for (Eigen::Index j = 0; j < q.size(); ++j) {
    const int k = chart->velocity_of[j];
    if (k >= 0) m[k] = std::abs(q[j]);
  }
  for (const QuaternionBlock& b : chart->quaternions)
    m.segment<3>(b.v).setOnes();
  return m;
}

Eigen::VectorXd AdvancePositions(const ModelData* chart,
                                 const Eigen::VectorXd& q,
                                 const Eigen::VectorXd& dxi) {
  if (chart == nullptr) return q + dxi;
  Eigen::VectorXd q1 = q;
  Retract(*chart, dxi, q1);
  return q1;
}

void ProjectTangentError(Mechanics* mech,
                         const ModelData* chart,
                         const Eigen::VectorXd& q1,
                         Eigen::VectorXd* e) {
  Eigen::VectorXd ev = Eigen::VectorXd::Zero(e->size());
  if (chart == nullptr) {
    mech->ProjectErrorEstimate(*e, ev);
    return;
  }
  Eigen::VectorXd eq(q1.size());
  CoordinateRates<double>(*chart, q1, *e, eq);
  mech->ProjectErrorEstimate(eq, ev);
  ChartDirection(*chart, q1, eq, *e);
}

AlphaStepper::AlphaStepper(DaeForm* form,
                           const AlphaParameters& p,
                           const SimulationOptions& o,
                           SolverStats* stats)
    : form_(form), p_(p), o_(o), stats_(stats) {
  const DaeLayout& L = form_->layout();
  chart_ = L.chart;
  nq_ = L.nq;
  nv_ = L.nv;
  nc_ = L.nc;
  n_ = form_->size();
  y_.resize(n_);
  yp_.resize(n_);
  F_.resize(n_);
  A_.resize(n_, n_);
  K_.resize(nv_ + nc_, nv_ + nc_);
  if (chart_ != nullptr) Nq_.resize(nq_, nv_);
  holonomic_ = L.holonomic;
}

bool AlphaStepper::Step(const AlphaState& s0,
                        double h,
                        double tol_factor,
                        AlphaState* s1,
                        std::string* why) {
  const double am = p_.alpha_m, af = p_.alpha_f;
  const double bp = p_.beta * (1.0 - af) / (1.0 - am);
  const double gp = p_.gamma * (1.0 - af) / (1.0 - am);
  const double sq = bp * h * h;  // dq / dvdot, and the row scale
  const double snh = bp * h / gp;
  const double t1 = s0.t + h;
  // The parts of a1, q1 (or Dq on the group) and v1 that do not depend on
  // vdot1.
  const Eigen::VectorXd a_base = (af * s0.vdot - am * s0.a) / (1.0 - am);
  const Eigen::VectorXd q_base =
      chart_ == nullptr
          ? Eigen::VectorXd(s0.q + h * s0.v + h * h * (0.5 - p_.beta) * s0.a)
          : Eigen::VectorXd(s0.v + h * (0.5 - p_.beta) * s0.a);
  const Eigen::VectorXd v_base = s0.v + h * (1.0 - p_.gamma) * s0.a;
  const double c = (1.0 - af) / (1.0 - am);
  s1->t = t1;
  s1->vdot = s0.vdot;  // predictor: constant accelerations
  s1->lambda = s0.lambda;
  Eigen::VectorXd rhs(nv_ + nc_), dx(nv_ + nc_);
  double last = std::numeric_limits<double>::infinity();
  bool refresh = true;
  for (int it = 0; it < kMaxAlphaNewton; ++it) {
    s1->a = a_base + c * s1->vdot;
    Positions(s0, q_base, h, s1);
    s1->v = v_base + h * p_.gamma * s1->a;
    Pack(*s1);
    form_->Residual(t1, y_.data(), yp_.data(), F_.data());
    ++stats_->rhs_evals;
    if (!F_.allFinite()) {
      *why = "the residual is not finite";
      return false;
    }
    // F's rows: nq position rows (unused), nv equations, nc constraints.
    rhs.head(nv_) = -sq * F_.segment(nq_, nv_);
    for (int i = 0; i < nc_; ++i)
      rhs[nv_ + i] =
          -(holonomic_[static_cast<size_t>(i)] ? 1.0 : snh) * F_[nq_ + nv_ + i];
    // The exact Jacobian at the step's first iteration, kept while the
    // iteration contracts by 5 or more per iteration and evaluated
    // again where it does not (a modified Newton: the Jacobian costs
    // n tangent sweeps, an iteration with it kept one residual).
    if (refresh) {
      form_->DenseJacobian(t1, 1.0 / (gp * h), y_.data(), yp_.data(),
                           A_.data());
      ++stats_->jacobian_evals;
      Assemble(h, bp, gp, s1->q);
      lu_.compute(K_);
      refresh = false;
    }
    dx = lu_.solve(rhs);
    ++stats_->newton_iterations;
    if (!dx.allFinite()) {
      *why = "the iteration matrix is singular";
      return false;
    }
    s1->vdot += dx.head(nv_) / sq;
    s1->lambda += dx.tail(nc_) / sq;
    // The position correction dx.head(nv) is a tangent increment (an
    // angle on a quaternion block): weighed in the tangent space.
    const Eigen::VectorXd mag = TangentMagnitudes(chart_, s1->q);
    const double dq = WeightedMax(dx.head(nv_), mag, 1.0, tol_factor);
    // The multiplier rows are the constraints at position level, so
    // their correction beta' h^2 dlambda carries the positions'
    // round-off: its floor is the positions' (with the multipliers' own
    // floor, 1e4 eps |beta' h^2 lambda|, the correction sat at three
    // times a tolerance that shrinks with h, the stall went unseen, and
    // four_bar at rtol 1e-8 cut its step from 2e-5 to 5e-15 s by
    // t = 0.096).
    const double dmu =
        nc_ > 0 ? WeightedMax(dx.tail(nc_), sq * s1->lambda, mass_scale_,
                              tol_factor, mag.maxCoeff())
                : 0.0;
    const double d = std::max(dq, dmu);
    const bool stalled = it >= 1 && d > 0.5 * last && d <= kStallFloors;
    if (d <= 1.0 || stalled) {
      s1->a = a_base + c * s1->vdot;
      Positions(s0, q_base, h, s1);
      s1->v = v_base + h * p_.gamma * s1->a;
      return true;
    }
    if (it >= 2 && d > 0.9 * last) break;  // not contracting
    if (it >= 1 && d > 0.2 * last) refresh = true;
    last = d;
  }
  std::ostringstream os;
  os << "Newton did not converge in " << kMaxAlphaNewton
     << " iterations (weighted correction " << last << ")";
  *why = os.str();
  return false;
}

Eigen::VectorXd AlphaStepper::ErrorEstimate(const AlphaState& s0,
                                            const AlphaState& s1,
                                            double h) const {
  return (h * h * (p_.beta - 0.5 * p_.gamma + 1.0 / 12.0)) *
         (s1.vdot - s0.vdot);
}

double AlphaStepper::ErrorNorm(const Eigen::VectorXd& e,
                               const AlphaState& s0,
                               const AlphaState& s1) const {
  const Eigen::VectorXd m0 = TangentMagnitudes(chart_, s0.q),
                        m1 = TangentMagnitudes(chart_, s1.q);
  double sum = 0.0;
  for (int i = 0; i < nv_; ++i) {
    const double w = o_.rtol * std::max(m0[i], m1[i]) + o_.atol;
    sum += (e[i] / w) * (e[i] / w);
  }
  return nv_ > 0 ? std::sqrt(sum / nv_) : 0.0;
}

// q1 from the accelerations' a1: q_base + h^2 beta a1 without quaternions
// (q_base = q0 + h v0 + h^2 (1/2 - beta) a0), q0 (x) exp(h Dq) with them
// (base = v0 + h (1/2 - beta) a0, Dq = base + h beta a1).
void AlphaStepper::Positions(const AlphaState& s0,
                             const Eigen::VectorXd& base,
                             double h,
                             AlphaState* s1) const {
  if (chart_ == nullptr) {
    s1->q = base + h * h * p_.beta * s1->a;
    return;
  }
  s1->q = s0.q;
  Retract(*chart_, h * (base + h * p_.beta * s1->a), s1->q);
}

void AlphaStepper::Pack(const AlphaState& s) {
  const DaeLayout& L = form_->layout();
  y_.segment(L.iq(), nq_) = s.q;
  y_.segment(L.iv(), nv_) = s.v;
  y_.segment(L.il(), nc_) = s.lambda;
  if (chart_ == nullptr) {
    yp_.segment(L.iq(), nq_) = s.v;
  } else {
    CoordinateRates<double>(*chart_, s.q, s.v, yp_.segment(L.iq(), nq_));
  }
  yp_.segment(L.iv(), nv_) = s.vdot;
  yp_.segment(L.il(), nc_).setZero();
}

// K_ from A_ = dF/dy + cj dF/dyp at cj = 1 / (gamma' h): the q columns
// plus gamma' / (beta' h) times the v columns are dF/dq1 along the
// update (q1, v1, vdot1 all move with dvdot1). On quaternion models the
// q columns are taken along the chart, dF/dq N(q1) (the file's head: the
// tangent operator T(h Dq) is replaced by the identity).
void AlphaStepper::Assemble(double h,
                            double bp,
                            double gp,
                            const Eigen::VectorXd& q1) {
  const double sq = bp * h * h, snh = bp * h / gp;
  const double w = gp / (bp * h);
  const int iv = nq_, il = nq_ + nv_;
  if (chart_ != nullptr) {
    Eigen::MatrixXd fq = Eigen::MatrixXd::Zero(nq_, nq_);
    Nq_.setZero();
    CoordinateRatesJacobian(*chart_, q1, Eigen::VectorXd::Zero(nv_), fq, Nq_);
    Aq_.noalias() = A_.leftCols(nq_) * Nq_;
  }
  const Eigen::MatrixXd& Q = chart_ == nullptr ? A_ : Aq_;
  for (int r = 0; r < nv_ + nc_; ++r) {
    const int row = nq_ + r;  // F's v rows, then its constraint rows
    const bool eq = r < nv_;
    const double s =
        eq ? sq : (holonomic_[static_cast<size_t>(r - nv_)] ? 1.0 : snh);
    for (int j = 0; j < nv_; ++j)
      K_(r, j) = s * (Q(row, j) + w * A_(row, iv + j));
    for (int j = 0; j < nc_; ++j)
      K_(r, nv_ + j) = eq ? A_(row, il + j) : s * A_(row, il + j) / sq;
  }
}

// max |d_i| / w_i with w_i = f (rtol |x_i| + atol scale), floored at
// kRoundOffFloor times the vector's largest entry.
double AlphaStepper::WeightedMax(const Eigen::VectorXd& d,
                                 const Eigen::VectorXd& x,
                                 double scale,
                                 double f,
                                 double magnitude) const {
  const double floor =
      kRoundOffFloor * std::max(magnitude, x.cwiseAbs().maxCoeff());
  double m = 0.0;
  for (Eigen::Index i = 0; i < d.size(); ++i)
    m = std::max(
        m,
        std::abs(d[i]) /
            std::max(f * (o_.rtol * std::abs(x[i]) + o_.atol * scale), floor));
  return m;
}

}  // namespace daedalus::internal
