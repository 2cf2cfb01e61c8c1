// The model: an immutable description of a constrained mechanical system.
//
// A problem author declares generalized coordinates, parameters, energies,
// forces and named constraints through ModelBuilder, writing each physical
// function once as a generic lambda of a `Point` x (members x.q, x.v, x.t,
// x.p, all of one scalar type). Daedalus evaluates those lambdas with plain
// doubles and with dual numbers, and so derives M, h, J, Phi_t and the
// acceleration bias exactly. Sign conventions: docs/conventions.md.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "daedalus/contact.hpp"
#include "daedalus/dual.hpp"
#include "daedalus/events.hpp"
#include "daedalus/sym.hpp"

namespace daedalus {

template <class S>
using VecX = Eigen::Matrix<S, Eigen::Dynamic, 1>;
template <class S>
using MatX = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;

/// The arguments of every user function: coordinates q (nq), velocities v
/// (nv), time t and parameters p (np), all of scalar type S. nv = nq unless
/// the model declares quaternions (ModelBuilder::Quaternion): a unit
/// quaternion has 4 coordinates and 3 velocities, its angular velocity in
/// the rotated frame (docs/conventions.md, "Velocities").
template <class S>
struct Point {
  using Scalar = S;
  const VecX<S>& q;
  const VecX<S>& v;
  const S& t;
  const VecX<S>& p;
};

/// Handle to a named parameter; `x.p[handle]` reads it in a user function.
struct Param {
  Eigen::Index index = -1;
  operator Eigen::Index() const { return index; }  // NOLINT
};

/// The values a parameter may take (ModelBuilder::Parameter), an interval
/// whose ends may be open or infinite. A value outside is refused before
/// a run: by Simulate (std::invalid_argument) and on the command line
/// (exit 2), with the parameter, its value and the bound.
struct ParamRange {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  bool lower_open = false;
  bool upper_open = false;

  /// > 0: masses, inertias, lengths, radii.
  static ParamRange Positive() { return {0.0, Infinity(), true, false}; }
  /// >= 0: stiffnesses, damping coefficients, durations.
  static ParamRange NonNegative() { return {0.0, Infinity(), false, false}; }
  /// in [lower, upper].
  static ParamRange Between(double lower, double upper) {
    return {lower, upper, false, false};
  }
  bool Contains(double x) const {
    return (lower_open ? x > lower : x >= lower) &&
           (upper_open ? x < upper : x <= upper);
  }
  /// "> 0", ">= 0", "in [a, b]", or "any value" (for messages and --help).
  std::string Describe() const;

