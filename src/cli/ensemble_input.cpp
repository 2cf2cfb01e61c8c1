#include "cli/ensemble_input.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/text_lines.hpp"
#include "cli/run_single.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/sensitivity.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::internal {
namespace {

enum class ValueKind { kNumber, kCount, kWord, kList };

struct OptionColumn {
  const char* column;
  const char* flag;
  ValueKind kind;
};

// The value flags a member may override (not --output-dir, --param,
// --counterfactual or --emit-kernels: the ensemble owns the outputs, the
// parameters have their own columns).
const OptionColumn kOptionColumns[] = {
    {"t_end", "--t-end", ValueKind::kNumber},
    {"rtol", "--rtol", ValueKind::kNumber},
    {"atol", "--atol", ValueKind::kNumber},
    {"output_step", "--output-step", ValueKind::kNumber},
    {"formulation", "--formulation", ValueKind::kWord},
    {"integrator", "--integrator", ValueKind::kWord},
    {"baumgarte_alpha", "--baumgarte-alpha", ValueKind::kNumber},
    {"baumgarte_beta", "--baumgarte-beta", ValueKind::kNumber},
    {"kkt", "--kkt", ValueKind::kWord},
    {"drift_tol", "--drift-tol", ValueKind::kNumber},
    {"drift_action", "--drift-action", ValueKind::kWord},
    {"multiplier_atol", "--multiplier-atol", ValueKind::kNumber},
    {"linear_solver", "--linear-solver", ValueKind::kWord},
    {"jacobian", "--jacobian", ValueKind::kWord},
    {"evaluator", "--evaluator", ValueKind::kWord},
    {"sens", "--sens", ValueKind::kList},
    {"sens_method", "--sens-method", ValueKind::kWord},
    {"functional", "--functional", ValueKind::kWord},
    {"step", "--step", ValueKind::kNumber},
    {"max_steps", "--max-steps", ValueKind::kCount},
    {"max_samples", "--max-samples", ValueKind::kCount},
    {"nonlin_conv_coef", "--nonlin-conv-coef", ValueKind::kNumber},
};

// Checks an option word the way the command line will read it.
void CheckWord(const Model& model,
               const OptionColumn& o,
               const std::string& text) {
  const std::string c = o.column;
  if (c == "formulation") FormulationFromString(text);
  if (c == "integrator") IntegratorFromString(text);
  if (c == "kkt") KktMethodFromString(text);
  if (c == "drift_action") DriftActionFromString(text);
  if (c == "linear_solver") LinearSolverFromString(text);
  if (c == "jacobian") JacobianMethodFromString(text);
  if (c == "sens_method") SensMethodFromString(text);
  if (c == "evaluator" && text != "compiled" && text != "interpreted" &&
      text != "ad")
    throw std::invalid_argument("unknown evaluator '" + text +
                                "'; valid: compiled, interpreted, ad");
  if (o.kind == ValueKind::kList) {
    std::vector<std::string> names;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');) names.push_back(item);
    ResolveSensParameters(model, names);
  }
}

struct Field {
  std::string text;
  int column = 1;  // 1-based character column where the field starts
};

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

// One CSV line: fields separated by commas, optionally in double quotes
// ("" inside quotes is a quote); blanks around unquoted fields are
// dropped. `where` is "FILE:LINE" for messages.
std::vector<Field> SplitCsvLine(const std::string& line,
                                const std::string& where) {
  std::vector<Field> fields;
  size_t i = 0;
  while (true) {
    Field f;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    f.column = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            f.text += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        f.text += line[i++];
      }
      if (!closed)
        throw std::invalid_argument(
            where + ":" + std::to_string(f.column) +
            ": a quoted field is not closed on its line; end it with '\"' "
            "(a quote inside quotes is written \"\")");
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i < line.size() && line[i] != ',')
        throw std::invalid_argument(
            where + ":" + std::to_string(i + 1) +
            ": text after a closing quote; put a comma between fields");
    } else {
      const size_t comma = line.find(',', i);
      const size_t end = comma == std::string::npos ? line.size() : comma;
      f.text = Trim(line.substr(i, end - i));
      i = end;
    }
    fields.push_back(f);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

