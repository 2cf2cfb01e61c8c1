// The URDF importer's first pass (include/daedalus/urdf.hpp): the text
// checked (import_guard.hpp) and read by tinyxml2 before urdfdom sees it,
// so that what urdfdom would crash on, hang on, misreport or silently
// ignore is named with its line: nesting depth and size, entities, names,
// values that are not finite numbers, missing inertia attributes, a link
// with two parents, a joint cycle, and the elements URDF does not know.
#pragma once

#include <string>
#include <vector>

namespace daedalus::urdf::internal {

/// What the first pass found that the import keeps: the elements it did
/// not read, one line each ("line 12: <gazebo> (and 3 more): ...").
struct UrdfCheck {
  std::vector<std::string> notes;
};

/// Checks the URDF document `xml` named `origin`.
/// @throws std::invalid_argument naming the file, the line, the element
/// and the fix.
UrdfCheck CheckUrdf(const std::string& xml, const std::string& origin);

}  // namespace daedalus::urdf::internal