 private:
  static double Infinity() { return std::numeric_limits<double>::infinity(); }
};

/// Kind of a constraint (docs/conventions.md):
///  - kHolonomic:    Phi(q) = 0, stationary (Phi_t must vanish);
///  - kMoving:       Phi(q, t) = 0, rheonomic;
///  - kNonholonomic: A(q, t) v + a(q, t) = 0, written as one function of
///                   (q, v, t) that is affine in v.
enum class ConstraintKind { kHolonomic, kMoving, kNonholonomic };
const char* ToString(ConstraintKind kind);

namespace internal {

/// One scalar-valued user function at the scalar types Daedalus uses. f3 is
/// set only for functions whose second derivatives enter the equations of
/// motion (energies, Lagrangian): their tangents need third order.
struct ScalarFn {
  std::function<double(const Point<double>&)> f0;
  std::function<D1(const Point<D1>&)> f1;
  std::function<D2(const Point<D2>&)> f2;
  std::function<D3(const Point<D3>&)> f3;
  // Multi-direction sweeps (energies): gradients and mass-matrix columns
  // kSweepWidth directions per call.
  std::function<M1(const Point<M1>&)> m1;
  std::function<M2(const Point<M2>&)> m2;
  std::function<TM1(const Point<TM1>&)> tm1;  // the same over a D1 base
  std::function<TM2(const Point<TM2>&)> tm2;
  // Recording into an expression graph (sym.hpp): every function has it.
  std::function<Sym(const Point<Sym>&)> fs;
  explicit operator bool() const { return static_cast<bool>(f0); }
};

/// One vector-valued user function (writes its rows into `out`). f3 is set
/// for constraints only (the tangent of the acceleration bias).
struct VectorFn {
  std::function<void(const Point<double>&, VecX<double>&)> f0;
  std::function<void(const Point<D1>&, VecX<D1>&)> f1;
  std::function<void(const Point<D2>&, VecX<D2>&)> f2;
  std::function<void(const Point<D3>&, VecX<D3>&)> f3;
  // Multi-direction sweep (constraints): kSweepWidth Jacobian columns per
  // call.
  std::function<void(const Point<M1>&, VecX<M1>&)> m1;
  std::function<void(const Point<TM1>&, VecX<TM1>&)> tm1;  // over D1
  std::function<void(const Point<Sym>&, VecX<Sym>&)> fs;   // recording
  explicit operator bool() const { return static_cast<bool>(f0); }
};

/// One matrix-valued user function (first and second order only).
struct MatrixFn {
  std::function<void(const Point<double>&, MatX<double>&)> f0;
  std::function<void(const Point<D1>&, MatX<D1>&)> f1;
  std::function<void(const Point<Sym>&, MatX<Sym>&)> fs;  // recording
  explicit operator bool() const { return static_cast<bool>(f0); }
};

template <class S, class R>
void AssignRows(R&& r, VecX<S>& out) {
  using RD = std::decay_t<R>;
  if constexpr (std::is_arithmetic_v<RD> || std::is_same_v<RD, S>) {
    out.resize(1);
    out[0] = S(r);
  } else {
    out = r;
  }
}

template <class F>
ScalarFn MakeScalarFn(F f) {
  ScalarFn fn;
  fn.f0 = [f](const Point<double>& x) { return double(f(x)); };
  fn.f1 = [f](const Point<D1>& x) { return D1(f(x)); };
  fn.f2 = [f](const Point<D2>& x) { return D2(f(x)); };
  fn.fs = [f](const Point<Sym>& x) { return Sym(f(x)); };
  return fn;
}

/// MakeScalarFn plus the third-order and multi-direction instantiations
/// (energies).
template <class F>
ScalarFn MakeScalarFn3(F f) {
  ScalarFn fn = MakeScalarFn(f);
  fn.f3 = [f](const Point<D3>& x) { return D3(f(x)); };
  fn.m1 = [f](const Point<M1>& x) { return M1(f(x)); };
  fn.m2 = [f](const Point<M2>& x) { return M2(f(x)); };
  fn.tm1 = [f](const Point<TM1>& x) { return TM1(f(x)); };
  fn.tm2 = [f](const Point<TM2>& x) { return TM2(f(x)); };
  return fn;
}

template <class F>
VectorFn MakeVectorFn(F f) {
  VectorFn fn;
  fn.f0 = [f](const Point<double>& x, VecX<double>& out) {
    AssignRows<double>(f(x), out);
  };
  fn.f1 = [f](const Point<D1>& x, VecX<D1>& out) { AssignRows<D1>(f(x), out); };
  fn.f2 = [f](const Point<D2>& x, VecX<D2>& out) { AssignRows<D2>(f(x), out); };
  fn.f3 = [f](const Point<D3>& x, VecX<D3>& out) { AssignRows<D3>(f(x), out); };
  fn.m1 = [f](const Point<M1>& x, VecX<M1>& out) { AssignRows<M1>(f(x), out); };
  fn.tm1 = [f](const Point<TM1>& x, VecX<TM1>& out) {
    AssignRows<TM1>(f(x), out);
  };
  fn.fs = [f](const Point<Sym>& x, VecX<Sym>& out) {
    AssignRows<Sym>(f(x), out);
  };
  return fn;
}

/// Like MakeVectorFn but never instantiated with second-order duals (forces
/// need first derivatives at most).
template <class F>
VectorFn MakeVectorFn1(F f) {
  VectorFn fn;
  fn.f0 = [f](const Point<double>& x, VecX<double>& out) {
    AssignRows<double>(f(x), out);
  };
  fn.f1 = [f](const Point<D1>& x, VecX<D1>& out) { AssignRows<D1>(f(x), out); };
  fn.fs = [f](const Point<Sym>& x, VecX<Sym>& out) {
    AssignRows<Sym>(f(x), out);
  };
  return fn;
}

template <class F>
MatrixFn MakeMatrixFn(F f) {
  MatrixFn fn;
  fn.f0 = [f](const Point<double>& x, MatX<double>& out) { out = f(x); };
  fn.f1 = [f](const Point<D1>& x, MatX<D1>& out) { out = f(x); };
  fn.fs = [f](const Point<Sym>& x, MatX<Sym>& out) { out = f(x); };
  return fn;
}

/// The mass matrix and inertial forces of a model computed by another
/// route than differentiating its energies: a multibody tree's recursive
/// algorithms (multibody_dynamics.hpp). At a point x it writes M (nv x nv)
/// and inertial = L_vq v + L_vt - L_q (nv), which must agree with the
/// model's kinetic and potential energies (those still give the reported
/// energies). Value (f0) and tangent (f1) forms.
struct InertialFn {
  std::function<void(const Point<double>&, MatX<double>&, VecX<double>&)> f0;
  std::function<void(const Point<D1>&, MatX<D1>&, VecX<D1>&)> f1;
  /// Optional forward dynamics in O(nv) (a tree's articulated-body
  /// algorithm): at x with the generalized force `force` (nv: B u - D v +
  /// Q_r, everything but the inertial forces) it writes vdot solving
  /// M vdot = force - inertial and, when `kinetic` is not null, the
  /// kinetic energy. The ODE forms use it for a model without constraints
  /// instead of forming and factoring M.
  std::function<void(const Point<double>&,
                     const VecX<double>& force,
                     VecX<double>& vdot,
                     double* kinetic)>
      forward;
  /// What computes it, for messages ("recursive multibody dynamics").
  std::string what;
  /// Energy terms declared when it was set: Build() refuses a model that
  /// declares energy terms later, which it would not include.
  size_t kinetic_terms = 0, potential_terms = 0;
  explicit operator bool() const { return static_cast<bool>(f0); }
};

/// A named event: g(t, q, v, p), its options, its reset map (or empty).
struct EventDecl {
  std::string name;
  ScalarFn fn;
  EventOptions options;
  VectorFn reset;
};

struct InputChannel {
  std::string name;
  VectorFn column;  // B_k(q): nv rows
  ScalarFn value;   // u_k(t, q, v)
};

struct ConstraintDecl {
  std::string name;
  ConstraintKind kind;
  int rows;
  bool unilateral;
  VectorFn fn;  // Phi(q, t) or A(q, t) v + a(q, t): `rows` rows
  /// Coordinates the constraint depends on (sorted, unique); empty: all.
  /// Declared with Touches; checked by the sparse path (sparse_kkt.hpp).
  std::vector<int> coords = {};
  std::optional<ContactLaw> law = {};  // unilateral: declared impact law
};

/// One term of a kinetic or potential energy that is a sum of terms, each
/// depending only on the (q, v) of the listed coordinates.
struct EnergyTerm {
  std::vector<int> coords;  // sorted, unique
  ScalarFn fn;
  /// Set for ConstantBodyMass: the block M_k(p) (coords x coords, in the
  /// order given to Touches); fn is then v_k' M_k v_k / 2.
  std::function<MatX<double>(const Eigen::VectorXd&)> constant_mass = {};
  std::vector<int> given_order = {};  // coords as given (before sorting)
};

/// |lambda_t| <= mu lambda_n between a one-row normal constraint and a
/// tangential constraint (1 or more rows, |.| the Euclidean norm).
struct FrictionConeDecl {
  std::string name, normal, tangential;
  double mu = 0.0;
  int normal_row = -1;               // resolved by Build()
  std::vector<int> tangential_rows;  // resolved by Build()
};

struct ModelData;
class CompiledModel;  // src/eval/compiled_model.hpp

/// A unit quaternion's place in q and v: coordinates q[q .. q+3] (w, x, y,
/// z), velocities v[v .. v+2] (angular velocity in the rotated frame).
struct QuaternionBlock {
  std::string name;
  int q = 0;
  int v = 0;
};

/// A model's compiled evaluator (sym.hpp), recorded and compiled on first
/// use. A copy starts empty: a rewritten model has other functions.
class CompiledCache {
 public:
  CompiledCache() = default;
  CompiledCache(const CompiledCache& /*other*/) {}
  CompiledCache& operator=(const CompiledCache&) = delete;

