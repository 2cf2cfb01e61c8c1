#include "eval/expr_program.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "daedalus/kernels.hpp"

namespace daedalus {

namespace {

// The registered kernels by fingerprint. A function-local static: generated
// files register during static initialization, in any order.
struct Registry {
  std::mutex mu;
  std::unordered_map<std::uint64_t, KernelEntry> kernels;
};
Registry& GetRegistry() {
  static Registry r;
  return r;
}

}  // namespace

bool RegisterKernels(const KernelEntry* entries, std::size_t count) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (std::size_t i = 0; i < count; ++i)
    r.kernels[entries[i].fingerprint] = entries[i];
  return true;
}

namespace internal {

namespace {

// One instruction computes sin into dst and cos into dst + 1.
constexpr std::uint32_t kSinCosOp = 255;

std::atomic<bool> g_native{true};
ProgramCollector* g_collector = nullptr;

// Both the interpreter and the generated kernels compute sin and cos of one
// argument by this call, so that their results agree bit for bit.
inline void SinCosOf(double x, double* s, double* c) {
#if defined(__GLIBC__)
  ::sincos(x, s, c);
#else
  *s = std::sin(x);
  *c = std::cos(x);
#endif
}

// FNV-1a over 64-bit words.
struct Hasher {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void Add(std::uint64_t x) {
    for (int i = 0; i < 8; ++i) {
      h ^= (x >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
};

}  // namespace

void SetNativeKernels(bool enabled) { g_native = enabled; }
bool NativeKernelsEnabled() { return g_native; }

ExprProgram::ExprProgram(const ExprGraph& g,
                         const std::vector<int>& inputs,
                         const std::vector<int>& outputs)
    : num_inputs_(static_cast<int>(inputs.size())) {
  const int n = g.size();
  // The cone of the outputs.
  std::vector<char> need(static_cast<std::size_t>(n), 0);
  for (int o : outputs) need[o] = 1;
  for (int id = n - 1; id >= 0; --id) {
    if (!need[id]) continue;
    g.ForOperands(id, [&](int o) { need[o] = 1; });
  }
  std::vector<std::int64_t> slot(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < num_inputs_; ++i) {
    const int node = g.InputNode(inputs[i]);
    if (node >= 0) slot[node] = i;
  }
  std::uint32_t next = static_cast<std::uint32_t>(num_inputs_);
  // Constants, then sin/cos partners by argument.
  std::unordered_map<int, int> sin_of, cos_of;
  std::unordered_map<int, std::uint32_t> knot_set_of;  // graph -> program
  for (int id = 0; id < n; ++id) {
    if (!need[id]) continue;
    const ExprNode& nd = g.node(id);
    if (nd.op == Op::kConst) {
      slot[id] = next;
      constants_.emplace_back(next, nd.value);
      ++next;
    } else if (nd.op == Op::kInput && slot[id] < 0) {
      throw std::logic_error("ExprProgram: an output needs graph input " +
                             std::to_string(static_cast<int>(nd.value)) +
                             ", which the program's inputs do not list");
    } else if (nd.op == Op::kSin) {
      sin_of[nd.a] = id;
    } else if (nd.op == Op::kCos) {
      cos_of[nd.a] = id;
    }
  }
  for (int id = 0; id < n; ++id) {
    if (!need[id] || slot[id] >= 0) continue;
    const ExprNode& nd = g.node(id);
    if (nd.op == Op::kSin || nd.op == Op::kCos) {
      const auto s = sin_of.find(nd.a), c = cos_of.find(nd.a);
      if (s != sin_of.end() && c != cos_of.end()) {
        slot[s->second] = next;
        slot[c->second] = next + 1;
        code_.push_back(
            {kSinCosOp, next, static_cast<std::uint32_t>(slot[nd.a]), 0});
        next += 2;
        continue;
      }
    }
    if (IsKnotOp(nd.op)) {
      // The knot set (shared by the program's references) and the slots.
      const bool coef = nd.op == Op::kPwLinear || nd.op == Op::kPwSlope;
      const int ks = coef ? g.table(nd.b).knots : nd.b;
      KnotRef kr;
      const auto it = knot_set_of.find(ks);
      if (it == knot_set_of.end()) {
        kr.knots = static_cast<std::uint32_t>(knots_.size());
        knots_.push_back(g.knot_set(ks));
        knot_set_of.emplace(ks, kr.knots);
      } else {
        kr.knots = it->second;
      }
      if (coef)
        for (int c : g.table(nd.b).coef)
          kr.slots.push_back(static_cast<std::uint32_t>(slot[c]));
      kr.j = static_cast<int>(nd.value);
      slot[id] = next;
      code_.push_back({static_cast<std::uint32_t>(nd.op), next,
                       static_cast<std::uint32_t>(slot[nd.a]),
                       static_cast<std::uint32_t>(knot_refs_.size())});
      knot_refs_.push_back(std::move(kr));
      ++next;
      continue;
    }
    slot[id] = next;
    code_.push_back({static_cast<std::uint32_t>(nd.op), next,
                     static_cast<std::uint32_t>(slot[nd.a]),
                     nd.b >= 0 ? static_cast<std::uint32_t>(slot[nd.b]) : 0});
    ++next;
  }
  num_slots_ = next;
  for (int o : outputs) {
    out_slots_.push_back(static_cast<std::uint32_t>(slot[o]));
    out_zero_.push_back(g.IsZero(o) ? 1 : 0);
  }

  Hasher hash;
  hash.Add(static_cast<std::uint64_t>(num_inputs_));
  hash.Add(num_slots_);
  for (const auto& [sl, value] : constants_) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    hash.Add(sl);
    hash.Add(bits);
  }
  for (const Instr& c : code_) {
    hash.Add((static_cast<std::uint64_t>(c.op) << 32) | c.dst);
    hash.Add((static_cast<std::uint64_t>(c.a) << 32) | c.b);
  }
  for (std::uint32_t o : out_slots_) hash.Add(o);
  // The knot tables (none in a program without knot operations, whose
  // fingerprint is then what it was before them).
  for (const auto& ks : knots_) {
    hash.Add(ks.size());
    for (double x : ks) {
      std::uint64_t bits;
      std::memcpy(&bits, &x, sizeof bits);
      hash.Add(bits);
    }
  }
  for (const KnotRef& kr : knot_refs_) {
    hash.Add((static_cast<std::uint64_t>(kr.knots) << 32) |
             static_cast<std::uint32_t>(kr.j));
    for (std::uint32_t sl : kr.slots) hash.Add(sl);
  }
  fingerprint_ = hash.h;
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    const auto it = r.kernels.find(fingerprint_);
    if (it != r.kernels.end() &&
        it->second.num_instructions == num_instructions() &&
        it->second.num_outputs == num_outputs())
      native_ = it->second.run;
  }
  if (g_collector != nullptr) g_collector->programs_.push_back(*this);
}

void ExprProgram::InitScratch(std::vector<double>* scratch) const {
  scratch->assign(num_slots_, 0.0);
  for (const auto& [s, value] : constants_) (*scratch)[s] = value;
}

void ExprProgram::Run(const double* in, double* out, double* s) const {
  if (native_ != nullptr && g_native.load(std::memory_order_relaxed)) {
    native_(in, out);
    return;
  }
  for (int i = 0; i < num_inputs_; ++i) s[i] = in[i];
  for (const Instr& c : code_) {
    const double a = s[c.a];
    double r;
    switch (c.op) {
      case static_cast<std::uint32_t>(Op::kAdd):
        r = a + s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kSub):
        r = a - s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kMul):
        r = a * s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kDiv):
        r = a / s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kNeg):
        r = -a;
        break;
      case kSinCosOp:
        SinCosOf(a, &r, &s[c.dst + 1]);
        break;
      case static_cast<std::uint32_t>(Op::kSin):
        r = std::sin(a);
        break;
      case static_cast<std::uint32_t>(Op::kCos):
        r = std::cos(a);
        break;
      case static_cast<std::uint32_t>(Op::kTan):
        r = std::tan(a);
        break;
      case static_cast<std::uint32_t>(Op::kExp):
        r = std::exp(a);
        break;
      case static_cast<std::uint32_t>(Op::kLog):
        r = std::log(a);
        break;
      case static_cast<std::uint32_t>(Op::kSqrt):
        r = std::sqrt(a);
        break;
      case static_cast<std::uint32_t>(Op::kPow):
        r = std::pow(a, s[c.b]);
        break;
      case static_cast<std::uint32_t>(Op::kSinh):
        r = std::sinh(a);
        break;
      case static_cast<std::uint32_t>(Op::kCosh):
        r = std::cosh(a);
        break;
      case static_cast<std::uint32_t>(Op::kTanh):
        r = std::tanh(a);
        break;
      case static_cast<std::uint32_t>(Op::kAsin):
        r = std::asin(a);
        break;
      case static_cast<std::uint32_t>(Op::kAcos):
        r = std::acos(a);
        break;
      case static_cast<std::uint32_t>(Op::kAtan):
        r = std::atan(a);
        break;
      case static_cast<std::uint32_t>(Op::kAtan2):
        r = std::atan2(a, s[c.b]);
        break;
      case static_cast<std::uint32_t>(Op::kAbs):
        r = std::abs(a);
        break;
      case static_cast<std::uint32_t>(Op::kSign):
        r = a < 0.0 ? -1.0 : 1.0;
        break;
      case static_cast<std::uint32_t>(Op::kIfPos):
        r = a > 0.0 ? s[c.b] : 0.0;
        break;
      case static_cast<std::uint32_t>(Op::kIfNotPos):
        r = a > 0.0 ? 0.0 : s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kPwLinear):
      case static_cast<std::uint32_t>(Op::kPwSlope):
      case static_cast<std::uint32_t>(Op::kHat):
      case static_cast<std::uint32_t>(Op::kHatSlope): {
        const KnotRef& kr = knot_refs_[c.b];
        const std::vector<double>& k = knots_[kr.knots];
        r = KnotOpValue(
            static_cast<Op>(c.op), k.data(), static_cast<int>(k.size()), a,
            [&](int i) { return s[kr.slots[static_cast<std::size_t>(i)]]; },
            kr.j);
        break;
      }
      default:
        r = std::numeric_limits<double>::quiet_NaN();
    }
    s[c.dst] = r;
  }
  const std::size_t no = out_slots_.size();
  for (std::size_t k = 0; k < no; ++k) out[k] = s[out_slots_[k]];
}