std::string Join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::vector<std::string> EnsembleOptionColumns() {
  std::vector<std::string> out;
  for (const OptionColumn& o : kOptionColumns) out.push_back(o.column);
  return out;
}

EnsembleArgs SplitEnsembleArgs(int argc, const char* const* argv) {
  EnsembleArgs out;
  if (argc > 0) out.rest.push_back(argv[0]);
  bool mc_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const bool ours = arg == "--ensemble" || arg == "--monte-carlo" ||
                      arg == "--seed" || arg == "--dist" ||
                      arg == "--multi-start";
    if (!ours) {
      out.rest.push_back(argv[i]);
      // Keep a flag's value with it (a value that looks like one of our
      // flags is the other flag's value).
      if (!has_value && IsValueFlag(arg) && i + 1 < argc)
        out.rest.push_back(argv[++i]);
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      value = argv[++i];
    }
    if (arg == "--ensemble") {
      if (value.empty())
        throw std::invalid_argument("--ensemble needs a file name");
      out.file = value;
    } else if (arg == "--monte-carlo") {
      out.monte_carlo = ParseCount(arg, value);
      mc_given = true;
    } else if (arg == "--multi-start") {
      out.multi_start = ParseCount(arg, value);
    } else if (arg == "--seed") {
      uint64_t s = 0;
      const auto [end, ec] =
          std::from_chars(value.data(), value.data() + value.size(), s);
      if (value.empty() || ec != std::errc() ||
          end != value.data() + value.size())
        throw std::invalid_argument(
            "--seed: '" + value +
            "' is not a whole number from 0 to 18446744073709551615");
      out.seed = s;
      out.seed_given = true;
    } else {
      out.dists.push_back(value);
    }
  }
  if (!out.file.empty() && mc_given)
    throw std::invalid_argument(
        "--ensemble and --monte-carlo do not combine: give the members in "
        "a file, or draw them");
  const bool ms_given = out.multi_start > 0;
  if (ms_given && !out.file.empty())
    throw std::invalid_argument(
        "--ensemble and --multi-start do not combine: give the starts in "
        "the file (columns named as the spec's free variables), or draw "
        "them");
  if (ms_given && mc_given)
    throw std::invalid_argument(
        "--monte-carlo and --multi-start do not combine: --multi-start "
        "draws the starting guesses of the --optimize spec's free "
        "variables, --monte-carlo draws model parameters");
  if (ms_given && !out.dists.empty())
    throw std::invalid_argument(
        "--dist draws model parameters for --monte-carlo; --multi-start "
        "draws the spec's free variables within their bounds and takes no "
        "--dist (fix a parameter with --param)");
  if (!mc_given && !ms_given && (out.seed_given || !out.dists.empty()))
    throw std::invalid_argument(
        std::string(out.seed_given ? "--seed" : "--dist") +
        (out.seed_given ? " needs --monte-carlo N or --multi-start N (the "
                          "number of members to draw)"
                        : " needs --monte-carlo N (the number of members "
                          "to draw)"));
  if (mc_given && out.dists.empty())
    throw std::invalid_argument(
        "--monte-carlo needs at least one --dist P=KIND:A,B (KIND uniform, "
        "normal or lognormal)");
  return out;
}

