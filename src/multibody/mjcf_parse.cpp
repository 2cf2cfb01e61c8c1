// Reading an MJCF file (mjcf_read.hpp, mjcf_internal.hpp): the files and
// their includes, default classes, attribute lookups with file and line,
// and the walk over the sections and the body tree in MuJoCo's order.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "import_guard.hpp"
#include "mjcf_read.hpp"

namespace daedalus::mjcf::internal {

// ---- places and notes

std::string Where::At(const std::string& attribute) const {
  std::string el = element;
  if (!attribute.empty() && el.size() > 1 && el.back() == '>')
    el = el.substr(0, el.size() - 1) + " " + attribute + ">";
  return file + ":" + std::to_string(line) + ": " + el + ": ";
}

void Notes::Add(const std::string& key,
                const Where& where,
                const std::string& why) {
  auto [it, fresh] = entries_.try_emplace(key);
  ++it->second.count;
  if (!fresh) return;
  it->second.text = where.At() + why;
  order_.push_back(key);
  if (echo_) *echo_ << "mjcf: " << it->second.text << "\n";
}

std::vector<std::string> Notes::Lines() const {
  std::vector<std::string> out;
  for (const std::string& key : order_) {
    const Entry& e = entries_.at(key);
    out.push_back(e.text +
                  (e.count > 1
                       ? " (and " + std::to_string(e.count - 1) + " more)"
                       : std::string()));
  }
  return out;
}

const char* ToString(JointKind kind) {
  switch (kind) {
    case JointKind::kHinge:
      return "hinge";
    case JointKind::kSlide:
      return "slide";
    case JointKind::kBall:
      return "ball";
    case JointKind::kFree:
      return "free";
  }
  return "hinge";
}

Where Node::where() const {
  const char* name = e->Attribute("name");
  std::string el = "<" + std::string(e->Name());
  if (name) el += " name='" + std::string(name) + "'";
  el += ">";
  return {*file, e->GetLineNum(), el};
}

// ---- attribute lookups

const Attr* Element::Get(const std::string& name) const {
  const auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

bool Element::OwnHas(const std::string& name) const {
  return node_.e->Attribute(name.c_str()) != nullptr;
}

std::string Element::Text(const std::string& name,
                          const std::string& fallback) const {
  const Attr* a = Get(name);
  return a ? a->value : fallback;
}

std::vector<double> Element::Numbers(const std::string& name,
                                     size_t count_lo,
                                     size_t count_hi,
                                     std::vector<double> fallback) const {
  const Attr* a = Get(name);
  if (!a) return fallback;
  const std::string at = a->where.At(name + "='" + a->value + "'");
  std::vector<double> out;
  std::istringstream in(a->value);
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    const double x = std::strtod(word.c_str(), &end);
    if (end == word.c_str() || *end != '\0')
      throw std::invalid_argument(at + "'" + word +
                                  "' is not a number; write decimal numbers "
                                  "separated by spaces");
    if (!std::isfinite(x))
      throw std::invalid_argument(at + "'" + word +
                                  "' is not finite; give a finite number");
    out.push_back(x);
  }
  if (out.size() < count_lo || out.size() > count_hi)
    throw std::invalid_argument(
        at + "takes " +
        (count_lo == count_hi
             ? std::to_string(count_lo)
             : std::to_string(count_lo) + " to " + std::to_string(count_hi)) +
        " numbers, " + std::to_string(out.size()) + " given");
  return out;
}

double Element::Number(const std::string& name, double fallback) const {
  return Numbers(name, 1, 1, {fallback})[0];
}

int Element::Integer(const std::string& name, int fallback) const {
  const double x = Number(name, fallback);
  if (x != std::floor(x) || std::abs(x) > 1e9)
    throw std::invalid_argument(Get(name)->where.At(name) + "'" +
                                Get(name)->value + "' is not an integer");
  return static_cast<int>(x);
}

int Element::Choice(const std::string& name,
                    const std::vector<std::string>& choices,
                    int fallback) const {
  const Attr* a = Get(name);
  if (!a) return fallback;
  for (size_t i = 0; i < choices.size(); ++i)
    if (a->value == choices[i]) return static_cast<int>(i);
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
  throw std::invalid_argument(a->where.At(name + "='" + a->value + "'") +
                              "unknown value; valid: " + list);
}

int Element::Bool(const std::string& name, int fallback, bool auto_ok) const {
  const int i =
      Choice(name,
             auto_ok ? std::vector<std::string>{"false", "true", "auto"}
                     : std::vector<std::string>{"false", "true"},
             fallback == -1 ? 2 : fallback);
  return i == 2 ? -1 : i;
}

// ---- files and includes

Reader::Reader(const std::string& xml, const std::string& origin, Notes* notes)
    : notes_(notes) {
  dir_ = std::filesystem::path(origin).parent_path().string();
  classes_.push_back({"main", {}});
  const tinyxml2::XMLElement* root = Load(xml, origin, -1, nullptr);
  if (std::string(root->Name()) != "mujoco")
    throw std::invalid_argument(
        origin + ":" + std::to_string(root->GetLineNum()) +
        ": the root element is <" + root->Name() +
        ">, not <mujoco>: not an MJCF file" +
        (std::string(root->Name()) == "robot"
             ? " (it looks like URDF: use build/problems/urdf)"
             : ""));
  root_ = {root, &loaded_[0]->file};
  CheckAttributes(root_, "mujoco");
}

const tinyxml2::XMLElement* Reader::Load(const std::string& text,
                                         const std::string& file,
                                         int parent,
                                         const tinyxml2::XMLElement* include) {
  mb::internal::CheckXmlText(text, file, "MJCF");
  auto l = std::make_unique<Loaded>();
  l->doc = std::make_unique<tinyxml2::XMLDocument>();
  l->file = file;
  l->parent = parent;
  l->include = include;
  if (l->doc->Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS)
    throw std::invalid_argument(
        file + ":" + std::to_string(l->doc->ErrorLineNum()) +
        ": malformed XML: " + l->doc->ErrorStr() +
        "; fix the XML (every element closed, attribute values quoted)");
  const tinyxml2::XMLElement* root = l->doc->RootElement();
  if (!root) throw std::invalid_argument(file + ": no root element");
  loaded_.push_back(std::move(l));
  return root;
}

int Reader::LoadedIndex(const std::string* file) const {
  for (size_t i = 0; i < loaded_.size(); ++i)
    if (&loaded_[i]->file == file) return static_cast<int>(i);
  return -1;
}

std::vector<Node> Reader::Children(const Node& n) {
  std::vector<Node> out;
  for (const tinyxml2::XMLElement* c = n.e->FirstChildElement(); c;
       c = c->NextSiblingElement()) {
    if (std::string(c->Name()) != "include") {
      out.push_back({c, n.file});
      continue;
    }
    const Node inc{c, n.file};
    CheckAttributes(inc, "include");
    const Where at = inc.where();
    if (!c->NoChildren())
      throw std::invalid_argument(at.At() + "an <include> has no content");
    const char* name = c->Attribute("file");
    if (!name) throw std::invalid_argument(at.At() + "needs file='...'");
    namespace fs = std::filesystem;
    const fs::path p =
        fs::path(name).is_absolute() ? fs::path(name) : fs::path(dir_) / name;
    const std::string file = p.lexically_normal().string();
    std::error_code ec;
    const fs::path canon = fs::weakly_canonical(p, ec);
    // The chain of files that includes this one, outermost last.
    std::vector<std::string> chain;
    for (int k = LoadedIndex(n.file); k >= 0; k = loaded_[k]->parent)
      chain.push_back(loaded_[k]->file);
    for (const auto& l : loaded_) {
      if (fs::weakly_canonical(l->file, ec) != canon) continue;
      const bool loop =
          std::find(chain.begin(), chain.end(), l->file) != chain.end();
      std::string path;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it)
        path += *it + " includes ";
      throw std::invalid_argument(
          at.At("file='" + std::string(name) + "'") +
          (loop ? "an include loop: " + path + file +
                      "; remove the <include> that closes the loop"
                : "'" + file +
                      "' is already included (MuJoCo includes a file once); "
                      "remove the second <include>"));
    }
    // A file that cannot be read or parsed is named with the <include>
    // that asked for it (the message named only the missing file).
    const tinyxml2::XMLElement* root = nullptr;
    try {
      const std::string text = mb::internal::ReadModelFile(file, "MJCF", "");
      root = Load(text, file, LoadedIndex(n.file), c);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(
          at.At("file='" + std::string(name) + "'") + "the included " +
          e.what() + "; a relative path is taken from the main file's folder" +
          (dir_.empty() ? std::string() : " (" + dir_ + ")"));
    }
    for (const Node& child : Children(Node{root, &loaded_.back()->file}))
      out.push_back(child);
  }
  return out;
}