  mutable std::once_flag once;
  mutable std::shared_ptr<CompiledModel> compiled;  // null: not compilable
  mutable std::string why_not;                      // the reason, if null
};

}  // namespace internal

/// The coordinates (by index) that a constraint or an energy term depends on:
/// its declared sparsity. A function given with Touches is still called with
/// the whole Point; the sparse path (sparse_kkt.hpp) seeds derivatives only
/// along these coordinates, and checks the declaration at its first
/// evaluation (a dependence on an undeclared coordinate is an error).
struct Touches {
  std::vector<int> coords;
};

/// Immutable model. Cheap to copy (shared, read-only description).
class Model {
 public:
  Model() = default;

  const std::string& name() const;
  int nq() const;
  int nv() const;
  /// Total number of constraint rows.
  int nc() const;
  int num_constraints() const;
  int num_inputs() const;
  int num_parameters() const;
  int num_quadratures() const;
  const std::string& quadrature_name(int i) const;
  int num_functionals() const;
  /// Index of a functional by name. @throws std::invalid_argument listing
  /// the declared functionals when `name` is unknown.
  int FunctionalIndex(const std::string& name) const;

  const std::vector<std::string>& coordinate_names() const;
  /// The names of the velocities (nv): a coordinate's own name for a
  /// scalar coordinate, "<quaternion>.wx|wy|wz" for a quaternion's angular
  /// velocity. CSV columns and --v0 use them, prefixed "v_".
  const std::vector<std::string>& velocity_names() const;
  /// The quaternion blocks (ModelBuilder::Quaternion), in declaration
  /// order; empty for a model with nq = nv.
  const std::vector<internal::QuaternionBlock>& quaternions() const;
  const std::vector<std::string>& parameter_names() const;
  const Eigen::VectorXd& default_parameters() const;
  /// Index of a parameter by name. @throws std::invalid_argument listing the
  /// valid names when `name` is unknown.
  int ParameterIndex(const std::string& name) const;
  /// The declared range of each parameter (np).
  const std::vector<ParamRange>& parameter_ranges() const;
  /// Empty when every value of `p` (np) lies in its parameter's range; else
  /// what is wrong: the first such parameter, its value and the bound.
  std::string ParameterRangeError(const Eigen::VectorXd& p) const;