std::vector<MemberSpec> ReadEnsembleFile(
    const Model& model,
    const std::string& path,
    const std::vector<FreeVariable>* guesses) {
  // Any line end (LF, CRLF, CR), the byte-order mark spreadsheets put
  // before the first column's name dropped; UTF-16 and binary files
  // refused with the cause (analysis/text_lines.hpp).
  const std::vector<std::string> lines =
      ReadTextLines(path, "--ensemble: the file");
  const std::vector<std::string>& pnames = model.parameter_names();
  std::vector<std::string> columns;
  // Header: the first line that is not a comment.
  size_t l = 0;
  while (l < lines.size() && !lines[l].empty() && lines[l][0] == '#') ++l;
  if (l >= lines.size() || Trim(lines[l]).empty())
    throw std::invalid_argument(
        path + ":" + std::to_string(l + 1) +
        ": no header row; the first line names the columns (parameters: " +
        Join(pnames) + "; options such as t_end, rtol; or name)");
  const std::string hwhere = path + ":" + std::to_string(l + 1);
  // -1 name, -3 q0_<coordinate>, -4 v0_<coordinate>, 0..np-1 parameter,
  // np + k option k.
  std::vector<int> kinds;
  std::set<std::string> seen;
  for (const Field& f : SplitCsvLine(lines[l], hwhere)) {
    const std::string at = hwhere + ":" + std::to_string(f.column) + ": ";
    if (f.text.empty())
      throw std::invalid_argument(at + "empty column name in the header");
    if (!seen.insert(f.text).second)
      throw std::invalid_argument(at + "column '" + f.text +
                                  "' appears twice; keep one");
    int kind = -2;
    if (f.text == "name") kind = -1;
    for (size_t p = 0; p < pnames.size(); ++p)
      if (pnames[p] == f.text) kind = static_cast<int>(p);
    // A free variable of the spec: its guess, before a parameter's value.
    for (size_t k = 0; guesses != nullptr && k < guesses->size(); ++k)
      if ((*guesses)[k].name == f.text) kind = -5;
    if (kind == -2) {
      for (size_t k = 0; k < std::size(kOptionColumns); ++k)
        if (f.text == kOptionColumns[k].column)
          kind = static_cast<int>(pnames.size() + k);
    }
    // q0_<coordinate> and v0_<velocity>, as --q0 and --v0 name them (a
    // quaternion's velocities are <name>.wx, .wy, .wz, not its coordinates).
    for (const std::string& c : model.coordinate_names())
      if (kind == -2 && f.text == "q0_" + c) kind = -3;
    for (const std::string& c : model.velocity_names())
      if (kind == -2 && f.text == "v0_" + c) kind = -4;
    if (kind == -2) {
      const auto& cn = model.coordinate_names();
      const auto& vn = model.velocity_names();
      std::string hint;
      if (f.text.rfind("v0_", 0) == 0 &&
          std::find(cn.begin(), cn.end(), f.text.substr(3)) != cn.end())
        hint = " ('" + f.text.substr(3) +
               "' is a coordinate of a quaternion, whose velocities are "
               "named differently)";
      std::string vars;
      for (size_t k = 0; guesses != nullptr && k < guesses->size(); ++k)
        vars += (k == 0 ? "" : ", ") + (*guesses)[k].name;
      if (guesses != nullptr)
        vars =
            "a free variable of the --optimize spec, whose column is its "
            "initial guess (" +
            (vars.empty() ? std::string("none") : vars) + "), ";
      throw std::invalid_argument(
          at + "unknown column '" + f.text + "'" + hint + "; a column is " +
          vars + "a parameter (" +
          (pnames.empty() ? std::string("none") : Join(pnames)) +
          "), an option (" + Join(EnsembleOptionColumns()) +
          "), an initial value (q0_<coordinate>: " +
          (cn.empty() ? std::string("no coordinates")
                      : "q0_" + cn[0] + ", ...") +
          "; v0_<velocity>: " +
          (vn.empty() ? std::string("none") : "v0_" + vn[0] + ", ...") +
          ") or name");
    }
    columns.push_back(f.text);
    kinds.push_back(kind);
  }
  std::vector<MemberSpec> members;
  for (++l; l < lines.size(); ++l) {
    const std::string where = path + ":" + std::to_string(l + 1);
    const std::string& line = lines[l];
    if (!line.empty() && line[0] == '#') continue;  // a comment
    if (Trim(line).empty())
      throw std::invalid_argument(
          where +
          ":1: empty row; every line after the header is one member "
          "(remove the line, or start it with '#' to keep it as a "
          "comment)");
    const std::vector<Field> fields = SplitCsvLine(line, where);
    if (fields.size() != columns.size()) {
      const size_t k = std::min(fields.size(), columns.size());
      throw std::invalid_argument(
          where + ":" +
          std::to_string(k < fields.size()
                             ? fields[k].column
                             : static_cast<int>(line.size()) + 1) +
          ": " + std::to_string(fields.size()) + " field" +
          (fields.size() == 1 ? "" : "s") + ", the header has " +
          std::to_string(columns.size()) + " (" + Join(columns) +
          "); give one value per column");
    }
    MemberSpec m;
    m.index = static_cast<int>(members.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      const Field& f = fields[c];
      const std::string at = where + ":" + std::to_string(f.column) +
                             ": column '" + columns[c] + "': ";
      const int kind = kinds[c];
      if (kind == -1) {
        m.name = f.text;
        continue;
      }
      if (f.text.empty())
        throw std::invalid_argument(at +
                                    "empty value; every member needs a "
                                    "value in every column but name");
      m.inputs.emplace_back(columns[c], f.text);
      try {
        if (kind == -5) {
          ParseNumber("value", f.text);
          m.args.push_back("--guess");
          m.args.push_back(columns[c] + "=" + f.text);
          continue;
        }
        if (kind == -3 || kind == -4) {
          ParseNumber("value", f.text);
          m.args.push_back(kind == -3 ? "--q0" : "--v0");
          m.args.push_back(columns[c].substr(3) + "=" + f.text);
          continue;
        }
        if (kind < static_cast<int>(pnames.size())) {
          ParseNumber("value", f.text);
          m.args.push_back("--param");
          m.args.push_back(columns[c] + "=" + f.text);
          continue;
        }
        const OptionColumn& o = kOptionColumns[kind - pnames.size()];
        if (o.kind == ValueKind::kNumber) ParseNumber("value", f.text);
        if (o.kind == ValueKind::kCount) ParseCount("value", f.text);
        if (o.kind == ValueKind::kWord || o.kind == ValueKind::kList)
          CheckWord(model, o, f.text);
        m.args.push_back(o.flag);
        m.args.push_back(f.text);
      } catch (const std::invalid_argument& e) {
        std::string why = e.what();
        if (why.rfind("value: ", 0) == 0) why = why.substr(7);
        throw std::invalid_argument(at + why);
      }
    }
    members.push_back(std::move(m));
  }
  if (members.empty())
    throw std::invalid_argument(path +
                                ": no members; add one data row per member "
                                "below the header");
  return members;
}

