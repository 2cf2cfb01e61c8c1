#include "eval/expr_graph.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace daedalus {

namespace internal {

namespace {

thread_local ExprGraph* g_active = nullptr;

std::uint64_t Bits(double x) {
  std::uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// The derivative of |x| as the dual-number path takes it (1 at x = 0).
double Sign(double x) { return x < 0.0 ? -1.0 : 1.0; }

// The value of an elementary function, as the evaluators compute it.
double Apply(Op op, double a, double b) {
  switch (op) {
    case Op::kAdd:
      return a + b;
    case Op::kSub:
      return a - b;
    case Op::kMul:
      return a * b;
    case Op::kDiv:
      return a / b;
    case Op::kNeg:
      return -a;
    case Op::kSin:
      return std::sin(a);
    case Op::kCos:
      return std::cos(a);
    case Op::kTan:
      return std::tan(a);
    case Op::kExp:
      return std::exp(a);
    case Op::kLog:
      return std::log(a);
    case Op::kSqrt:
      return std::sqrt(a);
    case Op::kPow:
      return std::pow(a, b);
    case Op::kSinh:
      return std::sinh(a);
    case Op::kCosh:
      return std::cosh(a);
    case Op::kTanh:
      return std::tanh(a);
    case Op::kAsin:
      return std::asin(a);
    case Op::kAcos:
      return std::acos(a);
    case Op::kAtan:
      return std::atan(a);
    case Op::kAtan2:
      return std::atan2(a, b);
    case Op::kAbs:
      return std::abs(a);
    case Op::kSign:
      return Sign(a);
    case Op::kIfPos:
      return a > 0.0 ? b : 0.0;
    case Op::kIfNotPos:
      return a > 0.0 ? 0.0 : b;
    case Op::kConst:
    case Op::kInput:
    case Op::kPwLinear:
    case Op::kPwSlope:
    case Op::kHat:
    case Op::kHatSlope:
      break;
  }
  throw std::logic_error("ExprGraph: Apply on a leaf or a knot operation");
}

bool Commutative(Op op) { return op == Op::kAdd || op == Op::kMul; }

}  // namespace

const char* ToString(Op op) {
  switch (op) {
    case Op::kConst:
      return "const";
    case Op::kInput:
      return "input";
    case Op::kAdd:
      return "add";
    case Op::kSub:
      return "sub";
    case Op::kMul:
      return "mul";
    case Op::kDiv:
      return "div";
    case Op::kNeg:
      return "neg";
    case Op::kSin:
      return "sin";
    case Op::kCos:
      return "cos";
    case Op::kTan:
      return "tan";
    case Op::kExp:
      return "exp";
    case Op::kLog:
      return "log";
    case Op::kSqrt:
      return "sqrt";
    case Op::kPow:
      return "pow";
    case Op::kSinh:
      return "sinh";
    case Op::kCosh:
      return "cosh";
    case Op::kTanh:
      return "tanh";
    case Op::kAsin:
      return "asin";
    case Op::kAcos:
      return "acos";
    case Op::kAtan:
      return "atan";
    case Op::kAtan2:
      return "atan2";
    case Op::kAbs:
      return "abs";
    case Op::kSign:
      return "sign";
    case Op::kIfPos:
      return "ifpos";
    case Op::kIfNotPos:
      return "ifnotpos";
    case Op::kPwLinear:
      return "pwlinear";
    case Op::kPwSlope:
      return "pwslope";
    case Op::kHat:
      return "hat";
    case Op::kHatSlope:
      return "hatslope";
  }
  return "?";
}

std::size_t ExprGraph::KeyHash::operator()(const Key& k) const {
  std::uint64_t h = static_cast<std::uint64_t>(k.op);
  h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(k.a);
  h = h * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint32_t>(k.b);
  h = h * 0x9E3779B97F4A7C15ull ^ k.bits;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

ExprGraph::ExprGraph() {
  Constant(0.0);
  Constant(1.0);
}

int ExprGraph::Make(Op op, int a, int b, double value) {
  const Key key{op, a, b, Bits(value)};
  const auto it = cse_.find(key);
  if (it != cse_.end()) return it->second;
  if (size() >= kMaxNodes) {
    throw std::length_error("expression graph exceeds " +
                            std::to_string(kMaxNodes) + " nodes");
  }
  ExprNode n;
  n.op = op;
  n.a = a;
  n.b = b;
  n.value = value;
  nodes_.push_back(n);
  const int id = size() - 1;
  cse_.emplace(key, id);
  return id;
}

int ExprGraph::Constant(double c) {
  if (c == 0.0) c = 0.0;  // one zero: -0 and +0 are the same node
  return Make(Op::kConst, -1, -1, c);
}

int ExprGraph::Input(int k) {
  if (k < 0) throw std::logic_error("ExprGraph: negative input number");
  while (static_cast<int>(input_nodes_.size()) <= k) {
    const int n = static_cast<int>(input_nodes_.size());
    input_nodes_.push_back(Make(Op::kInput, -1, -1, static_cast<double>(n)));
  }
  return input_nodes_[k];
}

int ExprGraph::Add(int a, int b) {
  if (IsConstant(a) && IsConstant(b))
    return Constant(nodes_[a].value + nodes_[b].value);
  if (IsZero(a)) return b;
  if (IsZero(b)) return a;
  if (nodes_[b].op == Op::kNeg) return Sub(a, nodes_[b].a);
  if (nodes_[a].op == Op::kNeg) return Sub(b, nodes_[a].a);
  if (a > b) std::swap(a, b);
  return Make(Op::kAdd, a, b, 0.0);
}

int ExprGraph::Sub(int a, int b) {
  if (IsConstant(a) && IsConstant(b))
    return Constant(nodes_[a].value - nodes_[b].value);
  if (IsZero(b)) return a;
  if (IsZero(a)) return Neg(b);
  if (a == b) return 0;
  if (nodes_[b].op == Op::kNeg) return Add(a, nodes_[b].a);
  return Make(Op::kSub, a, b, 0.0);
}

int ExprGraph::Mul(int a, int b) {
  if (IsConstant(a) && IsConstant(b))
    return Constant(nodes_[a].value * nodes_[b].value);
  if (IsZero(a) || IsZero(b)) return 0;
  if (IsOne(a)) return b;
  if (IsOne(b)) return a;
  if (IsConstant(a) && nodes_[a].value == -1.0) return Neg(b);
  if (IsConstant(b) && nodes_[b].value == -1.0) return Neg(a);
  if (nodes_[a].op == Op::kNeg && nodes_[b].op == Op::kNeg)
    return Mul(nodes_[a].a, nodes_[b].a);
  if (nodes_[a].op == Op::kNeg) return Neg(Mul(nodes_[a].a, b));
  if (nodes_[b].op == Op::kNeg) return Neg(Mul(a, nodes_[b].a));
  if (a > b) std::swap(a, b);
  return Make(Op::kMul, a, b, 0.0);
}

int ExprGraph::Div(int a, int b) {
  if (IsConstant(a) && IsConstant(b))
    return Constant(nodes_[a].value / nodes_[b].value);
  if (IsZero(a)) return 0;
  if (IsOne(b)) return a;
  if (IsConstant(b) && nodes_[b].value == -1.0) return Neg(a);
  if (nodes_[a].op == Op::kNeg) return Neg(Div(nodes_[a].a, b));
  return Make(Op::kDiv, a, b, 0.0);
}

int ExprGraph::Neg(int a) {
  if (IsConstant(a)) return Constant(-nodes_[a].value);
  if (nodes_[a].op == Op::kNeg) return nodes_[a].a;
  if (nodes_[a].op == Op::kSub) return Sub(nodes_[a].b, nodes_[a].a);
  return Make(Op::kNeg, a, -1, 0.0);
}

int ExprGraph::Unary(Op op, int a) {
  if (IsConstant(a)) return Constant(Apply(op, nodes_[a].value, 0.0));
  switch (op) {
    case Op::kNeg:
      return Neg(a);
    case Op::kAbs:
      if (nodes_[a].op == Op::kAbs) return a;
      if (nodes_[a].op == Op::kNeg) return Unary(Op::kAbs, nodes_[a].a);
      break;
    case Op::kSign:
      if (nodes_[a].op == Op::kSign) return a;
      break;
    default:
      break;
  }
  return Make(op, a, -1, 0.0);
}

int ExprGraph::Binary(Op op, int a, int b) {
  switch (op) {
    case Op::kAdd:
      return Add(a, b);
    case Op::kSub:
      return Sub(a, b);
    case Op::kMul:
      return Mul(a, b);
    case Op::kDiv:
      return Div(a, b);
    case Op::kPow:
      if (IsConstant(a) && IsConstant(b))
        return Constant(std::pow(nodes_[a].value, nodes_[b].value));
      if (IsConstant(b)) {
        const double c = nodes_[b].value;
        if (c == 0.0) return 1;  // std::pow(x, 0) is 1 for every x
        if (c == 1.0) return a;
        if (c == 2.0) return Mul(a, a);
      }
      break;
    case Op::kAtan2:
      if (IsConstant(a) && IsConstant(b))
        return Constant(std::atan2(nodes_[a].value, nodes_[b].value));
      break;
    case Op::kIfPos:
    case Op::kIfNotPos:
      if (IsZero(b)) return 0;
      if (IsConstant(a)) {
        // The condition is decided now: the branch itself, or 0.
        const bool pos = nodes_[a].value > 0.0;
        return (op == Op::kIfPos) == pos ? b : 0;
      }
      break;
    default:
      throw std::logic_error(std::string("ExprGraph::Binary: ") + ToString(op) +
                             " is not binary");
  }
  if (Commutative(op) && a > b) std::swap(a, b);
  return Make(op, a, b, 0.0);
}

int ExprGraph::Select(int c, int a, int b) {
  if (a == b) return a;
  return Add(Binary(Op::kIfPos, c, a), Binary(Op::kIfNotPos, c, b));
}

// Derivative of node `id` from the derivatives `d` of its operands.
int ExprGraph::Rule(int id,
                    const std::vector<int>& d,
                    const std::vector<int>& seed) {
  const ExprNode n = nodes_[id];  // a copy: making nodes may reallocate
  if (IsKnotOp(n.op)) return KnotRule(id, d);
  const int da = n.a >= 0 ? d[n.a] : 0;
  const int db = n.b >= 0 ? d[n.b] : 0;
  switch (n.op) {
    case Op::kConst:
      return 0;
    case Op::kInput: {
      const auto k = static_cast<std::size_t>(n.value);
      return k < seed.size() ? seed[k] : 0;
    }
    default:
      break;
  }
  if (IsZero(da) && IsZero(db)) return 0;
  const int a = n.a, b = n.b;
  switch (n.op) {
    case Op::kAdd:
      return Add(da, db);
    case Op::kSub:
      return Sub(da, db);
    case Op::kMul:
      return Add(Mul(da, b), Mul(a, db));
    case Op::kDiv:
      // (a/b)' = (a' - (a/b) b') / b
      return Div(Sub(da, Mul(id, db)), b);
    case Op::kNeg:
      return Neg(da);
    case Op::kSin:
      return Mul(Unary(Op::kCos, a), da);
    case Op::kCos:
      return Neg(Mul(Unary(Op::kSin, a), da));
    case Op::kTan:
      return Mul(Add(1, Mul(id, id)), da);
    case Op::kExp:
      return Mul(id, da);
    case Op::kLog:
      return Div(da, a);
    case Op::kSqrt:
      return Div(da, Mul(Constant(2.0), id));
    case Op::kPow:
      if (IsConstant(b)) {
        const double c = nodes_[b].value;
        return Mul(Mul(Constant(c), Binary(Op::kPow, a, Constant(c - 1.0))),
                   da);
      }
      // (a^b)' = a^b (b' log a + b a' / a)
      return Mul(id, Add(Mul(db, Unary(Op::kLog, a)), Div(Mul(b, da), a)));
    case Op::kSinh:
      return Mul(Unary(Op::kCosh, a), da);
    case Op::kCosh:
      return Mul(Unary(Op::kSinh, a), da);
    case Op::kTanh:
      return Mul(Sub(1, Mul(id, id)), da);
    case Op::kAsin:
      return Div(da, Unary(Op::kSqrt, Sub(1, Mul(a, a))));
    case Op::kAcos:
      return Neg(Div(da, Unary(Op::kSqrt, Sub(1, Mul(a, a)))));
    case Op::kAtan:
      return Div(da, Add(1, Mul(a, a)));
    case Op::kAtan2:
      // atan2(y, x)' = (x y' - y x') / (x^2 + y^2)
      return Div(Sub(Mul(b, da), Mul(a, db)), Add(Mul(b, b), Mul(a, a)));
    case Op::kAbs:
      return Mul(Unary(Op::kSign, a), da);
    case Op::kSign:
      return 0;
    case Op::kIfPos:
    case Op::kIfNotPos:
      // The chosen branch's derivative (the condition's is not used).
      return Binary(n.op, a, db);
    case Op::kConst:
    case Op::kInput:
    case Op::kPwLinear:
    case Op::kPwSlope:
    case Op::kHat:
    case Op::kHatSlope:
      break;
  }
  throw std::logic_error("ExprGraph::Rule: unknown operation");
}

std::vector<int> ExprGraph::Derivative(const std::vector<int>& outputs,
                                       const std::vector<int>& seed) {
  // The cone of the outputs, then one pass in topological (id) order.
  const int n = size();
  std::vector<char> need(static_cast<std::size_t>(n), 0);
  for (int o : outputs) need[o] = 1;
  for (int id = n - 1; id >= 0; --id) {
    if (!need[id]) continue;
    ForOperands(id, [&](int o) { need[o] = 1; });
  }
  std::vector<int> d(static_cast<std::size_t>(n), 0);
  for (int id = 0; id < n; ++id)
    if (need[id]) d[id] = Rule(id, d, seed);
  std::vector<int> r;
  r.reserve(outputs.size());
  for (int o : outputs) r.push_back(d[o]);
  return r;
}

std::vector<int> ExprGraph::Gradient(const std::vector<int>& outputs,
                                     const std::vector<int>& weights,
                                     const std::vector<int>& wrt) {
  if (weights.size() != outputs.size())
    throw std::logic_error("ExprGraph::Gradient: one weight per output");
  const int n = size();
  std::vector<char> need(static_cast<std::size_t>(n), 0);
  for (int o : outputs) need[o] = 1;
  for (int id = n - 1; id >= 0; --id) {
    if (!need[id]) continue;
    ForOperands(id, [&](int o) { need[o] = 1; });
  }
  // bar[id]: the adjoint of node id (nodes made during the sweep are not
  // in the cone and need none).
  std::vector<int> bar(static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < outputs.size(); ++i)
    bar[outputs[i]] = Add(bar[outputs[i]], weights[i]);
  for (int id = n - 1; id >= 0; --id) {
    const int g = bar[id];
    if (!need[id] || IsZero(g)) continue;
    const ExprNode nd = nodes_[id];  // a copy: making nodes may reallocate
    if (IsKnotOp(nd.op)) {
      KnotAdjoint(id, g, &bar);
      continue;
    }
    const int a = nd.a, b = nd.b;
    auto to_a = [&](int c) { bar[a] = Add(bar[a], c); };
    auto to_b = [&](int c) { bar[b] = Add(bar[b], c); };
    switch (nd.op) {
      case Op::kConst:
      case Op::kInput:
      case Op::kSign:
        break;
      case Op::kAdd:
        to_a(g);
        to_b(g);
        break;
      case Op::kSub:
        to_a(g);
        to_b(Neg(g));
        break;
      case Op::kMul:
        to_a(Mul(g, b));
        to_b(Mul(g, a));
        break;
      case Op::kDiv:
        // d(a/b) = (da - (a/b) db) / b
        to_a(Div(g, b));
        to_b(Neg(Div(Mul(g, id), b)));
        break;
      case Op::kNeg:
        to_a(Neg(g));
        break;
      case Op::kSin:
        to_a(Mul(Unary(Op::kCos, a), g));
        break;
      case Op::kCos:
        to_a(Neg(Mul(Unary(Op::kSin, a), g)));
        break;
      case Op::kTan:
        to_a(Mul(Add(1, Mul(id, id)), g));
        break;
      case Op::kExp:
        to_a(Mul(id, g));
        break;
      case Op::kLog:
        to_a(Div(g, a));
        break;
      case Op::kSqrt:
        to_a(Div(g, Mul(Constant(2.0), id)));
        break;
      case Op::kPow:
        if (IsConstant(b)) {
          const double c = nodes_[b].value;
          to_a(
              Mul(Mul(Constant(c), Binary(Op::kPow, a, Constant(c - 1.0))), g));
        } else {
          // d(a^b) = a^b (db log a + b da / a)
          to_a(Mul(id, Div(Mul(b, g), a)));
          to_b(Mul(id, Mul(g, Unary(Op::kLog, a))));
        }
        break;
      case Op::kSinh:
        to_a(Mul(Unary(Op::kCosh, a), g));
        break;
      case Op::kCosh:
        to_a(Mul(Unary(Op::kSinh, a), g));
        break;
      case Op::kTanh:
        to_a(Mul(Sub(1, Mul(id, id)), g));
        break;
      case Op::kAsin:
        to_a(Div(g, Unary(Op::kSqrt, Sub(1, Mul(a, a)))));
        break;
      case Op::kAcos:
        to_a(Neg(Div(g, Unary(Op::kSqrt, Sub(1, Mul(a, a))))));
        break;
      case Op::kAtan:
        to_a(Div(g, Add(1, Mul(a, a))));
        break;
      case Op::kAtan2: {
        // d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
        const int den = Add(Mul(b, b), Mul(a, a));
        to_a(Div(Mul(b, g), den));
        to_b(Neg(Div(Mul(a, g), den)));
        break;
      }
      case Op::kAbs:
        to_a(Mul(Unary(Op::kSign, a), g));
        break;
      case Op::kIfPos:
      case Op::kIfNotPos:
        to_b(Binary(nd.op, a, g));  // nothing flows to the condition
        break;
      case Op::kPwLinear:
      case Op::kPwSlope:
      case Op::kHat:
      case Op::kHatSlope:
        break;  // KnotAdjoint above
    }
  }
  std::vector<int> r;
  r.reserve(wrt.size());
  for (int k : wrt) {
    const int node = InputNode(k);
    r.push_back(node >= 0 && node < n ? bar[node] : 0);
  }
  return r;
}

std::vector<double> ExprGraph::Evaluate(
    const std::vector<double>& inputs) const {
  std::vector<double> x(nodes_.size());
  for (int id = 0; id < size(); ++id) {
    const ExprNode& n = nodes_[id];
    switch (n.op) {
      case Op::kConst:
        x[id] = n.value;
        break;
      case Op::kInput: {
        const auto k = static_cast<std::size_t>(n.value);
        x[id] = k < inputs.size() ? inputs[k]
                                  : std::numeric_limits<double>::quiet_NaN();
        break;
      }
      case Op::kPwLinear:
      case Op::kPwSlope:
      case Op::kHat:
      case Op::kHatSlope: {
        const bool coef = n.op == Op::kPwLinear || n.op == Op::kPwSlope;
        const std::vector<double>& k = knot_set(coef ? table(n.b).knots : n.b);
        x[id] = KnotOpValue(
            n.op, k.data(), static_cast<int>(k.size()), x[n.a],
            [&](int i) {
              return x[table(n.b).coef[static_cast<std::size_t>(i)]];
            },
            static_cast<int>(n.value));
        break;
      }
      default:
        x[id] = Apply(n.op, x[n.a], n.b >= 0 ? x[n.b] : 0.0);
    }
  }
  return x;
}

TraceScope::TraceScope(ExprGraph* g) : previous_(g_active) { g_active = g; }
TraceScope::~TraceScope() { g_active = previous_; }

ExprGraph& ActiveGraph() {
  if (g_active == nullptr)
    throw std::logic_error(
        "Sym: arithmetic outside a recording (internal::TraceScope)");
  return *g_active;
}

}  // namespace internal

// ------------------------------------------------------------------ Sym

using internal::ActiveGraph;
using internal::Op;

namespace {
Sym Node(int id) { return Sym::FromNode(id); }
Sym Un(Op op, const Sym& a) { return Node(ActiveGraph().Unary(op, a.node())); }
Sym Bin(Op op, const Sym& a, const Sym& b) {
  return Node(ActiveGraph().Binary(op, a.node(), b.node()));
}
// A comparison decides only between constants: a traced function must do
// the same operations at every state.
double ConstantOrThrow(const Sym& x, const char* what) {
  if (x.node() == 0) return 0.0;
  if (x.node() == 1) return 1.0;
  const internal::ExprGraph& g = ActiveGraph();
  if (g.IsConstant(x.node())) return g.node(x.node()).value;
  throw NotTraceable(std::string("the function ") + what +
                     " a value that depends on the state or the parameters" +
                     (std::string(what) == "compares"
                          ? " (select with IfPositive or Clamp instead of "
                            "branching to keep it compiled)"
                          : ""));
}
}  // namespace

Sym::Sym(double value) {
  if (value == 0.0) {
    node_ = 0;
  } else if (value == 1.0) {
    node_ = 1;
  } else {
    node_ = ActiveGraph().Constant(value);
  }
}

Sym& Sym::operator+=(const Sym& o) { return *this = *this + o; }
Sym& Sym::operator-=(const Sym& o) { return *this = *this - o; }
Sym& Sym::operator*=(const Sym& o) { return *this = *this * o; }
Sym& Sym::operator/=(const Sym& o) { return *this = *this / o; }

Sym operator+(const Sym& a) { return a; }
Sym operator-(const Sym& a) { return Node(ActiveGraph().Neg(a.node())); }
Sym operator+(const Sym& a, const Sym& b) { return Bin(Op::kAdd, a, b); }
Sym operator-(const Sym& a, const Sym& b) { return Bin(Op::kSub, a, b); }
Sym operator*(const Sym& a, const Sym& b) { return Bin(Op::kMul, a, b); }
Sym operator/(const Sym& a, const Sym& b) { return Bin(Op::kDiv, a, b); }

bool operator<(const Sym& a, const Sym& b) {
  return ConstantOrThrow(a, "compares") < ConstantOrThrow(b, "compares");
}
bool operator>(const Sym& a, const Sym& b) { return b < a; }
bool operator<=(const Sym& a, const Sym& b) { return !(b < a); }
bool operator>=(const Sym& a, const Sym& b) { return !(a < b); }
bool operator==(const Sym& a, const Sym& b) {
  if (a.node() == b.node()) return true;
  return ConstantOrThrow(a, "compares") == ConstantOrThrow(b, "compares");
}
bool operator!=(const Sym& a, const Sym& b) { return !(a == b); }

Sym sin(const Sym& x) { return Un(Op::kSin, x); }
Sym cos(const Sym& x) { return Un(Op::kCos, x); }
void SinCos(const Sym& x, Sym* s, Sym* c) {
  *s = sin(x);
  *c = cos(x);
}
Sym tan(const Sym& x) { return Un(Op::kTan, x); }
Sym exp(const Sym& x) { return Un(Op::kExp, x); }
Sym log(const Sym& x) { return Un(Op::kLog, x); }
Sym sqrt(const Sym& x) { return Un(Op::kSqrt, x); }
Sym pow(const Sym& x, double p) { return Bin(Op::kPow, x, Sym(p)); }
Sym pow(const Sym& x, const Sym& y) { return Bin(Op::kPow, x, y); }
Sym sinh(const Sym& x) { return Un(Op::kSinh, x); }
Sym cosh(const Sym& x) { return Un(Op::kCosh, x); }
Sym tanh(const Sym& x) { return Un(Op::kTanh, x); }
Sym asin(const Sym& x) { return Un(Op::kAsin, x); }
Sym acos(const Sym& x) { return Un(Op::kAcos, x); }
Sym atan(const Sym& x) { return Un(Op::kAtan, x); }
Sym atan2(const Sym& y, const Sym& x) { return Bin(Op::kAtan2, y, x); }
Sym abs(const Sym& x) { return Un(Op::kAbs, x); }
Sym fabs(const Sym& x) { return Un(Op::kAbs, x); }
Sym abs2(const Sym& x) { return x * x; }
Sym IfPositive(const Sym& c, const Sym& a, const Sym& b) {
  return Node(ActiveGraph().Select(c.node(), a.node(), b.node()));
}
bool isfinite(const Sym& /*x*/) { return true; }
double Value(const Sym& x) { return ConstantOrThrow(x, "reads"); }

}  // namespace daedalus