  const std::vector<internal::ConstraintDecl>& constraints() const;
  const std::vector<internal::InputChannel>& inputs() const;
  /// First row of constraint i in the stacked constraint vector.
  int constraint_row(int i) const;
  /// Name of stacked constraint row r ("loop" or "loop[1]").
  std::string RowName(int r) const;

  bool has_damping() const;
  bool has_other_loads() const;
  bool has_moving_constraints() const;
  bool has_nonholonomic_constraints() const;

  const internal::ModelData& data() const { return *data_; }
  /// A handle to the same description that does not keep it alive: for
  /// objects the description owns (its compiled evaluator).
  Model Unowned() const {
    Model m;
    m.data_ = std::shared_ptr<const internal::ModelData>(
        std::shared_ptr<const internal::ModelData>(), data_.get());
    return m;
  }

 private:
  friend class ModelBuilder;
  friend Model WithoutJointLimits(const Model& model);
  std::shared_ptr<const internal::ModelData> data_;
};

/// The same model without the contacts of its joints' position limits
/// (the unilateral constraints whose ContactLaw::joint is set, declared by
/// mb::Multibody::AddTo from mb::JointLimits): what `--no-joint-limits`
/// runs, the joints free as in Pinocchio's or RBDL's forward dynamics
/// (docs/contact.md, "Joint limits"). Every other function, the energy
/// terms and the recursive dynamics included, is shared; the rows of the
/// other constraints keep their order. The model itself when it has no
/// joint limits.
Model WithoutJointLimits(const Model& model);
/// The number of constraint rows of `model` that are joint limits
/// (ContactLaw::joint set).
int NumJointLimitRows(const Model& model);

/// Builds a Model. Every physics function is a generic lambda of a Point x.
///
/// Example (planar pendulum in Cartesian coordinates, docs/problems.md):
/// @code
///   ModelBuilder b("pendulum");
///   b.Coordinates({"x", "y"});
///   Param m = b.Parameter("m", 1.0), g = b.Parameter("g", 9.81);
///   b.KineticEnergy([=](const auto& x) {
///     return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]); });
///   b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[1];
///   }); b.Holonomic("rod", [](const auto& x) {
///     return x.q[0] * x.q[0] + x.q[1] * x.q[1] - 1.0; });
///   Model model = std::move(b).Build();
/// @endcode
class ModelBuilder {
 public:
  explicit ModelBuilder(std::string name);