namespace {

// A double as an exact C++ literal.
std::string Literal(double x) {
  if (std::isnan(x)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(x))
    return x > 0 ? "std::numeric_limits<double>::infinity()"
                 : "(-std::numeric_limits<double>::infinity())";
  char buf[64];
  std::snprintf(buf, sizeof buf, x < 0 ? "(%a)" : "%a", x);
  return buf;
}

// "v12", "in[3]": built with snprintf (GCC 12 misreads the inlined
// `"v" + std::to_string(k)` as an overlapping copy, -Wrestrict).
std::string Name(const char* format, std::uint32_t k) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, static_cast<unsigned>(k));
  return buf;
}

const char* Function(std::uint32_t op) {
  switch (static_cast<Op>(op)) {
    case Op::kSin:
      return "std::sin";
    case Op::kCos:
      return "std::cos";
    case Op::kTan:
      return "std::tan";
    case Op::kExp:
      return "std::exp";
    case Op::kLog:
      return "std::log";
    case Op::kSqrt:
      return "std::sqrt";
    case Op::kPow:
      return "std::pow";
    case Op::kSinh:
      return "std::sinh";
    case Op::kCosh:
      return "std::cosh";
    case Op::kTanh:
      return "std::tanh";
    case Op::kAsin:
      return "std::asin";
    case Op::kAcos:
      return "std::acos";
    case Op::kAtan:
      return "std::atan";
    case Op::kAtan2:
      return "std::atan2";
    case Op::kAbs:
      return "std::abs";
    default:
      return nullptr;
  }
}

}  // namespace

