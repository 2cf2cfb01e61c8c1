// The MJCF reader's plumbing (mjcf_parse.cpp, mjcf_elements.cpp): the
// loaded files with their <include>s, the default classes, and each
// element's attributes merged with its class's, every value keeping the
// file and line it came from.
#pragma once

#include <tinyxml2.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mjcf_internal.hpp"

namespace daedalus::mjcf::internal {

/// An attribute's text and where it was written (the element itself or
/// the default class that gave it).
struct Attr {
  std::string value;
  Where where;
  std::string name;
};
using Attrs = std::map<std::string, Attr>;

/// An element of one of the loaded files.
struct Node {
  const tinyxml2::XMLElement* e = nullptr;
  const std::string* file = nullptr;
  std::string tag() const { return e->Name(); }
  Where where() const;
};

/// An element's attributes after its default class: lookups that parse
/// the values and name the attribute, file and line when they are wrong.
class Element {
 public:
  Element(const Node& node, Attrs attrs)
      : node_(node), at_(node.where()), attrs_(std::move(attrs)) {}
  const Where& at() const { return at_; }
  const Node& node() const { return node_; }
  bool Has(const std::string& name) const { return attrs_.count(name) != 0; }
  /// The attribute as given, nullptr when absent.
  const Attr* Get(const std::string& name) const;
  std::string Text(const std::string& name, const std::string& fallback) const;
  /// `count_lo` to `count_hi` finite numbers; `fallback` when absent.
  std::vector<double> Numbers(const std::string& name,
                              size_t count_lo,
                              size_t count_hi,
                              std::vector<double> fallback = {}) const;
  double Number(const std::string& name, double fallback) const;
  int Integer(const std::string& name, int fallback) const;
  /// true/false (and MuJoCo's "auto": -1 when allowed).
  int Bool(const std::string& name, int fallback, bool auto_ok = false) const;
  /// One of `choices` (its index); `fallback` when absent.
  int Choice(const std::string& name,
             const std::vector<std::string>& choices,
             int fallback) const;
  /// The element's own attributes (not its class's).
  bool OwnHas(const std::string& name) const;

 private:
  Node node_;
  Where at_;
  Attrs attrs_;
};

/// A default class (MuJoCo's mjCDef): per element kind ("joint", "geom",
/// "actuator", "equality", ...) the attributes it sets.
struct DefaultClass {
  std::string name;
  std::map<std::string, Attrs> kinds;
};

/// The files (the model and its includes) and the default classes.
class Reader {
 public:
  Reader(const std::string& xml, const std::string& origin, Notes* notes);
  const Node& root() const { return root_; }
  /// The child elements of `n`, each <include> replaced by the elements of
  /// its file (read from the main file's folder, as MuJoCo does); a file
  /// included twice, or including itself, is refused naming the chain.
  std::vector<Node> Children(const Node& n);
  /// Reads a <default> section into class `parent` (-1: the top level,
  /// class "main").
  void ReadDefault(const Node& n, int parent);
  /// Index of class `name`. @throws naming `at` when there is none.
  int Class(const std::string& name, const Where& at) const;
  /// The element's attributes after class `def` for element kind `kind`,
  /// checked against MuJoCo 2.2.2's attribute list for `tag`.
  Element Resolve(const Node& n,
                  const std::string& kind,
                  int def,
                  const std::string& tag = "");
  /// Refuses attributes of `n` that MuJoCo 2.2.2's <tag> does not have.
  void CheckAttributes(const Node& n, const std::string& tag) const;
  Notes* notes() { return notes_; }

 private:
  struct Loaded {
    std::unique_ptr<tinyxml2::XMLDocument> doc;
    std::string file;
    int parent = -1;  // the loaded file that included it
    const tinyxml2::XMLElement* include = nullptr;
  };
  const tinyxml2::XMLElement* Load(const std::string& text,
                                   const std::string& file,
                                   int parent,
                                   const tinyxml2::XMLElement* include);
  int LoadedIndex(const std::string* file) const;
  std::vector<std::unique_ptr<Loaded>> loaded_;
  std::string dir_;
  Node root_;
  std::vector<DefaultClass> classes_;
  Notes* notes_;
};

/// MuJoCo 2.2.2's attributes of `tag` (an element or default kind);
/// nullptr for a tag whose attributes are not checked.
const std::set<std::string>* AttributesOf(const std::string& tag);

// ---- mjcf_elements.cpp: one element each, into the Document.
struct ElementContext {
  Reader* reader;
  Document* doc;
  Notes* notes;
  bool skip_unsupported_actuators = false;
};
/// The orientation an element gives (quat, axisangle, xyaxes, zaxis or
/// euler, at most one; identity when none).
Eigen::Quaterniond ReadOrientation(const Element& e, const Compiler& c);
Joint ReadJoint(const Element& e, const Compiler& c, bool free_joint);
Geom ReadGeom(const Element& e, const Document& doc, Notes* notes);
Inertial ReadInertial(const Element& e, const Compiler& c);
void ReadActuator(const Element& e, const ElementContext& ctx);
void ReadEquality(const Element& e, const ElementContext& ctx);
void ReadOption(const Node& n, ElementContext* ctx);
void ReadCompiler(const Node& n, ElementContext* ctx);

}  // namespace daedalus::mjcf::internal