  /// Declares generalized coordinates, each with its velocity q' = v
  /// (appended after those declared before).
  ModelBuilder& Coordinates(std::vector<std::string> names);
  /// Declares a unit quaternion (w, x, y, z) as the coordinates
  /// "<name>.w", "<name>.x", "<name>.y", "<name>.z" and its angular velocity
  /// in the rotated frame as the three velocities "<name>.wx|wy|wz", with
  /// q' = q (0, w) / 2 (quaternion product; docs/conventions.md,
  /// "Velocities"). User functions receive the quaternion normalized; the
  /// integrator's copy is kept unit and its norm drift reported.
  ModelBuilder& Quaternion(const std::string& name);
  /// Declares a named parameter with its default value and the values it
  /// may take (default: any finite value). @throws std::invalid_argument
  /// when the default lies outside `range`.
  Param Parameter(const std::string& name,
                  double default_value,
                  ParamRange range = {});
  /// Declares that at times t outside [from, to] no function of the model
  /// (energies, inputs, loads, constraints, events, resets, functionals)
  /// depends on parameter `p`: the adjoint's quadrature then skips its
  /// column of f_p there (ModelWithControls: a spline coefficient acts on
  /// its knot span only). Default: every time. A declaration that does not
  /// hold makes adjoint gradients wrong. @throws std::invalid_argument
  /// when from > to or p is not a parameter of this builder.
  ModelBuilder& ParameterTimeSupport(Param p, double from, double to);

  /// Kinetic energy T(q, v, t, p) [J]; mass matrix M = d2T/dv2 by AD.
  template <class F>
  ModelBuilder& KineticEnergy(F f) {
    SetKinetic(internal::MakeScalarFn3(std::move(f)));
    return *this;
  }
  /// Mass matrix M(q, p) (nv x nv) instead of a kinetic energy; T = v'Mv/2.
  template <class F>
  ModelBuilder& MassMatrix(F f) {
    auto t = [f](const auto& x) {
      using S = Scalar<decltype(x)>;
      const MatX<S> m = f(x);
      return S(0.5 * x.v.dot(m * x.v));
    };
    SetKinetic(internal::MakeScalarFn3(t));
    return *this;
  }
  /// Potential energy V(q, t, p) [J].
  template <class F>
  ModelBuilder& PotentialEnergy(F f) {
    SetPotential(internal::MakeScalarFn3(std::move(f)));
    return *this;
  }
  /// A whole Lagrangian L(q, v, t, p) instead of T and V; the energy
  /// reported is then the energy function E = v'dL/dv - L (seed 000).
  template <class F>
  ModelBuilder& Lagrangian(F f) {
    SetLagrangian(internal::MakeScalarFn3(std::move(f)));
    return *this;
  }
  /// A named input channel k: generalized force B_k(q) u_k, with the column
  /// B_k(q) (nv rows) and the input value u_k(t, q, v, p) as functions.
  template <class FB, class FU>
  ModelBuilder& Input(const std::string& name, FB column, FU value) {
    AddInput(name, internal::MakeVectorFn1(std::move(column)),
             internal::MakeScalarFn(std::move(value)));
    return *this;
  }
  /// Viscous damping matrix D(q, p) (nv x nv, symmetric positive
  /// semidefinite); the generalized force is -D v.
  template <class F>
  ModelBuilder& Damping(F f) {
    SetDamping(internal::MakeMatrixFn(std::move(f)));
    return *this;
  }
  /// Other generalized loads Q_r(t, q, v, p) (nv rows).
  template <class F>
  ModelBuilder& OtherLoads(F f) {
    SetOtherLoads(internal::MakeVectorFn1(std::move(f)));
    return *this;
  }
  /// Stationary holonomic constraint Phi(q) = 0 with `rows` rows (a scalar
  /// return value is one row).
  template <class F>
  ModelBuilder& Holonomic(const std::string& name,
                          F f,
                          int rows = 1,
                          bool unilateral = false) {
    AddConstraint(name, ConstraintKind::kHolonomic, rows, unilateral,
                  internal::MakeVectorFn(std::move(f)));
    return *this;
  }
  /// Holonomic constraint that depends only on the coordinates `touches`.
  template <class F>
  ModelBuilder& Holonomic(const std::string& name,
                          Touches touches,
                          F f,
                          int rows = 1,
                          bool unilateral = false) {
    AddConstraint(name, ConstraintKind::kHolonomic, rows, unilateral,
                  internal::MakeVectorFn(std::move(f)),
                  std::move(touches.coords));
    return *this;
  }
  /// Moving (rheonomic) holonomic constraint Phi(q, t) = 0.
  template <class F>
  ModelBuilder& Moving(const std::string& name,
                       F f,
                       int rows = 1,
                       bool unilateral = false) {
    AddConstraint(name, ConstraintKind::kMoving, rows, unilateral,
                  internal::MakeVectorFn(std::move(f)));
    return *this;
  }
  /// Moving constraint that depends only on the coordinates `touches`.
  template <class F>
  ModelBuilder& Moving(const std::string& name,
                       Touches touches,
                       F f,
                       int rows = 1,
                       bool unilateral = false) {
    AddConstraint(name, ConstraintKind::kMoving, rows, unilateral,
                  internal::MakeVectorFn(std::move(f)),
                  std::move(touches.coords));
    return *this;
  }
  /// Nonholonomic constraint A(q, t) v + a(q, t) = 0, given as one function
  /// of x that must be affine in x.v.
  template <class F>
  ModelBuilder& Nonholonomic(const std::string& name, F f, int rows = 1) {
    AddConstraint(name, ConstraintKind::kNonholonomic, rows, false,
                  internal::MakeVectorFn(std::move(f)));
    return *this;
  }
  /// Nonholonomic constraint that depends only on the (q, v) of `touches`.
  template <class F>
  ModelBuilder& Nonholonomic(const std::string& name,
                             Touches touches,
                             F f,
                             int rows = 1) {
    AddConstraint(name, ConstraintKind::kNonholonomic, rows, false,
                  internal::MakeVectorFn(std::move(f)),
                  std::move(touches.coords));
    return *this;
  }