std::string ExprProgram::EmitCpp(const std::string& name) const {
  std::vector<std::string> ref(num_slots_);
  for (int i = 0; i < num_inputs_; ++i)
    ref[i] = Name("in[%u]", static_cast<std::uint32_t>(i));
  for (const auto& [sl, value] : constants_) ref[sl] = Literal(value);
  if (!knot_refs_.empty())
    throw std::logic_error(
        "EmitCpp: a program with piecewise-linear control splines (knot "
        "operations) has no native form; it runs interpreted (KernelSource "
        "skips it)");
  std::ostringstream os;
  os << "void " << name
     << "([[maybe_unused]] const double* in, [[maybe_unused]] double* out) "
        "{\n";
  for (const Instr& c : code_) {
    const std::string r = Name("v%u", c.dst);
    ref[c.dst] = r;
    const std::string& a = ref[c.a];
    const std::string& b = ref[c.b];
    if (c.op == kSinCosOp) {
      const std::string rc = Name("v%u", c.dst + 1);
      ref[c.dst + 1] = rc;
      os << "  double " << r << ", " << rc << ";\n";
      os << "  daedalus_sincos(" << a << ", &" << r << ", &" << rc << ");\n";
      continue;
    }
    os << "  const double " << r << " = ";
    switch (static_cast<Op>(c.op)) {
      case Op::kAdd:
        os << a << " + " << b;
        break;
      case Op::kSub:
        os << a << " - " << b;
        break;
      case Op::kMul:
        os << a << " * " << b;
        break;
      case Op::kDiv:
        os << a << " / " << b;
        break;
      case Op::kNeg:
        os << "-" << a;
        break;
      case Op::kSign:
        os << "(" << a << " < 0.0 ? -1.0 : 1.0)";
        break;
      case Op::kIfPos:
        os << "(" << a << " > 0.0 ? " << b << " : 0.0)";
        break;
      case Op::kIfNotPos:
        os << "(" << a << " > 0.0 ? 0.0 : " << b << ")";
        break;
      case Op::kPow:
      case Op::kAtan2:
        os << Function(c.op) << "(" << a << ", " << b << ")";
        break;
      default: {
        const char* f = Function(c.op);
        if (f == nullptr)
          throw std::logic_error("EmitCpp: no C++ form for operation " +
                                 std::to_string(c.op));
        os << f << "(" << a << ")";
      }
    }
    os << ";\n";
  }
  for (std::size_t k = 0; k < out_slots_.size(); ++k)
    os << "  out[" << k << "] = " << ref[out_slots_[k]] << ";\n";
  os << "}\n";
  return os.str();
}

