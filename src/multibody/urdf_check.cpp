// The URDF importer's first pass (urdf_check.hpp).
#include "urdf_check.hpp"

#include <tinyxml2.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "import_guard.hpp"

namespace daedalus::urdf::internal {

namespace {

using tinyxml2::XMLElement;

class Checker {
 public:
  explicit Checker(std::string origin) : file_("URDF file '" + origin + "'") {}

  std::string At(const XMLElement* e) const {
    return file_ + ", line " + std::to_string(e->GetLineNum()) + ": <" +
           e->Name() + ">";
  }

  // `count` finite numbers in attribute `attr` (when `required`, present).
  std::vector<double> Numbers(const XMLElement* e,
                              const char* attr,
                              size_t count,
                              bool required) const {
    const char* text = e->Attribute(attr);
    if (!text) {
      if (required)
        throw std::invalid_argument(At(e) + " has no " + attr + "; give it " +
                                    std::string(attr) + "=\"...\"");
      return {};
    }
    std::vector<double> out;
    std::istringstream in(text);
    std::string word;
    while (in >> word) {
      char* end = nullptr;
      const double x = std::strtod(word.c_str(), &end);
      const std::string where =
          At(e) + " " + attr + "=\"" + std::string(text) + "\": ";
      if (end == word.c_str() || *end != '\0')
        throw std::invalid_argument(where + "'" + word +
                                    "' is not a number; write decimal "
                                    "numbers");
      if (!std::isfinite(x))
        throw std::invalid_argument(where + "'" + word +
                                    "' is not finite; give a finite number");
      out.push_back(x);
    }
    if (out.size() != count)
      throw std::invalid_argument(
          At(e) + " " + attr + "=\"" + std::string(text) + "\": takes " +
          std::to_string(count) + " number" + (count > 1 ? "s" : "") + ", " +
          std::to_string(out.size()) + " given");
    return out;
  }

  std::string Name(const XMLElement* e, const char* what) const {
    const char* n = e->Attribute("name");
    mb::internal::CheckModelName(
        n ? n : "", what, file_ + ", line " + std::to_string(e->GetLineNum()));
    return n;
  }

  void Note(const XMLElement* e,
            const std::string& parent,
            const std::string& why) {
    const std::string key = parent + "/" + e->Name();
    auto [it, fresh] = notes_.try_emplace(key);
    ++it->second.count;
    if (!fresh) return;
    it->second.text = "line " + std::to_string(e->GetLineNum()) + ": <" +
                      e->Name() + "> in <" + parent + ">: " + why;
    order_.push_back(key);
  }

  std::vector<std::string> Notes() const {
    std::vector<std::string> out;
    for (const std::string& k : order_) {
      const auto& n = notes_.at(k);
      out.push_back(file_ + ", " + n.text +
                    (n.count > 1
                         ? " (and " + std::to_string(n.count - 1) + " more)"
                         : std::string()));
    }
    return out;
  }

  // Children of `e`: the known ones checked by `f`, the others noted.
  template <class F>
  void Children(const XMLElement* e, const std::set<std::string>& known, F f) {
    for (const XMLElement* c = e->FirstChildElement(); c;
         c = c->NextSiblingElement()) {
      if (known.count(c->Name())) {
        f(c);
      } else {
        Note(c, e->Name(), "not a URDF element here; ignored");
      }
    }
  }

  void Origin(const XMLElement* e) const {
    Numbers(e, "xyz", 3, false);
    Numbers(e, "rpy", 3, false);
  }

  void Geometry(const XMLElement* g) {
    int shapes = 0;
    Children(
        g, {"box", "cylinder", "sphere", "mesh"}, [&](const XMLElement* s) {
          ++shapes;
          const std::string t = s->Name();
          std::vector<double> v;
          if (t == "box") v = Numbers(s, "size", 3, true);
          if (t == "cylinder") {
            v = Numbers(s, "radius", 1, true);
            v.push_back(Numbers(s, "length", 1, true)[0]);
          }
          if (t == "sphere") v = Numbers(s, "radius", 1, true);
          if (t == "mesh") {
            if (!s->Attribute("filename"))
              throw std::invalid_argument(At(s) +
                                          " has no filename; give it "
                                          "filename=\"...\"");
            Numbers(s, "scale", 3, false);
          }
          for (double x : v)
            if (!(x > 0.0))
              throw std::invalid_argument(
                  At(s) + ": sizes must be positive, got " + std::to_string(x));
        });
    if (shapes != 1)
      throw std::invalid_argument(At(g) +
                                  " needs exactly one shape (box, cylinder, "
                                  "sphere or mesh), has " +
                                  std::to_string(shapes));
  }