  /// One term T_k(q, v, t, p) of a kinetic energy T = sum_k T_k, depending
  /// only on the coordinates `touches` (a body's coordinates: M is then
  /// block diagonal, one block per body). Replaces KineticEnergy.
  template <class F>
  ModelBuilder& KineticEnergyTerm(Touches touches, F f) {
    AddKineticTerm(std::move(touches.coords),
                   internal::MakeScalarFn3(std::move(f)));
    return *this;
  }
  /// A body's mass matrix block M_k(q, p) (k x k for the k coordinates in
  /// `touches`, in that order): the term T_k = v_k' M_k v_k / 2.
  template <class F>
  ModelBuilder& BodyMassMatrix(Touches touches, F f) {
    const std::vector<int> c = touches.coords;
    auto t = [f, c](const auto& x) {
      using S = Scalar<decltype(x)>;
      const MatX<S> m = f(x);
      VecX<S> vk(static_cast<Eigen::Index>(c.size()));
      for (size_t i = 0; i < c.size(); ++i) vk[i] = x.v[c[i]];
      return S(0.5 * vk.dot(m * vk));
    };
    return KineticEnergyTerm(std::move(touches), t);
  }
  /// A body's mass block that depends on the parameters only: M_k(p)
  /// (k x k for the k coordinates in `touches`, in that order), the term
  /// T_k = v_k' M_k v_k / 2 (planar bodies in (x, y, theta), spatial bodies
  /// with body-frame velocities). The sparse path evaluates M_k once per
  /// parameter set instead of differentiating T_k at every state.
  template <class F>
  ModelBuilder& ConstantBodyMass(Touches touches, F f) {
    const std::vector<int> c = touches.coords;
    auto mass = [f](const Eigen::VectorXd& p) { return MatX<double>(f(p)); };
    auto t = [mass, c](const auto& x) {
      using S = Scalar<decltype(x)>;
      Eigen::VectorXd pv(x.p.size());
      for (Eigen::Index i = 0; i < x.p.size(); ++i) pv[i] = Value(x.p[i]);
      const MatX<double> m = mass(pv);
      S sum = 0.0;
      for (size_t a = 0; a < c.size(); ++a)
        for (size_t b = 0; b < c.size(); ++b)
          sum += m(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) *
                 x.v[c[a]] * x.v[c[b]];
      return S(0.5 * sum);
    };
    AddKineticTerm(touches.coords, internal::MakeScalarFn3(t), mass);
    return *this;
  }
  /// One term V_k(q, t, p) of a potential energy V = sum_k V_k depending
  /// only on the coordinates `touches`. Replaces PotentialEnergy.
  template <class F>
  ModelBuilder& PotentialEnergyTerm(Touches touches, F f) {
    AddPotentialTerm(std::move(touches.coords),
                     internal::MakeScalarFn3(std::move(f)));
    return *this;
  }