ProgramCollector::ProgramCollector() {
  if (g_collector != nullptr)
    throw std::logic_error("ProgramCollector: one at a time");
  g_collector = this;
}
ProgramCollector::~ProgramCollector() { g_collector = nullptr; }

std::string ProgramCollector::KernelSource(const std::string& origin) const {
  std::ostringstream os, code;
  os << "// Generated by `" << origin
     << " --emit-kernels`: native kernels of the\n"
        "// model's compiled programs (include/daedalus/kernels.hpp). Do not "
        "edit.\n"
        "#include <cmath>\n#include <limits>\n\n"
        "#include \"daedalus/kernels.hpp\"\n\nnamespace {\n\n";
  std::set<std::uint64_t> seen;
  std::ostringstream table;
  int k = 0;
  bool sincos = false;
  for (const ExprProgram& p : programs_) {
    // Programs with knot operations (control splines) stay interpreted.
    if (!p.knot_refs_.empty()) continue;
    if (!seen.insert(p.fingerprint()).second) continue;
    const std::string name = Name("kernel%u", static_cast<std::uint32_t>(k++));
    code << p.EmitCpp(name) << "\n";
    for (const auto& c : p.code_) sincos = sincos || c.op == kSinCosOp;
    char fp[32];
    std::snprintf(fp, sizeof fp, "0x%016llxull",
                  static_cast<unsigned long long>(p.fingerprint()));
    table << "    {" << fp << ", " << p.num_instructions() << ", "
          << p.num_outputs() << ", &" << name << "},\n";
  }
  if (sincos) {
    os << "// The interpreter's sin/cos (src/eval/expr_program.cpp): same "
          "results.\n"
          "inline void daedalus_sincos(double x, double* s, double* c) {\n"
          "#if defined(__GLIBC__)\n  ::sincos(x, s, c);\n#else\n"
          "  *s = std::sin(x);\n  *c = std::cos(x);\n#endif\n}\n\n";
  }
  os << code.str();
  if (k == 0) {
    os << "}  // namespace\n";  // the model has no compiled programs
    return os.str();
  }
  os << "const daedalus::KernelEntry kKernels[] = {\n"
     << table.str() << "};\n\n"
     << "[[maybe_unused]] const bool kRegistered = daedalus::RegisterKernels(\n"
        "    kKernels, sizeof kKernels / sizeof kKernels[0]);\n\n"
        "}  // namespace\n";
  return os.str();
}

}  // namespace internal
}  // namespace daedalus
