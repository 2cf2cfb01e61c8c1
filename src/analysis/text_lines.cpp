// ReadTextLines (text_lines.hpp).
#include "analysis/text_lines.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "eval/eval_stop.hpp"

namespace daedalus::internal {

std::vector<std::string> ReadTextLines(const std::string& path,
                                       const std::string& what) {
  const std::string file = what + " '" + path + "'";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(file +
                                " is a folder; give the path of a CSV file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::invalid_argument("cannot read " + file +
                                ": it does not exist or is not readable");
  // One read into a string of the file's size: a character-by-character
  // copy took seconds for a motion of 600 000 samples, while a signal
  // waited for it (fuzz_edges.py --surface signals).
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  }
  auto starts = [&](const char* bom, size_t n) {
    return text.size() >= n && text.compare(0, n, bom, n) == 0;
  };
  const bool utf32 = starts("\xFF\xFE\0\0", 4) || starts("\0\0\xFE\xFF", 4);
  const bool utf16 = !utf32 && (starts("\xFF\xFE", 2) || starts("\xFE\xFF", 2));
  if (utf16 || utf32)
    throw std::invalid_argument(
        file + " is " + (utf16 ? "UTF-16" : "UTF-32") +
        " text (its byte-order mark); save it as UTF-8 or ASCII (e.g. "
        "iconv -f " +
        (utf16 ? "UTF-16" : "UTF-32") + " -t UTF-8)");
  size_t start = starts("\xEF\xBB\xBF", 3) ? 3 : 0;  // UTF-8 mark: dropped
  std::vector<std::string> lines;
  while (start < text.size()) {
    size_t end = text.find_first_of("\r\n", start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t nul = line.find('\0');
    if (nul != std::string::npos) {
      // NUL bytes between characters: UTF-16 without its mark.
      const bool wide = line.size() > 2 &&
                        (line[1] == '\0' || line[0] == '\0') &&
                        line.find_first_not_of('\0') != std::string::npos;
      throw std::invalid_argument(
          file + ", line " + std::to_string(lines.size() + 1) + ", byte " +
          std::to_string(nul + 1) + ": a NUL byte; " +
          (wide ? "the file looks like UTF-16 text without a byte-order "
                  "mark: save it as UTF-8 or ASCII"
                : "this is not a text file (a binary file or a damaged "
                  "one): give a CSV file"));
    }
    lines.push_back(line);
    // SIGINT, SIGTERM, SIGHUP while a long file is read (eval_stop.hpp).
    if ((lines.size() & 0x3fff) == 0) ThrowIfEvalStopped();
    if (end < text.size() && text[end] == '\r' && end + 1 < text.size() &&
        text[end + 1] == '\n')
      ++end;  // CRLF
    start = end + 1;
  }
  return lines;
}

}  // namespace daedalus::internal
