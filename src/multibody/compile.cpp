// Multibody::AddTo: the frozen tree becomes the model's functions. Each
// function is a generic lambda over the tree, instantiated here (once, in
// the library) for every scalar type the library evaluates with, so M, h,
// J, the bias and all tangents come from the existing AD and recording
// machinery exactly as for a hand-written model.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "daedalus/multibody.hpp"
#include "daedalus/multibody_dynamics.hpp"
#include "model/invoke.hpp"
#include "multibody/contact_geometry.hpp"

namespace daedalus::mb {

namespace {

using internal::MbTree;

std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> u;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(u));
  return u;
}

// The coordinates (q indices) a frame's pose depends on.
const std::vector<int>& CoordsOfFrame(const MbTree& t, int frame) {
  return t.bodies[t.frames[frame].body].coords;
}
// The velocities (v indices) that move a frame.
const std::vector<int>& VelsOfFrame(const MbTree& t, int frame) {
  return t.bodies[t.frames[frame].body].vels;
}

template <class S>
S Dot3(const Vec3<S>& a, const Vec3<S>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// Velocity of frame f's origin for the unit velocity e_k (column k of its
// point Jacobian).
template <class S>
Vec3<S> PointColumn(
    const MbTree& t, int f, int k, const VecX<S>& q, const VecX<S>& p) {
  FrameVelocity<S> fv;
  internal::Walk<S>(t, f, q, internal::UnitVel<S>{k}, true, p, nullptr, &fv);
  return fv.v;
}

// The gradient dl/dq N(q) (nv: the row that maps v to l') of the distance
// l = |p_WB - p_WA| between the origins of frames a and b.
template <class S>
VecX<S> LengthGradient(
    const MbTree& t, int a, int b, const VecX<S>& q, const VecX<S>& p) {
  using std::sqrt;
  const Vec3<S> r = internal::FramePosition<S>(t, b, q, p) -
                    internal::FramePosition<S>(t, a, q, p);
  const S l = sqrt(Dot3<S>(r, r));
  VecX<S> g = VecX<S>::Zero(t.nv);
  const std::vector<int>& ca = VelsOfFrame(t, a);
  const std::vector<int>& cb = VelsOfFrame(t, b);
  for (int k : Union(ca, cb)) {
    Vec3<S> d = Vec3<S>::Zero();
    if (std::binary_search(cb.begin(), cb.end(), k))
      d += PointColumn<S>(t, b, k, q, p);
    if (std::binary_search(ca.begin(), ca.end(), k))
      d -= PointColumn<S>(t, a, k, q, p);
    g[k] = Dot3<S>(r, d) / l;
  }
  return g;
}

// The scratch of the recursive algorithms on double, kept per thread for
// the last tree (`key`, one per AddTo) and parameter vector evaluated
// there, so that a run reuses it call after call.
TreeData<double>& CachedData(const TreeDynamics& dyn,
                             const std::shared_ptr<const char>& key,
                             const Eigen::VectorXd& p) {
  thread_local std::weak_ptr<const char> owner;
  thread_local Eigen::VectorXd last_p;
  thread_local TreeData<double> data;
  if (owner.lock() != key || last_p.size() != p.size() || last_p != p) {
    data = dyn.MakeData<double>();
    dyn.SetParameters<double>(p, &data);
    owner = key;
    last_p = p;
  }
  return data;
}

// `recursive` (a TreeDynamics, for DynamicsForm::kRecursive): gravity's
// potential as one term over all coordinates, evaluated on double by
// TreeDynamics::GravityPotential in O(n) instead of one O(depth) term per
// body (O(n^2) on a chain); other scalars sum the per-body terms.
void DeclareEnergies(const std::shared_ptr<const MbTree>& tree,
                     ModelBuilder* builder,
                     const TreeDynamics* recursive = nullptr,
                     const std::shared_ptr<const char>& key = nullptr) {
  const MbTree& t = *tree;
  std::vector<int> gravity_bodies;
  for (size_t bi = 1; bi < t.bodies.size(); ++bi) {
    const internal::MbBody& body = t.bodies[bi];
    const BodySpec& sp = body.spec;
    const int b = static_cast<int>(bi);
    if (body.coords.empty()) continue;  // welded to the ground
    const bool inert = sp.mass.IsZero() && sp.ixx.IsZero() && sp.iyy.IsZero() &&
                       sp.izz.IsZero() && sp.ixy.IsZero() && sp.ixz.IsZero() &&
                       sp.iyz.IsZero();
    if (!inert) {
      builder->KineticEnergyTerm(
          Touches{body.coords}, [tree, b](const auto& x) {
            using S = Scalar<decltype(x)>;
            return internal::BodyKinetic<S>(*tree, b, x.q, x.v, x.p);
          });
    }
    if (!t.gravity.IsZero() && !sp.mass.IsZero() && recursive != nullptr) {
      gravity_bodies.push_back(b);
    } else if (!t.gravity.IsZero() && !sp.mass.IsZero()) {
      builder->PotentialEnergyTerm(
          Touches{body.coords}, [tree, b](const auto& x) {
            using S = Scalar<decltype(x)>;
            return internal::BodyGravity<S>(*tree, b, x.q, x.p);
          });
    }
  }
  if (!gravity_bodies.empty()) {
    std::vector<int> all(static_cast<size_t>(t.nq));
    for (int i = 0; i < t.nq; ++i) all[static_cast<size_t>(i)] = i;
    const TreeDynamics dyn = *recursive;
    builder->PotentialEnergyTerm(
        Touches{all}, [tree, dyn, key, gravity_bodies](const auto& x) {
          using S = Scalar<decltype(x)>;
          if constexpr (std::is_same_v<S, double>) {
            return dyn.GravityPotential(x.q, &CachedData(dyn, key, x.p));
          } else {
            S v = S(0.0);
            for (int b : gravity_bodies)
              v = v + internal::BodyGravity<S>(*tree, b, x.q, x.p);
            return v;
          }
        });
  }
  // Armature: a rotor inertia on one velocity, T = a v_k^2 / 2, touching
  // the joint's coordinates (a ball's quaternion for its velocities).
  for (const internal::MbArmature& a : t.armatures) {
    const internal::MbJoint& j = t.joints[a.joint];
    std::vector<int> coords;
    for (int i = 0; i < j.nq; ++i) coords.push_back(j.first + i);
    builder->KineticEnergyTerm(Touches{coords}, [a](const auto& x) {
      using S = Scalar<decltype(x)>;
      const S w = x.v[a.vel];
      return S(0.5 * a.value.Eval<S>(x.p) * w * w);
    });
  }
  for (size_t i = 0; i < t.springs.size(); ++i) {
    const internal::MbSpring s = t.springs[i];
    builder->PotentialEnergyTerm(Touches{{s.coord}}, [s](const auto& x) {
      using S = Scalar<decltype(x)>;
      const S d = x.q[s.coord] - s.rest.Eval<S>(x.p);
      return S(0.5 * s.k.Eval<S>(x.p) * d * d);
    });
  }
  for (size_t i = 0; i < t.spring_dampers.size(); ++i) {
    const internal::MbSpringDamper& sd = t.spring_dampers[i];
    if (sd.k.IsZero()) continue;
    const int e = static_cast<int>(i);
    builder->PotentialEnergyTerm(
        Touches{Union(CoordsOfFrame(t, sd.a), CoordsOfFrame(t, sd.b))},
        [tree, e](const auto& x) {
          using S = Scalar<decltype(x)>;
          using std::sqrt;
          const internal::MbSpringDamper& s = tree->spring_dampers[e];
          const Vec3<S> r = internal::FramePosition<S>(*tree, s.b, x.q, x.p) -
                            internal::FramePosition<S>(*tree, s.a, x.q, x.p);
          const S stretch = sqrt(Dot3<S>(r, r)) - s.rest.Eval<S>(x.p);
          return S(0.5 * s.k.Eval<S>(x.p) * stretch * stretch);
        });
  }
}

void DeclareForces(const std::shared_ptr<const MbTree>& tree,
                   ModelBuilder* builder) {
  const MbTree& t = *tree;
  bool damped = !t.dampers.empty();
  for (const auto& sd : t.spring_dampers) damped |= !sd.c.IsZero();
  if (damped) {
    builder->Damping([tree](const auto& x) {
      using S = Scalar<decltype(x)>;
      MatX<S> d = MatX<S>::Zero(tree->nv, tree->nv);
      for (const auto& dm : tree->dampers)
        d(dm.coord, dm.coord) += dm.c.Eval<S>(x.p);
      for (const auto& sd : tree->spring_dampers) {
        if (sd.c.IsZero()) continue;
        const VecX<S> g = LengthGradient<S>(*tree, sd.a, sd.b, x.q, x.p);
        const S c = sd.c.Eval<S>(x.p);
        for (int i = 0; i < tree->nv; ++i)
          for (int j = 0; j < tree->nv; ++j) d(i, j) += c * g[i] * g[j];
      }
      return d;
    });
  }
  if (!t.forces.empty()) {
    builder->OtherLoads([tree](const auto& x) {
      using S = Scalar<decltype(x)>;
      VecX<S> qr = VecX<S>::Zero(tree->nv);
      for (const auto& f : tree->forces) {
        // Virtual power: Q_k = f . v_k (force) or t . w_k (torque), with
        // (w_k, v_k) the frame's velocity for the unit velocity e_k.
        const Vec3<S> fw = internal::EvalVec<S>(f.force, x.p);
        for (int k : VelsOfFrame(*tree, f.frame)) {
          FrameVelocity<S> fv;
          internal::Walk<S>(*tree, f.frame, x.q, internal::UnitVel<S>{k}, true,
                            x.p, nullptr, &fv);
          qr[k] += Dot3<S>(fw, f.torque ? fv.w : fv.v);
        }
      }
      return qr;
    });
  }
  for (const auto& a : t.actuators) {
    const int coord = a.coord, n = t.nv;
    const daedalus::internal::ScalarFn fn = a.value;
    builder->Input(
        a.name,
        [coord, n](const auto& x) {
          using S = Scalar<decltype(x)>;
          VecX<S> col = VecX<S>::Zero(n);
          col[coord] = S(1.0);
          return col;
        },
        [fn](const auto& x) { return daedalus::internal::Invoke(fn, x); });
  }
}

void DeclareConstraints(const std::shared_ptr<const MbTree>& tree,
                        ModelBuilder* builder) {
  const MbTree& t = *tree;
  for (size_t i = 0; i < t.closures.size(); ++i) {
    const internal::MbClosure& c = t.closures[i];
    const int e = static_cast<int>(i);
    const Touches touches{Union(CoordsOfFrame(t, c.a), CoordsOfFrame(t, c.b))};
    builder->Holonomic(
        c.name, touches,
        [tree, e](const auto& x) {
          using S = Scalar<decltype(x)>;
          using std::sqrt;
          const internal::MbClosure& cl = tree->closures[e];
          VecX<S> phi(cl.rows);
          switch (cl.type) {
            case internal::ClosureType::kCoincident: {
              const Vec3<S> r =
                  internal::FramePosition<S>(*tree, cl.b, x.q, x.p) -
                  internal::FramePosition<S>(*tree, cl.a, x.q, x.p);
              for (int k = 0; k < cl.rows; ++k) phi[k] = r[k];
              break;
            }
            case internal::ClosureType::kDistance: {
              const Vec3<S> r =
                  internal::FramePosition<S>(*tree, cl.b, x.q, x.p) -
                  internal::FramePosition<S>(*tree, cl.a, x.q, x.p);
              phi[0] = sqrt(Dot3<S>(r, r)) - cl.value.Eval<S>(x.p);
              break;
            }
            case internal::ClosureType::kPointOnLine:
            case internal::ClosureType::kPointOnPlane: {
              FramePose<S> line;
              internal::Walk<S>(*tree, cl.b, x.q, internal::NoVel<S>{}, false,
                                x.p, &line, nullptr);
              const Vec3<S> r =
                  internal::FramePosition<S>(*tree, cl.a, x.q, x.p) - line.p;
              for (int k = 0; k < cl.rows; ++k)
                phi[k] =
                    Dot3<S>(internal::TimesConst<S>(line.R, cl.normals[k]), r);
              break;
            }
            case internal::ClosureType::kRelativeAngle: {
              const internal::NoVel<S> none;
              phi[0] =
                  internal::WalkPlanar<S>(*tree, cl.b, x.q, none, false, x.p)
                      .th -
                  internal::WalkPlanar<S>(*tree, cl.a, x.q, none, false, x.p)
                      .th -
                  cl.value.Eval<S>(x.p);
              break;
            }
            case internal::ClosureType::kConstantAngle: {
              FramePose<S> pa, pb;
              internal::Walk<S>(*tree, cl.a, x.q, internal::NoVel<S>{}, false,
                                x.p, &pa, nullptr);
              internal::Walk<S>(*tree, cl.b, x.q, internal::NoVel<S>{}, false,
                                x.p, &pb, nullptr);
              phi[0] = Dot3<S>(internal::TimesConst<S>(pa.R, cl.normals[0]),
                               internal::TimesConst<S>(pb.R, cl.normals[1])) -
                       cl.value.Eval<S>(x.p);
              break;
            }
          }
          return phi;
        },
        c.rows);
  }
  for (const auto& pm : t.prescribed) {
    const int coord = pm.coord;
    const daedalus::internal::ScalarFn fn = pm.motion;
    builder->Moving(pm.name, Touches{{coord}}, [fn, coord](const auto& x) {
      using S = Scalar<decltype(x)>;
      return S(x.q[coord] - daedalus::internal::Invoke(fn, x));
    });
  }
}

// Joint limits (JointLimits, docs/contact.md "Joint limits"): per limited
// scalar coordinate q_k and finite bound, one unilateral gap with the
// joint's restitution, lower: q_k - lower >= 0, upper: upper - q_k >= 0,
// named limit:<joint>:lower|upper (a joint with several limited
// coordinates: limit:<coordinate>:lower|upper). Event-driven contacts by
// default: an open limit costs its root function; the ContactLaw names
// the joint so that --no-joint-limits (WithoutJointLimits) can drop them.
void DeclareJointLimits(const MbTree& t, ModelBuilder* builder) {
  for (const internal::MbLimits& l : t.limits) {
    const internal::MbJoint& j = t.joints[static_cast<size_t>(l.joint)];
    const size_t n = l.limits.lower.size();
    for (size_t k = 0; k < n; ++k) {
      const int coord = j.first + static_cast<int>(k);
      const std::string who =
          n == 1 ? j.name : t.coordinate_names[static_cast<size_t>(coord)];
      const ContactLaw law{.restitution = l.limits.restitution,
                           .restitution_parameter = {},
                           .joint = j.name};
      const double lower = l.limits.lower[k], upper = l.limits.upper[k];
      if (std::isfinite(lower)) {
        const std::string name = "limit:" + who + ":lower";
        builder->Holonomic(name, Touches{{coord}},
                           [coord, lower](const auto& x) {
                             using S = Scalar<decltype(x)>;
                             return S(x.q[coord] - lower);
                           });
        builder->Unilateral(name, law);
      }
      if (std::isfinite(upper)) {
        const std::string name = "limit:" + who + ":upper";
        builder->Holonomic(name, Touches{{coord}},
                           [coord, upper](const auto& x) {
                             using S = Scalar<decltype(x)>;
                             return S(upper - x.q[coord]);
                           });
        builder->Unilateral(name, law);
      }
    }
  }
}

// The springs' and spring-dampers' stiffness forces (the gradients of
// their potentials) added to *out (nv).
template <class S>
void SpringForces(const MbTree& t, const Point<S>& x, VecX<S>* out) {
  VecX<S>* inertial = out;
  for (const auto& s : t.springs) {
    // The spring's velocity index: its position index less one for each
    // quaternion before it (a spring sits on a scalar coordinate).
    int iv = s.coord;
    for (const auto& quaternion : t.quaternions)
      if (quaternion.first < s.coord) --iv;
    (*inertial)[iv] += s.k.Eval<S>(x.p) * (x.q[s.coord] - s.rest.Eval<S>(x.p));
  }
  for (const auto& sd : t.spring_dampers) {
    if (sd.k.IsZero()) continue;
    using std::sqrt;
    const Vec3<S> r = internal::FramePosition<S>(t, sd.b, x.q, x.p) -
                      internal::FramePosition<S>(t, sd.a, x.q, x.p);
    const S stretch = sqrt(Dot3<S>(r, r)) - sd.rest.Eval<S>(x.p);
    const VecX<S> g = LengthGradient<S>(t, sd.a, sd.b, x.q, x.p);
    *inertial += (sd.k.Eval<S>(x.p) * stretch) * g;
  }
}

// vdot = M^-1 (force - inertial) by the ABA: the springs' forces (part of
// the inertial forces above) moved to the right-hand side.
void RecursiveForward(const TreeDynamics& dyn,
                      const MbTree& t,
                      const std::shared_ptr<const char>& key,
                      const Point<double>& x,
                      const VecX<double>& force,
                      VecX<double>* vdot,
                      double* kinetic) {
  TreeData<double>& data = CachedData(dyn, key, x.p);
  data.want_kinetic = kinetic != nullptr;
  if (t.springs.empty() && t.spring_dampers.empty()) {
    *vdot = dyn.ForwardDynamics<double>(x.q, x.v, force, &data);
  } else {
    VecX<double> springs = VecX<double>::Zero(t.nv);
    SpringForces<double>(t, x, &springs);
    *vdot = dyn.ForwardDynamics<double>(x.q, x.v, force - springs, &data);
  }
  if (kinetic) *kinetic = data.kinetic;
}

// M and the inertial forces by the recursive algorithms: CRBA for M, RNEA
// at vdot = 0 for the Coriolis, centrifugal and gravity forces, plus the
// gradients of the springs' potentials (which the energy form gets from
// the potential energy terms).
template <class S>
void RecursiveInertial(const TreeDynamics& dyn,
                       const MbTree& t,
                       const Point<S>& x,
                       MatX<S>* m,
                       VecX<S>* inertial) {
  TreeData<S> data = dyn.MakeData<S>();
  dyn.SetParameters<S>(x.p, &data);
  *m = dyn.MassMatrix<S>(x.q, &data);
  for (const internal::MbArmature& a : t.armatures)
    (*m)(a.vel, a.vel) += a.value.Eval<S>(x.p);
  const VecX<S> zero = VecX<S>::Zero(t.nv);
  *inertial = dyn.InverseDynamics<S>(x.q, x.v, zero, &data);
  SpringForces<S>(t, x, inertial);
}

}  // namespace

