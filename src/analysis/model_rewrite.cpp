// Model rewrites for the analyses: a model with input channels removed, and
// a model with first-order actuator dynamics on one channel.
//
// A rewrite re-declares every function of the original model through the
// public ModelBuilder, as generic lambdas that forward to the stored
// type-erased functions through internal::Invoke (model.hpp; matrix
// functions: model/invoke.hpp), which selects the stored evaluation for
// each scalar type.
#include <sstream>
#include <stdexcept>

#include "daedalus/analysis.hpp"
#include "model/invoke.hpp"

namespace daedalus {

namespace {

using internal::MatrixFn;
using internal::ScalarFn;
using internal::VectorFn;

// The sizes of the original model's q and v inside a rewritten one whose
// coordinates are appended after them (nq < 0: the same coordinates).
struct Dims {
  int nq = -1, nv = -1;
  bool same() const { return nq < 0; }
};
constexpr Dims kSame{};

// The first nq coordinates and nv velocities of x as a Point of the
// original model (parameters and time unchanged: rewrites only append
// parameters). Appended coordinates are scalar ones, so the original's
// quaternion blocks keep their places in q and v.
template <class S>
struct Head {
  VecX<S> q, v;
  Head(const Point<S>& x, Dims d) : q(x.q.head(d.nq)), v(x.v.head(d.nv)) {}
  Point<S> At(const Point<S>& x) const { return Point<S>{q, v, x.t, x.p}; }
};

// Forwarders for an unchanged coordinate set or for the leading
// coordinates of a larger one, with `extra` zero rows appended to vectors.
auto ForwardScalar(const ScalarFn& fn, Dims n) {
  return [fn, n](const auto& x) {
    using S = Scalar<decltype(x)>;
    if (n.same()) return internal::Invoke(fn, x);
    const Head<S> h(x, n);
    return internal::Invoke(fn, h.At(x));
  };
}

auto ForwardVector(const VectorFn& fn, Dims n, int extra) {
  return [fn, n, extra](const auto& x) {
    using S = Scalar<decltype(x)>;
    VecX<S> out;
    if (n.same()) {
      internal::Invoke(fn, x, out);
    } else {
      const Head<S> h(x, n);
      internal::Invoke(fn, h.At(x), out);
    }
    if (extra > 0) {
      const Eigen::Index m = out.size();
      out.conservativeResize(m + extra);
      for (int i = 0; i < extra; ++i) out[m + i] = S(0.0);
    }
    return out;
  };
}

void CopyParameters(const Model& m, ModelBuilder* b) {
  for (int i = 0; i < m.num_parameters(); ++i)
    b->Parameter(m.parameter_names()[i], m.default_parameters()[i]);
}

void CopyConstraints(const Model& m, Dims n, ModelBuilder* b) {
  for (const auto& c : m.constraints()) {
    auto f = ForwardVector(c.fn, n, 0);
    switch (c.kind) {
      case ConstraintKind::kHolonomic:
        b->Holonomic(c.name, f, c.rows, c.unilateral);
        break;
      case ConstraintKind::kMoving:
        b->Moving(c.name, f, c.rows, c.unilateral);
        break;
      case ConstraintKind::kNonholonomic:
        b->Nonholonomic(c.name, f, c.rows);
        break;
    }
    // A contact law (docs/contact.md) goes with its constraint.
    if (c.law) b->Unilateral(c.name, c.law);
  }
}

void CopyQuadraturesAndEvents(const Model& m, Dims n, ModelBuilder* b) {
  for (const auto& qd : m.data().quadratures)
    b->Quadrature(qd.first, ForwardScalar(qd.second, n));
  for (const auto& ev : m.data().events) {
    b->Event(ev.name, ForwardScalar(ev.fn, n), ev.options);
    if (!ev.reset) continue;
    // A reset map returns the original model's (q, v); a rewrite that
    // appends coordinates would need their post-event values too.
    if (!n.same())
      throw std::invalid_argument(
          "model '" + m.name() + "': event '" + ev.name +
          "' has a reset map, which this rewrite (appended coordinates) "
          "cannot extend to the new coordinates");
    b->Reset(ev.name, ForwardVector(ev.reset, n, 0));
  }
}

std::vector<bool> RemovalMask(const Model& model,
                              const std::vector<std::string>& channels) {
  std::vector<bool> removed(model.num_inputs(), channels.empty());
  for (const auto& c : channels) removed[InputChannelIndex(model, c)] = true;
  return removed;
}

}  // namespace

int InputChannelIndex(const Model& model, const std::string& name) {
  const auto& in = model.inputs();
  for (size_t k = 0; k < in.size(); ++k)
    if (in[k].name == name) return static_cast<int>(k);
  std::ostringstream os;
  os << "model '" << model.name() << "': unknown input channel '" << name
     << "'; valid channels are:";
  if (in.empty()) os << " (none: the model declares no inputs)";
  for (const auto& c : in) os << " " << c.name;
  throw std::invalid_argument(os.str());
}

namespace {

// The coordinates of `model`, scalar ones and quaternion blocks, declared
// on `b` in the same order (the same q and v layout).
void CopyCoordinates(const Model& model, ModelBuilder* b) {
  const auto& d = model.data();
  size_t next_block = 0;
  for (int j = 0; j < model.nq(); ++j) {
    if (d.velocity_of[j] >= 0) {
      b->Coordinates({d.coordinates[j]});
    } else if (next_block < d.quaternions.size() &&
               d.quaternions[next_block].q == j) {
      b->Quaternion(d.quaternions[next_block++].name);
    }
  }
}

}  // namespace

Model RemoveInputs(const Model& model,
                   const std::vector<std::string>& channels) {
  const std::vector<bool> removed = RemovalMask(model, channels);
  const auto& d = model.data();
  ModelBuilder b(model.name());
  CopyCoordinates(model, &b);
  CopyParameters(model, &b);
  if (d.energy_is_lagrangian) {
    b.Lagrangian(ForwardScalar(d.lagrangian, kSame));
  } else {
    b.KineticEnergy(ForwardScalar(d.kinetic, kSame));
    if (d.potential) b.PotentialEnergy(ForwardScalar(d.potential, kSame));
  }
  for (int k = 0; k < model.num_inputs(); ++k) {
    const auto& in = d.inputs[k];
    if (removed[k]) {
      b.Input(in.name, ForwardVector(in.column, kSame, 0),
              [](const auto& x) { return Scalar<decltype(x)>(0.0); });
    } else {
      b.Input(in.name, ForwardVector(in.column, kSame, 0),
              ForwardScalar(in.value, kSame));
    }
  }
  if (d.damping) {
    const MatrixFn fn = d.damping;
    b.Damping([fn](const auto& x) {
      using S = Scalar<decltype(x)>;
      MatX<S> out;
      internal::Invoke(fn, x, out);
      return out;
    });
  }
  if (d.other_loads) b.OtherLoads(ForwardVector(d.other_loads, kSame, 0));
  CopyConstraints(model, kSame, &b);
  CopyQuadraturesAndEvents(model, kSame, &b);
  return std::move(b).Build();
}

Model AddActuator(const Model& model,
                  const std::string& channel,
                  const ActuatorOptions& options,
                  ActuatorInfo* info) {
  const int kc = InputChannelIndex(model, channel);
  if (!(options.time_constant > 0.0)) {
    throw std::invalid_argument("AddActuator('" + channel +
                                "'): the activation time constant must be "
                                "positive, got " +
                                std::to_string(options.time_constant));
  }
  if (!(options.scale > 0.0)) {
    throw std::invalid_argument("AddActuator('" + channel +
                                "'): the activation scale must be positive");
  }
  const auto& d = model.data();
  // The activation is a scalar coordinate appended after the original
  // ones: index nq in q and nv in v (a model with quaternions keeps its
  // blocks where they were, CopyCoordinates).
  const Dims n{model.nq(), model.nv()};
  const int iv = n.nv;
  const double eps = options.scale;
  const std::string act = channel + "_activation";
  for (const auto& c : model.coordinate_names()) {
    if (c == act)
      throw std::invalid_argument("AddActuator: model '" + model.name() +
                                  "' already has a coordinate '" + act + "'");
  }

  ModelBuilder b(model.name());
  CopyCoordinates(model, &b);
  b.Coordinates({act});
  CopyParameters(model, &b);
  const Param ta = b.Parameter(channel + "_T_a", options.time_constant);

  // Kinetic term of the activation coordinate: eps T_a v_s^2 / 2.
  auto activation_kinetic = [iv, eps, ta](const auto& x) {
    return 0.5 * eps * x.p[ta] * x.v[iv] * x.v[iv];
  };
  if (d.energy_is_lagrangian) {
    auto l = ForwardScalar(d.lagrangian, n);
    b.Lagrangian([l, activation_kinetic](const auto& x) {
      return l(x) + activation_kinetic(x);
    });
  } else {
    auto t = ForwardScalar(d.kinetic, n);
    b.KineticEnergy([t, activation_kinetic](const auto& x) {
      return t(x) + activation_kinetic(x);
    });
    if (d.potential) b.PotentialEnergy(ForwardScalar(d.potential, n));
  }

  // Damping: the original block plus eps on the activation coordinate.
  const MatrixFn damping = d.damping;
  b.Damping([damping, n, iv, eps](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> out = MatX<S>::Zero(iv + 1, iv + 1);
    if (damping) {
      MatX<S> inner;
      const Head<S> h(x, n);
      internal::Invoke(damping, h.At(x), inner);
      out.topLeftCorner(iv, iv) = inner;
    }
    out(iv, iv) = S(eps);
    return out;
  });
  if (d.other_loads) b.OtherLoads(ForwardVector(d.other_loads, n, 1));

  for (int k = 0; k < model.num_inputs(); ++k) {
    const auto& in = d.inputs[k];
    if (k == kc) {
      // The applied input is now the activation a = v_s.
      b.Input(in.name, ForwardVector(in.column, n, 1),
              [iv](const auto& x) { return x.v[iv]; });
    } else {
      b.Input(in.name, ForwardVector(in.column, n, 1),
              ForwardScalar(in.value, n));
    }
  }
  // The command drives the activation coordinate through column eps e_s.
  b.Input(
      channel + "_command",
      [iv, eps](const auto& x) {
        using S = Scalar<decltype(x)>;
        VecX<S> c = VecX<S>::Zero(iv + 1);
        c[iv] = S(eps);
        return c;
      },
      ForwardScalar(d.inputs[kc].value, n));

  CopyConstraints(model, n, &b);
  CopyQuadraturesAndEvents(model, n, &b);
  if (info) {
    info->channel = channel;
    info->command_channel = channel + "_command";
    info->coordinate = act;
    info->coordinate_index = n.nq;
    info->velocity_index = iv;
    info->time_constant_parameter = static_cast<int>(ta.index);
  }
  return std::move(b).Build();
}

InitialState ExtendState(const InitialState& x, double activation) {
  InitialState y;
  const Eigen::Index nq = x.q.size(), nv = x.v.size();
  y.q = Eigen::VectorXd::Zero(nq + 1);
  y.v = Eigen::VectorXd::Zero(nv + 1);
  y.q.head(nq) = x.q;
  y.v.head(nv) = x.v;
  y.v[nv] = activation;
  return y;
}

}  // namespace daedalus