  /// A named quadrature: the time integral of g(t, q, v, p), integrated by
  /// the solver with error control and reported in the summary.
  template <class F>
  ModelBuilder& Quadrature(const std::string& name, F f) {
    AddQuadrature(name, internal::MakeScalarFn(std::move(f)));
    return *this;
  }
  /// A named event: where g(t, q, v, p) crosses zero in
  /// `options.direction` (SUNDIALS's root finder) the run stops, or with
  /// options.stop = false records it and goes on (events.hpp). Every
  /// occurrence is reported, with dt_e/dp under forward sensitivities.
  template <class F>
  ModelBuilder& Event(const std::string& name, F f, EventOptions options = {}) {
    AddEvent(name, internal::MakeScalarFn(std::move(f)), options);
    return *this;
  }
  /// The reset map of the non-stopping event `event`: at each occurrence
  /// the state jumps to (q+, v+) = Delta(t, q-, v-, p), one vector of
  /// nq + nv rows (e.g. v+ = -e v- for a bouncing ball). The run restarts
  /// there, projected onto the constraints; the sensitivities jump with
  /// the saltation matrix (docs/sensitivities.md, "Resets").
  template <class F>
  ModelBuilder& Reset(const std::string& event, F f) {
    AddReset(event, internal::MakeVectorFn1(std::move(f)));
    return *this;
  }

  /// A named functional (--functional NAME, or NAME@EVENT at an event):
  ///   G = int_t0^T g(t, q, v, p) dt + phi(T, q(T), v(T), p),
  /// T the end of the run, or the time of the event NAME@EVENT names.
  /// Every run reports its value; adjoint and forward sensitivities give
  /// its gradient. The running integral is integrated as the quadrature
  /// "functional:NAME" (error controlled, in the CSV).
  /// RunningFunctional gives g only, TerminalFunctional phi only.
  template <class G, class P>
  ModelBuilder& Functional(const std::string& name, G g, P phi) {
    AddFunctional(name, internal::MakeScalarFn(std::move(g)),
                  internal::MakeScalarFn(std::move(phi)));
    return *this;
  }
  template <class G>
  ModelBuilder& RunningFunctional(const std::string& name, G g) {
    AddFunctional(name, internal::MakeScalarFn(std::move(g)), {});
    return *this;
  }
  template <class P>
  ModelBuilder& TerminalFunctional(const std::string& name, P phi) {
    AddFunctional(name, {}, internal::MakeScalarFn(std::move(phi)));
    return *this;
  }
  /// Marks the already declared holonomic or moving constraint `constraint`
  /// unilateral (a gap Phi >= 0 that can push, lambda >= 0, not pull):
  /// its multiplier sign is checked (docs/diagnostics.md). Same as the
  /// `unilateral` argument of Holonomic/Moving; resolved by Build(). With a
  /// `law`, each row is a contact that opens, closes, strikes (contact.hpp).
  ModelBuilder& Unilateral(const std::string& constraint,
                           std::optional<ContactLaw> law = std::nullopt);
  /// Declares the friction cone |lambda_t| <= mu lambda_n between the
  /// multiplier of the one-row constraint `normal` and those of the
  /// constraint `tangential`; violations are reported like unilateral
  /// ones (docs/diagnostics.md). Names are resolved by Build().
  ModelBuilder& FrictionCone(const std::string& name,
                             const std::string& normal,
                             const std::string& tangential,
                             double mu);

