#include "cli/run_files.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace daedalus::internal {
namespace {

std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "the stop flag is stored from a signal handler");

struct sigaction g_previous_int, g_previous_term, g_previous_hup;
int g_depth = 0;  // StopOnSignals objects alive (the main thread's)

extern "C" void StoreSignal(int signal_number) {
  g_stop.store(signal_number, std::memory_order_relaxed);
}

}  // namespace

RunFiles::~RunFiles() {
  if (committed_) return;
  std::error_code ec;  // best effort: nothing to report from a destructor
  std::filesystem::remove(csv_partial(), ec);
  std::filesystem::remove(json_partial(), ec);
  for (const auto& side : sides_)
    std::filesystem::remove(side + ".partial", ec);
}

std::string RunFiles::AddSide(const std::string& suffix) {
  sides_.push_back(base_ + "." + suffix);
  return sides_.back() + ".partial";
}

std::string RunFiles::MarkSuperseded() const {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool has_json = fs::is_regular_file(json(), ec);
  if (!has_json && !fs::is_regular_file(csv(), ec)) return "";
  nlohmann::json j;
  if (has_json) {
    std::ifstream in(json());
    j = nlohmann::json::parse(in, nullptr, false);
  }
  if (!j.is_object())  // no JSON, or one that is not a run's summary
    j = {{"problem", fs::path(base_).filename().string()}};
  j["superseded_status"] = j.value("status", has_json ? "unknown" : "none");
  j["status"] = "superseded";
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  if (localtime_r(&now, &tm) != nullptr)
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  j["superseded_by"] =
      "a run started at " + std::string(when) + " (process " +
      std::to_string(static_cast<long>(getpid())) + "), writing " +
      fs::path(csv_partial()).filename().string() +
      " until it ends; if it is no longer running it was killed, and " +
      fs::path(csv()).filename().string() + " is an earlier run's";
  const std::string mark = json() + ".superseded";
  {
    std::ofstream out(mark);
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    if (!out) {
      fs::remove(mark, ec);
      return "cannot write '" + mark + "'";
    }
  }
  fs::rename(mark, json(), ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(mark, ignored);
    return "cannot replace '" + json() + "': " + ec.message();
  }
  return "";
}

std::string RunFiles::Commit() {
  namespace fs = std::filesystem;
  committed_ = true;
  std::error_code ec;
  fs::remove(json(), ec);
  if (ec) return "cannot remove the previous '" + json() + "': " + ec.message();
  if (fs::exists(csv_partial(), ec)) {
    fs::rename(csv_partial(), csv(), ec);
    if (ec) return "cannot rename '" + csv_partial() + "': " + ec.message();
  } else {
    fs::remove(csv(), ec);
    if (ec)
      return "cannot remove the previous '" + csv() + "': " + ec.message();
  }
  for (const auto& side : sides_) {  // as the CSV
    const std::string partial = side + ".partial";
    if (fs::exists(partial, ec)) {
      fs::rename(partial, side, ec);
      if (ec) return "cannot rename '" + partial + "': " + ec.message();
    } else {
      fs::remove(side, ec);
      if (ec)
        return "cannot remove the previous '" + side + "': " + ec.message();
    }
  }
  fs::rename(json_partial(), json(), ec);
  if (ec) return "cannot rename '" + json_partial() + "': " + ec.message();
  return "";
}

std::string OutputBase(const std::string& dir, const std::string& name) {
  if (name.empty() || name == "." || name == ".." ||
      name.find('/') != std::string::npos ||
      name.find('\\') != std::string::npos)
    throw std::invalid_argument(
        "the model name '" + name +
        "' is not a file name: the files of a run would not be in the "
        "output folder '" +
        dir +
        "'; name the model with letters, digits, "
        "'_', '-' or '.'");
  return (std::filesystem::path(dir) / name).string();
}

StopOnSignals::StopOnSignals() {
  // Nested (the command line's handlers around a phase that installs its
  // own): the outermost owns the handlers and the flag, so a signal that
  // arrived before the inner phase is not forgotten.
  if (g_depth++ > 0) return;
  g_stop.store(0);
  struct sigaction action {};
  action.sa_handler = StoreSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second signal: the default action
  for (auto [sig, previous] : {std::pair{SIGINT, &g_previous_int},
                               std::pair{SIGTERM, &g_previous_term},
                               std::pair{SIGHUP, &g_previous_hup}}) {
    sigaction(sig, nullptr, previous);
    if (previous->sa_handler != SIG_IGN) sigaction(sig, &action, nullptr);
  }
}

StopOnSignals::~StopOnSignals() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGHUP, &g_previous_hup, nullptr);
}

const std::atomic<int>* StopOnSignals::flag() { return &g_stop; }

std::string SignalName(int signal_number) {
  if (signal_number == SIGINT) return "SIGINT";
  if (signal_number == SIGTERM) return "SIGTERM";
  if (signal_number == SIGHUP) return "SIGHUP";
  return "signal " + std::to_string(signal_number);
}

}  // namespace daedalus::internal