// ---- default classes

int Reader::Class(const std::string& name, const Where& at) const {
  for (size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i].name == name) return static_cast<int>(i);
  std::string known;
  for (const auto& c : classes_) known += (known.empty() ? "" : ", ") + c.name;
  throw std::invalid_argument(
      at.At("class='" + name + "'") +
      "no default class of that name; defined: " + known);
}

namespace {

// The default kind an element reads its class attributes from: every
// actuator shares one (MuJoCo's mjCDef::actuator), equalities one.
std::string KindOf(const std::string& tag) {
  static const std::set<std::string> actuators = {
      "general", "motor",    "position", "velocity", "intvelocity",
      "damper",  "cylinder", "muscle",   "adhesion"};
  if (actuators.count(tag)) return "actuator";
  return tag;
}

}  // namespace

void Reader::ReadDefault(const Node& n, int parent) {
  CheckAttributes(n, "default");
  const Where at = n.where();
  const char* cls = n.e->Attribute("class");
  int self = 0;
  if (parent < 0) {
    if (cls && std::string(cls) != "main")
      throw std::invalid_argument(at.At() +
                                  "the top-level <default> is class 'main'");
  } else {
    if (!cls || !*cls)
      throw std::invalid_argument(at.At() +
                                  "a nested <default> needs class='...'");
    for (const auto& c : classes_)
      if (c.name == cls)
        throw std::invalid_argument(at.At("class='" + std::string(cls) + "'") +
                                    "a default class of that name exists");
    // A copy of the parent as it is now (MuJoCo's mjCModel::AddDef).
    DefaultClass d = classes_[static_cast<size_t>(parent)];
    d.name = cls;
    classes_.push_back(std::move(d));
    self = static_cast<int>(classes_.size()) - 1;
  }
  // The class's own elements first, then the nested classes.
  const std::vector<Node> children = Children(n);
  for (const Node& c : children) {
    const std::string tag = c.tag();
    if (tag == "default") continue;
    static const std::set<std::string> kDefaultable = {
        "mesh",        "material", "joint",    "geom",     "site",
        "camera",      "light",    "pair",     "equality", "tendon",
        "general",     "motor",    "position", "velocity", "damper",
        "intvelocity", "cylinder", "muscle",   "adhesion"};
    if (!kDefaultable.count(tag))
      throw std::invalid_argument(c.where().At() +
                                  "not an element of <default> in MJCF 2.2.2");
    CheckAttributes(c, tag);
    Attrs& attrs = classes_[static_cast<size_t>(self)].kinds[KindOf(tag)];
    for (const tinyxml2::XMLAttribute* a = c.e->FirstAttribute(); a;
         a = a->Next())
      attrs[a->Name()] = {a->Value(), c.where(), a->Name()};
  }
  for (const Node& c : children)
    if (c.tag() == "default") ReadDefault(c, self);
}