Distribution ParseDistribution(const Model& model, const std::string& spec) {
  const std::string flag = "--dist " + spec;
  const size_t eq = spec.find('=');
  const size_t colon = spec.find(':', eq == std::string::npos ? 0 : eq);
  if (eq == std::string::npos || colon == std::string::npos)
    throw std::invalid_argument(
        flag +
        ": expected P=KIND:A,B (uniform:LO,HI, normal:MEAN,SD or "
        "lognormal:MU,SIGMA)");
  Distribution d;
  d.spec = spec;
  d.parameter = model.ParameterIndex(spec.substr(0, eq));
  const std::string kind = spec.substr(eq + 1, colon - eq - 1);
  const std::string args = spec.substr(colon + 1);
  const size_t comma = args.find(',');
  if (comma == std::string::npos || args.find(',', comma + 1) != args.npos)
    throw std::invalid_argument(flag + ": expected two numbers A,B after '" +
                                kind + ":'");
  d.a = ParseNumber(flag, args.substr(0, comma));
  d.b = ParseNumber(flag, args.substr(comma + 1));
  if (kind == "uniform") {
    d.kind = Distribution::Kind::kUniform;
    if (!(d.a < d.b))
      throw std::invalid_argument(flag + ": uniform:LO,HI needs LO < HI");
  } else if (kind == "normal" || kind == "lognormal") {
    d.kind = kind == "normal" ? Distribution::Kind::kNormal
                              : Distribution::Kind::kLogNormal;
    if (!(d.b > 0.0))
      throw std::invalid_argument(
          flag + ": " + kind + (kind == "normal" ? ":MEAN,SD" : ":MU,SIGMA") +
          " needs a positive " + (kind == "normal" ? "SD" : "SIGMA"));
  } else {
    throw std::invalid_argument(flag + ": unknown distribution '" + kind +
                                "'; valid: uniform, normal, lognormal");
  }
  return d;
}

