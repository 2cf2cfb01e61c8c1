// The MPI transport of an ensemble (cli/ensemble.hpp): the shared module
// libdaedalus_mpi.so, built when the build found MPI, which RunEnsemble
// loads (model/dynamic_module.hpp) only when an MPI launcher started the
// process and the command line asks for an ensemble; other runs never map
// the MPI libraries (docs/performance.md). It uses nothing of libdaedalus.
//
// Scheduling is dynamic: rank 0 hands out one member at a time to the rank
// that asks (a worker asks when it starts and with each result), so that
// members whose run times differ by 100x still keep every rank busy. Rank
// 0's main thread only serves requests and gathers; while the job has at
// most kRootWorksUpTo ranks, a second thread of rank 0 runs members too
// (at -np 2 a pure master would leave half the machine idle); beyond that
// rank 0 only serves, so that no request waits behind a running member.
#include <mpi.h>

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/ensemble.hpp"

namespace daedalus::internal {
namespace {

constexpr int kTagReady = 1;   // worker -> 0: give me a member
constexpr int kTagResult = 2;  // worker -> 0: a result row; give me another
constexpr int kTagTask = 3;    // 0 -> worker: a member
constexpr int kTagStop = 4;    // 0 -> worker: no more members
constexpr int kRootWorksUpTo = 4;

// A rank that waits polls briefly, then naps between polls, so that it
// leaves its core to the ranks that compute (OpenMPI's blocking calls
// spin).
void Nap() { std::this_thread::sleep_for(std::chrono::microseconds(50)); }

MPI_Status WaitMessage(int source) {
  MPI_Status st;
  int flag = 0;
  for (int polls = 0;; ++polls) {
    MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (flag) return st;
    if (polls > 100) Nap();
  }
}

std::string Receive(const MPI_Status& probed) {
  int n = 0;
  MPI_Get_count(&probed, MPI_CHAR, &n);
  std::string s(static_cast<size_t>(n), '\0');
  MPI_Recv(s.data(), n, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG,
           MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return s;
}

void Send(const std::string& s, int dest, int tag) {
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_CHAR, dest, tag,
           MPI_COMM_WORLD);
}

class MpiTransport : public EnsembleTransport {
 public:
  MpiTransport(int rank, int size, bool threads)
      : rank_(rank), size_(size), threads_(threads) {}
  ~MpiTransport() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  int Broadcast(int value) override {
    MPI_Request req;
    MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    int flag = 0;
    for (int polls = 0;; ++polls) {
      MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      if (flag) return value;
      if (polls > 100) Nap();
    }
  }

  void Run(const std::vector<std::string>& tasks,
           const std::function<std::string(const std::string&)>& work,
           const std::function<void(size_t, int)>& handed,
           const std::function<void(const std::string&)>& done,
           const std::function<bool()>& stop) override {
    if (rank_ != 0) {
      Send("", 0, kTagReady);
      while (true) {
        const MPI_Status st = WaitMessage(0);
        const std::string task = Receive(st);
        if (st.MPI_TAG == kTagStop) return;
        Send(work(task), 0, kTagResult);
      }
    }
    Serve(tasks, work, handed, done, stop);
  }

 private:
  void Serve(const std::vector<std::string>& tasks,
             const std::function<std::string(const std::string&)>& work,
             const std::function<void(size_t, int)>& handed,
             const std::function<void(const std::string&)>& done,
             const std::function<bool()>& stop) {
    // Guards next, stopping, local_started, local_results, local_finished.
    std::mutex mu;
    size_t next = 0;
    bool stopping = false;
    std::deque<size_t> local_started;  // taken by rank 0's worker thread
    std::deque<std::string> local_results;
    auto take = [&](std::string* task, size_t* k) {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping || next >= tasks.size()) return false;
      *k = next;
      *task = tasks[next++];
      return true;
    };
    const bool local = size_ <= kRootWorksUpTo;
    if (local && !threads_) {
      // No thread support from this MPI: rank 0 works between requests
      // only when it is alone.
      if (size_ == 1) {
        std::string t;
        size_t k = 0;
        while (!stop() && take(&t, &k)) {
          handed(k, 0);
          done(work(t));
        }
        return;
      }
    }
    bool local_finished = !(local && threads_);
    std::thread worker;
    if (!local_finished) {
      try {
        worker = std::thread([&] {
          std::string t;
          size_t k = 0;
          while (take(&t, &k)) {
            {
              std::lock_guard<std::mutex> lock(mu);
              local_started.push_back(k);
            }
            std::string row = work(t);
            std::lock_guard<std::mutex> lock(mu);
            local_results.push_back(std::move(row));
          }
          std::lock_guard<std::mutex> lock(mu);
          local_finished = true;
        });
      } catch (const std::exception&) {
        local_finished = true;  // no thread: rank 0 only serves
      }
    }
    int active = size_ - 1;  // workers not yet told to stop
    while (true) {
      if (stop()) {
        std::lock_guard<std::mutex> lock(mu);
        stopping = true;
      }
      std::deque<size_t> mine_started;
      std::deque<std::string> mine;
      bool mine_finished = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        mine_started.swap(local_started);
        mine.swap(local_results);
        mine_finished = local_finished;
      }
      for (size_t k : mine_started) handed(k, 0);
      for (const std::string& r : mine) done(r);
      int flag = 0;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
      if (flag) {
        const std::string msg = Receive(st);
        if (st.MPI_TAG == kTagResult) done(msg);
        std::string t;
        size_t k = 0;
        if (take(&t, &k)) {
          handed(k, st.MPI_SOURCE);
          Send(t, st.MPI_SOURCE, kTagTask);
        } else {
          Send("", st.MPI_SOURCE, kTagStop);
          --active;
        }
        continue;
      }
      if (active == 0 && mine_finished) break;
      Nap();
    }
    if (worker.joinable()) worker.join();
    // Members and results the local worker pushed after the last look.
    for (size_t k : local_started) handed(k, 0);
    for (const std::string& r : local_results) done(r);
  }

  int rank_, size_;
  bool threads_;
};

std::unique_ptr<EnsembleTransport> MakeMpiTransport(std::string* error) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    *error = "MPI_Init_thread failed";
    return nullptr;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return std::make_unique<MpiTransport>(rank, size,
                                        provided >= MPI_THREAD_FUNNELED);
}

}  // namespace
}  // namespace daedalus::internal

// The module's entry point: a started MPI transport, or null with `error`
// set (also for another interface version).
extern "C" __attribute__((visibility("default")))
daedalus::internal::EnsembleTransport*
daedalus_mpi_transport(int abi, std::string* error) {
  if (abi != daedalus::internal::kEnsembleTransportAbi) {
    *error =
        "the module libdaedalus_mpi.so belongs to another version of "
        "Daedalus; rebuild or reinstall Daedalus";
    return nullptr;
  }
  return daedalus::internal::MakeMpiTransport(error).release();
}
