// Private to src/eval: what the stage functions (dynamics.cpp) and the
// workspace with its multi-direction sweeps (dynamics_sweeps.cpp) share:
// values and finite checks at any order of dual, the calls of the user's
// functions, the checks that name what went wrong, and the sweep paths.
#pragma once

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "daedalus/dynamics.hpp"
#include "model/invoke.hpp"

namespace daedalus::internal {

// Value of a scalar at any order (the primal part).
inline double Primal(double x) { return x; }
template <class T, class G>
double Primal(const Dual<T, G>& x) {
  return Value(x);
}

// Finite check of every component (value and all tangents).
inline bool Finite(double x) { return std::isfinite(x); }
template <int N>
bool Finite(const Tangent<N>& x) {
  return isfinite(x);
}
template <class T, class G>
bool Finite(const Dual<T, G>& x) {
  return Finite(x.v) && Finite(x.d);
}
template <class Derived>
bool AllFinite(const Eigen::MatrixBase<Derived>& m) {
  // Doubles: x * 0 is 0 for every finite x and NaN for an infinity or a
  // NaN, and Eigen's sum vectorizes (an early-exit loop did not; the
  // forward route checks every right-hand side).
  if constexpr (std::is_same_v<typename Derived::Scalar, double>)
    return (m.array() * 0.0).sum() == 0.0;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (!Finite(m(i, j))) return false;
  return true;
}

// The user function at scalar type X (double, D1, D2, D3, M1, M2).
template <class X>
X Call(const internal::ScalarFn& fn, const Point<X>& x) {
  return internal::Invoke(fn, x);
}
template <class X>
void Call(const internal::VectorFn& fn, const Point<X>& x, VecX<X>& out) {
  internal::Invoke(fn, x, out);
}
template <class X>
void Call(const internal::MatrixFn& fn, const Point<X>& x, MatX<X>& out) {
  if constexpr (std::is_same_v<X, double>) {
    fn.f0(x, out);
  } else {
    static_assert(std::is_same_v<X, D1>);
    fn.f1(x, out);
  }
}

// A dual one order above S with value x and structural tangent dx.
template <class S>
Dual<S> Up(const S& x, double dx) {
  return Dual<S>(x, S(dx));
}
// Two orders above S: value x, inner tangent a, outer tangent b, and the
// mixed second tangent zero.
template <class S>
Dual<Dual<S>> Up2(const S& x, const S& a, const S& b) {
  return Dual<Dual<S>>(Dual<S>(x, a), Dual<S>(b, S(0.0)));
}

// Lift a vector to duals one or two orders up with zero structural tangents.
template <class S>
void Lift(const VecX<S>& x, VecX<Dual<S>>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Up(x[i], 0.0);
}
template <class S>
void Lift(const VecX<S>& x, VecX<Dual<Dual<S>>>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Up2(x[i], S(0.0), S(0.0));
}

/// The message for a model function that returned inf or NaN. When the
/// state it was given is itself not finite, the solution overflowed before
/// the call: the function is not to blame, and tighter tolerances will not
/// help (the pendulum with g = 1e308: accelerations at the largest double).
inline std::string NonFiniteMessage(const std::string& model_name,
                                    const std::string& what,
                                    const std::string& state,
                                    bool state_finite,
                                    double t) {
  if (!state_finite) {
    // The state itself (NaN and infinities) says nothing more.
    std::ostringstream at;
    at.precision(6);
    at << t;
    return "model '" + model_name +
           "': the integrator's state became non-finite at t=" + at.str() +
           " (" + what +
           " was called there): the solution overflowed double precision "
           "(values beyond 1.8e308); check the magnitudes of the parameters "
           "and initial values (units), which make the accelerations that "
           "large; tighter tolerances do not help";
  }
  return "model '" + model_name + "': " + what +
         " returned a non-finite value at " + state +
         "; check the function for division by zero or a domain error at "
         "this state";
}

template <class S>
[[noreturn]] void ThrowNonFinite(const BasicWorkspace<S>& ws,
                                 const std::string& what) {
  bool finite = std::isfinite(Primal(ws.t));
  for (Eigen::Index i = 0; i < ws.q.size(); ++i)
    finite = finite && std::isfinite(Primal(ws.q[i]));
  for (Eigen::Index i = 0; i < ws.v.size(); ++i)
    finite = finite && std::isfinite(Primal(ws.v[i]));
  throw std::runtime_error(NonFiniteMessage(
      ws.model().name(), what, DescribeState(ws), finite, Primal(ws.t)));
}

template <class S>
void CheckRows(const BasicWorkspace<S>& ws,
               const internal::ConstraintDecl& c,
               Eigen::Index got) {
  if (got != c.rows) {
    throw std::runtime_error("model '" + ws.model().name() + "': constraint '" +
                             c.name + "' returned " + std::to_string(got) +
                             " rows but was declared with " +
                             std::to_string(c.rows) +
                             "; pass the row count to Holonomic/Moving/"
                             "Nonholonomic");
  }
}

// A Holonomic (stationary) constraint must not depend on time.
template <class S>
void CheckStationary(const BasicWorkspace<S>& ws,
                     const internal::ConstraintDecl& c,
                     int r0) {
  for (int r = 0; r < c.rows; ++r) {
    // A non-finite Phi_t is a domain error, which the stage's finite check
    // reports as such (not as a time dependence).
    const double pt = Primal(ws.phi_t[r0 + r]);
    if (pt == 0.0 || !std::isfinite(pt)) continue;
    std::ostringstream os;
    os << "model '" << ws.model().name() << "': constraint '" << c.name
       << "' is declared stationary (Holonomic) but depends on time (Phi_t = "
       << Primal(ws.phi_t[r0 + r]) << " at " << DescribeState(ws)
       << "); declare it with Moving()";
    throw std::invalid_argument(os.str());
  }
}

// Lagrangian L = T - V (or the user's L) at any scalar type.
template <class X>
X EvalL(const internal::ModelData& d, const Point<X>& x) {
  if (d.energy_is_lagrangian) return Call(d.lagrangian, x);
  X l = Call(d.kinetic, x);
  if (d.potential) l -= Call(d.potential, x);
  return l;
}

// The velocity-dependent part of L: T when the model gives T and V (V does
// not depend on v, so it adds nothing to momenta, M or L_vq v + L_vt).
template <class X>
X EvalVelocityPart(const internal::ModelData& d, const Point<X>& x) {
  return d.energy_is_lagrangian ? Call(d.lagrangian, x) : Call(d.kinetic, x);
}

// Whether a function carries the sweep instantiation at base S (functions
// built by MakeScalarFn3 / MakeVectorFn do).
template <class S>
bool HasSweep1(const internal::ScalarFn& fn) {
  if constexpr (std::is_same_v<S, double>) {
    return static_cast<bool>(fn.m1);
  } else {
    return static_cast<bool>(fn.tm1);
  }
}
template <class S>
bool HasSweep2(const internal::ScalarFn& fn) {
  if constexpr (std::is_same_v<S, double>) {
    return static_cast<bool>(fn.m2);
  } else {
    return static_cast<bool>(fn.tm2);
  }
}
template <class S>
bool HasSweep1(const internal::VectorFn& fn) {
  if constexpr (std::is_same_v<S, double>) {
    return static_cast<bool>(fn.m1);
  } else {
    return static_cast<bool>(fn.tm1);
  }
}
template <class S>
bool HasSweeps(const internal::ModelData& d) {
  if (d.energy_is_lagrangian)
    return HasSweep1<S>(d.lagrangian) && HasSweep2<S>(d.lagrangian);
  return HasSweep1<S>(d.kinetic) && HasSweep2<S>(d.kinetic) &&
         (!d.potential || HasSweep1<S>(d.potential));
}

// ---- the multi-direction sweeps (dynamics_sweeps.cpp, for S = double and
// D1)

// Energies, L_q, L_t, momenta, L_vq v + L_vt and M by multi-direction
// sweeps: ceil((nq+1)/W) first-order sweeps of T and V, then ceil(nv/W)
// second-order sweeps of T for the momenta and one per mass-matrix column
// chunk on or below the diagonal.
template <class S>
void EnergyDerivativesBySweeps(BasicWorkspace<S>* ws, const EvalRequest& req);

// Phi, J and Phi_t of one holonomic or moving constraint (directions q_0
// .. q_{nv-1}, then t), or psi and A of a nonholonomic one (directions v),
// by multi-direction sweeps.
template <class S>
void ConstraintBySweeps(BasicWorkspace<S>* ws,
                        const internal::ConstraintDecl& c,
                        int r0);

}  // namespace daedalus::internal