const char* ToString(DynamicsForm form) {
  switch (form) {
    case DynamicsForm::kEnergy:
      return "energy";
    case DynamicsForm::kRecursive:
      return "recursive";
    case DynamicsForm::kAuto:
      return "auto";
  }
  return "energy";
}

DynamicsForm DynamicsFormFromString(const std::string& name) {
  if (name == "energy") return DynamicsForm::kEnergy;
  if (name == "recursive") return DynamicsForm::kRecursive;
  if (name == "auto") return DynamicsForm::kAuto;
  throw std::invalid_argument("unknown dynamics form '" + name +
                              "'; valid: auto, energy, recursive");
}

Kinematics Multibody::AddTo(ModelBuilder* builder, DynamicsForm form) && {
  if (!tree_) throw std::invalid_argument("multibody: AddTo called twice");
  for (size_t b = 1; b < tree_->bodies.size(); ++b)
    if (tree_->bodies[b].joint < 0)
      throw std::invalid_argument(
          "multibody: body '" + tree_->bodies[b].name +
          "' has no joint; connect it to the ground or another body "
          "(Joint::Weld() fixes it)");
  const std::shared_ptr<const MbTree> tree = std::move(tree_);
  if (form == DynamicsForm::kAuto)
    form = !tree->quaternions.empty() || tree->nv >= kAutoRecursiveVelocities
               ? DynamicsForm::kRecursive
               : DynamicsForm::kEnergy;
  // Scalar coordinates and quaternions in declaration order.
  size_t next = 0;
  for (int i = 0; i < tree->nq;) {
    if (next < tree->quaternions.size() && tree->quaternions[next].first == i) {
      builder->Quaternion(tree->quaternions[next].second);
      ++next;
      i += 4;
    } else {
      builder->Coordinates({tree->coordinate_names[i]});
      ++i;
    }
  }
  Kinematics kin(tree);
  if (form != DynamicsForm::kRecursive) DeclareEnergies(tree, builder);
  if (form == DynamicsForm::kRecursive) {
    const TreeDynamics dyn(kin);
    // One scratch key for the forward dynamics and the gravity potential.
    const auto key = std::make_shared<const char>('k');
    DeclareEnergies(tree, builder, &dyn, key);
    daedalus::internal::InertialFn fn;
    fn.what = "recursive multibody dynamics (CRBA, RNEA, ABA)";
    fn.f0 = [dyn, tree](const Point<double>& x, MatX<double>& m,
                        VecX<double>& in) {
      RecursiveInertial<double>(dyn, *tree, x, &m, &in);
    };
    fn.f1 = [dyn, tree](const Point<D1>& x, MatX<D1>& m, VecX<D1>& in) {
      RecursiveInertial<D1>(dyn, *tree, x, &m, &in);
    };
    // The ABA is that of the rigid bodies: with armature (a diagonal term
    // of M outside the tree's inertias) the ODE forms take the KKT route
    // with CRBA's M instead.
    if (tree->armatures.empty()) {
      fn.forward = [dyn, tree, key](const Point<double>& x,
                                    const VecX<double>& force,
                                    VecX<double>& vdot, double* kinetic) {
        RecursiveForward(dyn, *tree, key, x, force, &vdot, kinetic);
      };
    }
    builder->InertialDynamics(std::move(fn));
  }
  DeclareForces(tree, builder);
  DeclareConstraints(tree, builder);
  DeclareJointLimits(*tree, builder);
  internal::DeclareGeometryContacts(tree, builder);
  return kin;
}

}  // namespace daedalus::mb