  void Material(const XMLElement* m) {
    Children(m, {"color", "texture"}, [&](const XMLElement* c) {
      if (std::string(c->Name()) == "color") {
        for (double x : Numbers(c, "rgba", 4, true))
          if (x < 0.0 || x > 1.0)
            throw std::invalid_argument(At(c) + " rgba entries lie in [0, 1]");
      } else {
        Note(c, "material", "textures are not used");
      }
    });
  }

  void Link(const XMLElement* l) {
    Children(l, {"inertial", "visual", "collision"}, [&](const XMLElement* c) {
      const std::string t = c->Name();
      if (t == "inertial") {
        bool mass = false, inertia = false;
        Children(c, {"origin", "mass", "inertia"}, [&](const XMLElement* x) {
          const std::string n = x->Name();
          if (n == "origin") Origin(x);
          if (n == "mass") {
            mass = true;
            Numbers(x, "value", 1, true);
          }
          if (n == "inertia") {
            inertia = true;
            for (const char* a : {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"})
              if (!x->Attribute(a))
                throw std::invalid_argument(
                    At(x) + " has no " + a +
                    ": URDF needs all six of ixx, ixy, ixz, iyy, iyz, izz "
                    "(write 0 for a product of inertia that vanishes)");
              else
                Numbers(x, a, 1, true);
          }
        });
        if (!mass || !inertia)
          throw std::invalid_argument(
              At(c) +
              " needs <mass value> and <inertia> (or leave out "
              "<inertial> for a massless link)");
        return;
      }
      Children(c, {"origin", "geometry", "material"}, [&](const XMLElement* x) {
        const std::string n = x->Name();
        if (n == "origin") Origin(x);
        if (n == "geometry") Geometry(x);
        if (n == "material") {
          if (t == "collision")
            Note(x, t, "a collision shape has no material; ignored");
          Material(x);
        }
      });
      if (!c->FirstChildElement("geometry"))
        throw std::invalid_argument(At(c) + " needs a <geometry>");
    });
  }

  void Joint(const XMLElement* j) {
    static const std::set<std::string> kTypes = {
        "revolute", "continuous", "prismatic", "fixed", "floating", "planar"};
    const char* type = j->Attribute("type");
    if (!type || !kTypes.count(type))
      throw std::invalid_argument(
          At(j) + " '" + j->Attribute("name") + "': type \"" +
          (type ? type : "") +
          "\" is not a URDF joint type (revolute, continuous, prismatic, "
          "fixed, floating, planar)");
    Children(j,
             {"origin", "parent", "child", "axis", "calibration", "dynamics",
              "limit", "mimic", "safety_controller"},
             [&](const XMLElement* c) {
               const std::string n = c->Name();
               if (n == "origin") Origin(c);
               if (n == "axis") Numbers(c, "xyz", 3, false);
               if (n == "dynamics") {
                 Numbers(c, "damping", 1, false);
                 Numbers(c, "friction", 1, false);
               }
               if (n == "limit")
                 for (const char* a : {"lower", "upper", "effort", "velocity"})
                   Numbers(c, a, 1, false);
               if (n == "mimic") {
                 if (!c->Attribute("joint"))
                   throw std::invalid_argument(At(c) +
                                               " names no joint; give it "
                                               "joint=\"...\"");
                 Numbers(c, "multiplier", 1, false);
                 Numbers(c, "offset", 1, false);
               }
               if (n == "parent" || n == "child")
                 if (!c->Attribute("link"))
                   throw std::invalid_argument(At(c) +
                                               " names no link; give it "
                                               "link=\"...\"");
               if (n == "calibration" || n == "safety_controller")
                 Note(c, "joint", "not used (no effect on the motion)");
             });
    for (const char* pc : {"parent", "child"})
      if (!j->FirstChildElement(pc))
        throw std::invalid_argument(At(j) + " '" + j->Attribute("name") +
                                    "' has no <" + pc + " link=\"...\">");
  }

  const std::string& file() const { return file_; }

 private:
  struct Entry {
    std::string text;
    int count = 0;
  };
  std::string file_;
  std::map<std::string, Entry> notes_;
  std::vector<std::string> order_;
};

}  // namespace

UrdfCheck CheckUrdf(const std::string& xml, const std::string& origin) {
  mb::internal::CheckXmlText(xml, origin, "URDF");
  Checker ck(origin);
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS)
    throw std::invalid_argument(ck.file() + ", line " +
                                std::to_string(doc.ErrorLineNum()) +
                                ": malformed XML: " + doc.ErrorStr() +
                                "; fix the XML (every element closed, "
                                "attribute values quoted)");
  const XMLElement* robot = doc.RootElement();
  if (!robot || std::string(robot->Name()) != "robot")
    throw std::invalid_argument(
        ck.file() + ": the root element is <" + (robot ? robot->Name() : "") +
        ">, not <robot>: not a URDF file" +
        (robot && std::string(robot->Name()) == "mujoco"
             ? " (it looks like MJCF: use build/problems/mjcf)"
             : ""));
  std::map<std::string, int> links;                 // name -> line
  std::map<std::string, const XMLElement*> joints;  // name -> element
  std::map<std::string, std::string> parent_joint;  // child link -> joint
  ck.Children(
      robot, {"link", "joint", "material", "transmission", "gazebo"},
      [&](const XMLElement* e) {
        const std::string t = e->Name();
        if (t == "link") {
          const std::string name = ck.Name(e, "link");
          const auto [it, fresh] = links.emplace(name, e->GetLineNum());
          if (!fresh)
            throw std::invalid_argument(ck.At(e) + ": link '" + name +
                                        "' is declared twice (lines " +
                                        std::to_string(it->second) + " and " +
                                        std::to_string(e->GetLineNum()) + ")");
          ck.Link(e);
        } else if (t == "joint") {
          const std::string name = ck.Name(e, "joint");
          if (!joints.emplace(name, e).second)
            throw std::invalid_argument(
                ck.At(e) + ": joint '" + name + "' is declared twice (lines " +
                std::to_string(joints[name]->GetLineNum()) + " and " +
                std::to_string(e->GetLineNum()) + ")");
          ck.Joint(e);
        } else if (t == "material") {
          ck.Material(e);
        } else if (t == "transmission") {
          ck.Note(e, "robot",
                  "transmissions are not read: every movable joint is an "
                  "input channel tau_<joint> instead");
        } else {
          ck.Note(e, "robot", "simulator extensions are not read");
        }
      });
  // The kinematic tree: declared links, one parent joint per link, no
  // cycle.
  for (const auto& [name, e] : joints) {
    const char* parent = e->FirstChildElement("parent")->Attribute("link");
    const char* child = e->FirstChildElement("child")->Attribute("link");
    for (const char* l : {parent, child})
      if (!links.count(l))
        throw std::invalid_argument(ck.At(e) + " '" + name + "': link '" + l +
                                    "' is not declared; declare <link name=\"" +
                                    l + "\">");
    if (std::string(parent) == child)
      throw std::invalid_argument(ck.At(e) + " '" + name +
                                  "': its parent and child are the same link");
    const auto [it, fresh] = parent_joint.emplace(child, name);
    if (!fresh)
      throw std::invalid_argument(
          ck.file() + ": link '" + child + "' is the child of joints '" +
          it->second + "' (line " +
          std::to_string(joints[it->second]->GetLineNum()) + ") and '" + name +
          "' (line " + std::to_string(e->GetLineNum()) +
          "): a URDF is a tree, each link has one parent joint (a closed "
          "chain needs a constraint, declared in C++)");
  }
  for (const auto& [link, line] : links) {
    (void)line;
    std::vector<std::string> path;
    std::set<std::string> seen = {link};
    for (std::string at = link; parent_joint.count(at);) {
      const std::string j = parent_joint[at];
      path.push_back(j);
      at = joints[j]->FirstChildElement("parent")->Attribute("link");
      if (seen.insert(at).second) continue;
      std::string cycle;
      for (const std::string& p : path)
        cycle += (cycle.empty() ? "" : " -> ") + p + " (line " +
                 std::to_string(joints[p]->GetLineNum()) + ")";
      throw std::invalid_argument(
          ck.file() + ": the joints " + cycle + " form a cycle through link '" +
          at +
          "': a URDF is a tree with one root link; remove a joint of the "
          "cycle (a closed chain needs a constraint, declared in C++)");
    }
  }
  return {ck.Notes()};
}

}  // namespace daedalus::urdf::internal