  /// Evaluates M and the inertial forces with `fn` instead of by automatic
  /// differentiation of the energies (the multibody description's
  /// recursive form, multibody.hpp). Energy terms already declared are
  /// the ones `fn` accounts for; declaring more afterwards is an error of
  /// Build(). The sparse KKT path and the compiled evaluator keep the
  /// energy form (such a model is not compiled).
  ModelBuilder& InertialDynamics(internal::InertialFn fn);

  /// Validates and freezes the model.
  /// @throws std::invalid_argument naming what is missing or inconsistent.
  Model Build() &&;

 private:
  void SetKinetic(internal::ScalarFn fn);
  void SetPotential(internal::ScalarFn fn);
  void SetLagrangian(internal::ScalarFn fn);
  void AddInput(const std::string& name,
                internal::VectorFn column,
                internal::ScalarFn value);
  void SetDamping(internal::MatrixFn fn);
  void SetOtherLoads(internal::VectorFn fn);
  void AddConstraint(const std::string& name,
                     ConstraintKind kind,
                     int rows,
                     bool unilateral,
                     internal::VectorFn fn,
                     std::vector<int> coords = {});
  void AddKineticTerm(
      std::vector<int> coords,
      internal::ScalarFn fn,
      std::function<MatX<double>(const Eigen::VectorXd&)> constant_mass = {});
  void AddPotentialTerm(std::vector<int> coords, internal::ScalarFn fn);
  void AddQuadrature(const std::string& name, internal::ScalarFn fn);
  void AddEvent(const std::string& name,
                internal::ScalarFn fn,
                EventOptions options);
  void AddReset(const std::string& event, internal::VectorFn fn);
  void AddFunctional(const std::string& name,
                     internal::ScalarFn running,
                     internal::ScalarFn terminal);

  std::unique_ptr<internal::ModelData> data_;
};

namespace internal {

struct ModelData {
  std::string name;
  std::vector<std::string> coordinates;  // nq
  std::vector<std::string> velocities;   // nv
  std::vector<QuaternionBlock> quaternions;
  /// Per coordinate: the index of its velocity for a scalar coordinate,
  /// -1 inside a quaternion block (nq).
  std::vector<int> velocity_of;
  std::vector<std::string> parameter_names;
  Eigen::VectorXd parameter_defaults;
  std::vector<ParamRange> parameter_ranges;
  /// ParameterTimeSupport per parameter (empty, or one per parameter:
  /// (-inf, inf) when not declared).
  std::vector<std::pair<double, double>> parameter_time_support;
  ScalarFn kinetic;     // T (may be empty when lagrangian is set)
  ScalarFn potential;   // V (may be empty)
  ScalarFn lagrangian;  // L (may be empty when kinetic is set)
  bool energy_is_lagrangian = false;
  std::vector<InputChannel> inputs;
  MatrixFn damping;
  VectorFn other_loads;
  std::vector<ConstraintDecl> constraints;
  std::vector<int> constraint_rows;  // first row of each constraint
  // Sums of terms (KineticEnergyTerm, PotentialEnergyTerm); when given,
  // Build() also sets `kinetic`/`potential` to their sums for the dense path.
  std::vector<EnergyTerm> kinetic_terms;
  std::vector<EnergyTerm> potential_terms;
  std::vector<std::pair<std::string, ScalarFn>> quadratures;
  std::vector<EventDecl> events;
  /// ModelBuilder::Reset's maps by event name, until Build() places them.
  std::vector<std::pair<std::string, VectorFn>> resets;
  /// Functionals: name, running integrand g, terminal term phi (either may
  /// be empty), and the index of the quadrature "functional:<name>" that
  /// integrates g (-1 without a running term; set by Build()).
  struct FunctionalDecl {
    std::string name;
    ScalarFn running, terminal;
    int quadrature = -1;
  };
  std::vector<FunctionalDecl> functionals;
  // From Unilateral(), for Build.
  std::vector<std::pair<std::string, std::optional<ContactLaw>>> unilaterals;
  std::vector<FrictionConeDecl> friction_cones;
  InertialFn inertial_dynamics;  // set: M and inertial by this function
  int nc = 0;
  CompiledCache compiled;
};

}  // namespace internal

}  // namespace daedalus