double CounterUniform(uint64_t seed, uint64_t member, uint64_t stream) {
  // SplitMix64's finalizer, applied in turn to the seed, the member and
  // the stream: a bijective 64-bit mix, so each triple gets its own word.
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  const uint64_t h = mix(mix(mix(seed) ^ member) ^ stream);
  // The top 53 bits, centred in their interval: never 0 or 1.
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

std::vector<MemberSpec> DrawMembers(const Model& model,
                                    long n,
                                    uint64_t seed,
                                    const std::vector<Distribution>& dists,
                                    const std::atomic<int>* stop) {
  std::vector<const Distribution*> order;
  for (const Distribution& d : dists) {
    for (const Distribution* o : order)
      if (o->parameter == d.parameter)
        throw std::invalid_argument(
            "--dist " + d.spec + ": parameter '" +
            model.parameter_names()[static_cast<size_t>(d.parameter)] +
            "' already has a distribution (--dist " + o->spec + ")");
    order.push_back(&d);
  }
  std::sort(order.begin(), order.end(),
            [](const Distribution* x, const Distribution* y) {
              return x->parameter < y->parameter;
            });
  std::vector<MemberSpec> members(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    if (stop != nullptr && i % 4096 == 0 && stop->load() != 0) {
      members.resize(static_cast<size_t>(i));
      break;
    }
    MemberSpec& m = members[static_cast<size_t>(i)];
    m.index = static_cast<int>(i);
    for (const Distribution* d : order) {
      const uint64_t s = 2 * static_cast<uint64_t>(d->parameter);
      const double u1 = CounterUniform(seed, static_cast<uint64_t>(i), s);
      const double u2 = CounterUniform(seed, static_cast<uint64_t>(i), s + 1);
      double x = 0.0;
      if (d->kind == Distribution::Kind::kUniform) {
        x = d->a + (d->b - d->a) * u1;
      } else {
        // Box-Muller: one standard normal from two uniforms.
        const double z = std::sqrt(-2.0 * std::log(u1)) *
                         std::cos(2.0 * std::numbers::pi * u2);
        x = d->kind == Distribution::Kind::kNormal ? d->a + d->b * z
                                                   : std::exp(d->a + d->b * z);
      }
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", x);
      const std::string& name =
          model.parameter_names()[static_cast<size_t>(d->parameter)];
      m.inputs.emplace_back(name, text);
      m.args.push_back("--param");
      m.args.push_back(name + "=" + text);
    }
  }
  return members;
}

std::vector<MemberSpec> DrawStarts(const std::vector<FreeVariable>& vars,
                                   long n,
                                   uint64_t seed,
                                   const std::atomic<int>* stop) {
  if (vars.empty())
    throw std::invalid_argument(
        "--multi-start: the --optimize spec has no free variables (controls, "
        "parameters or initial_state) to start from elsewhere");
  for (const FreeVariable& v : vars)
    if (!std::isfinite(v.lower) || !std::isfinite(v.upper))
      throw std::invalid_argument(
          "--multi-start draws each start within the variable's bounds, and "
          "'" +
          v.name + "' has " +
          (std::isfinite(v.lower) || std::isfinite(v.upper)
               ? std::string("only one finite bound")
               : std::string("none")) +
          "; give it lower and upper in the spec, or list the starts in an "
          "--ensemble file (columns named as the free variables)");
  auto text = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return std::string(buf);
  };
  std::vector<MemberSpec> members(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    if (stop != nullptr && i % 4096 == 0 && stop->load() != 0) {
      members.resize(static_cast<size_t>(i));
      break;
    }
    MemberSpec& m = members[static_cast<size_t>(i)];
    m.index = static_cast<int>(i);
    for (size_t k = 0; k < vars.size(); ++k) {
      const FreeVariable& v = vars[k];
      if (i == 0) {
        // The spec's own start: no override (the table shows its value).
        m.inputs.emplace_back(v.name, text(v.initial));
        continue;
      }
      const double u = CounterUniform(seed, static_cast<uint64_t>(i), k);
      const std::string x = text(v.lower + (v.upper - v.lower) * u);
      m.inputs.emplace_back(v.name, x);
      m.args.push_back("--guess");
      m.args.push_back(v.name + "=" + x);
    }
  }
  return members;
}

}  // namespace daedalus::internal
