#include "bench_case.hpp"

#include <algorithm>

namespace collshim::bench {

StepBuffers::~StepBuffers() { release_shared(); }

void StepBuffers::release_shared() {
#ifdef COLLSHIM_SMPI
  if (shared_) {
    SMPI_SHARED_FREE(send_data_);
    SMPI_SHARED_FREE(recv_data_);
  }
#endif
  shared_ = false;
}

void StepBuffers::allocate(long long send_bytes, long long recv_bytes, double all_ranks_bytes,
                           const CaseOptions& options) {
  // One object serves every size step: nothing of the previous step may survive (a case that fills
  // send_bytes() by its own offsets would write past a smaller step's vector).
  release_shared();
  send_.clear();
  recv_.clear();
  reference_.clear();
  send_data_ = recv_data_ = nullptr;
#ifdef COLLSHIM_SMPI
  if (all_ranks_bytes > static_cast<double>(options.verify_limit)) {
    shared_ = true;
    send_data_ = static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::max<long long>(send_bytes, 1)));
    recv_data_ = static_cast<unsigned char*>(SMPI_SHARED_MALLOC(std::max<long long>(recv_bytes, 1)));
    return;
  }
#else
  (void)all_ranks_bytes;
  (void)options;
#endif
  send_.assign(send_bytes, 0);
  recv_.assign(recv_bytes, 0);
  send_data_ = send_.data();
  recv_data_ = recv_.data();
}

const std::vector<CaseInfo>& bench_cases() {
  static const std::vector<CaseInfo> cases = {allgather_case(), allgatherv_case(), alltoallv_case(), gatherv_case(),
                                              scatterv_case(),  alltoall_case(),   allreduce_case()};
  return cases;
}

const CaseInfo* find_bench_case(Collective collective) {
  for (const CaseInfo& info : bench_cases()) {
    if (info.collective == collective) return &info;
  }
  return nullptr;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

}  // namespace collshim::bench