Element Reader::Resolve(const Node& n,
                        const std::string& kind,
                        int def,
                        const std::string& tag) {
  CheckAttributes(n, tag.empty() ? n.tag() : tag);
  if (const char* cls = n.e->Attribute("class")) def = Class(cls, n.where());
  Attrs attrs;
  const auto& kinds = classes_[static_cast<size_t>(def)].kinds;
  if (const auto it = kinds.find(KindOf(kind)); it != kinds.end())
    attrs = it->second;
  // The element's own orientation replaces its class's.
  static const char* const kOrientation[] = {"quat", "axisangle", "xyaxes",
                                             "zaxis", "euler"};
  for (const char* o : kOrientation)
    if (n.e->Attribute(o))
      for (const char* drop : kOrientation) attrs.erase(drop);
  for (const tinyxml2::XMLAttribute* a = n.e->FirstAttribute(); a;
       a = a->Next())
    attrs[a->Name()] = {a->Value(), n.where(), a->Name()};
  return Element(n, std::move(attrs));
}

void Reader::CheckAttributes(const Node& n, const std::string& tag) const {
  const std::set<std::string>* allowed = AttributesOf(tag);
  if (!allowed) return;
  for (const tinyxml2::XMLAttribute* a = n.e->FirstAttribute(); a;
       a = a->Next()) {
    if (allowed->count(a->Name())) continue;
    std::string list;
    for (const std::string& s : *allowed) list += (list.empty() ? "" : " ") + s;
    throw std::invalid_argument(n.where().At() + "unknown attribute '" +
                                a->Name() + "' (MJCF 2.2.2's <" + tag +
                                "> takes: " + list + ")");
  }
}

}  // namespace daedalus::mjcf::internal
