// The lines of a text file that a user hands to a run (a motion CSV for
// --inverse-dynamics, an --ensemble table), read the same way everywhere:
// any line end (LF, CRLF, or the CR alone of old spreadsheets), a UTF-8
// byte-order mark dropped, and what is not UTF-8 or ASCII text refused
// with the cause and the fix instead of the confusing message a CSV
// parser would give (issue 40).
#pragma once

#include <string>
#include <vector>

namespace daedalus::internal {

/// The lines of the file `path`, without their line ends. `what` words the
/// messages ("the motion file", "--ensemble").
/// @throws std::invalid_argument for a file that cannot be read, a folder,
/// a UTF-16 or UTF-32 file (its byte-order mark, or NUL bytes between
/// characters), or a NUL byte (a binary file), naming the line.
std::vector<std::string> ReadTextLines(const std::string& path,
                                       const std::string& what);

}  // namespace daedalus::internal
