#include "algorithms/engine/schedule_engine.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <span>
#include <utility>

#include "algorithms/engine/comm_context.hpp"
#include "algorithms/engine/local_copy.hpp"

namespace collshim {

int AlgorithmState::run_phase(int /*id*/, CallLayout& /*call*/, CommContext& /*context*/) { return runs_as_modelled; }

// Completes every request, even when some fail, so that no message still lands in a user's buffer
// (or reads one) after the step, and no request is left behind. Returns MPI_SUCCESS or the error of
// the first failed message (not MPI_ERR_IN_STATUS).
int complete_requests(std::span<MPI_Request> pending, std::vector<MPI_Status>& statuses) {
  if (pending.empty()) return MPI_SUCCESS;
  if (statuses.size() < pending.size()) statuses.resize(pending.size());
  const int rc = PMPI_Waitall(static_cast<int>(pending.size()), pending.data(), statuses.data());
  if (rc == MPI_SUCCESS) return rc;
  int error = rc;
  if (rc == MPI_ERR_IN_STATUS) {
    const auto done = std::span(statuses).first(pending.size());
    const auto failed = std::ranges::find_if(done, [](const MPI_Status& status) {
      return status.MPI_ERROR != MPI_SUCCESS && status.MPI_ERROR != MPI_ERR_PENDING;
    });
    if (failed != done.end()) error = failed->MPI_ERROR;
  }
  // Waitall may return as soon as one message fails, leaving the others in flight (MPI_ERR_PENDING),
  // and the library may keep a failed request allocated. Wait for each one left, then free it.
  for (MPI_Request& request : pending) {
    if (request == MPI_REQUEST_NULL) continue;
    PMPI_Wait(&request, MPI_STATUS_IGNORE);
    if (request != MPI_REQUEST_NULL) PMPI_Request_free(&request);
  }
  return error;
}

bool test_requests(std::vector<MPI_Request>& pending, std::vector<MPI_Status>& statuses, std::vector<int>& indices,
                   int& first_error) {
  if (pending.empty()) return true;
  if (statuses.size() < pending.size()) statuses.resize(pending.size());
  if (indices.size() < pending.size()) indices.resize(pending.size());
  for (;;) {
    int completed = 0;
    const int rc =
        PMPI_Testsome(static_cast<int>(pending.size()), pending.data(), &completed, indices.data(), statuses.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {  // the library could not test: complete them
      keep_first_error(first_error, rc);
      keep_first_error(first_error, complete_requests(pending, statuses));
      pending.clear();
      return true;
    }
    if (completed == MPI_UNDEFINED) {  // every request complete (null)
      pending.clear();
      return true;
    }
    if (completed == 0) return false;
    for (int i = 0; i < completed && rc == MPI_ERR_IN_STATUS; ++i) {
      if (statuses[i].MPI_ERROR == MPI_SUCCESS) continue;
      keep_first_error(first_error, statuses[i].MPI_ERROR);
      MPI_Request& failed = pending[static_cast<std::size_t>(indices[i])];
      if (failed != MPI_REQUEST_NULL) PMPI_Request_free(&failed);
    }
  }
}

// Named (not anonymous): ScheduleRun keeps a StepRunner.
namespace step_engine {

// Derived types are limited to int lengths: longer byte runs are split into pieces of this size.
constexpr long long max_piece_bytes = 1LL << 30;

struct MessageView {
  void* address = nullptr;
  int count = 0;  // 0: nothing to send or receive
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

// A persistent run's step, made once (ScheduleRun::build_plan): its local work as addresses, and its
// messages as the library's persistent requests, so that a start only copies, reduces and starts.
struct PlannedLocal {
  enum class Kind : std::uint8_t { move, copy, reduce };
  Kind kind;
  const void* source;
  void* target;
  std::size_t bytes;     // move
  int count;             // copy: the source's elements; reduce: the elements
  MPI_Datatype type;     // copy: the source's type; reduce: the elements'
  int to_count;          // copy
  MPI_Datatype to_type;  // copy
};
struct PlannedStep {
  std::vector<PlannedLocal> local;
  std::vector<MPI_Request> requests;
  std::vector<MPI_Datatype> types;  // message types its requests use
};

// Runs one step: start() does its local work and posts its messages; then either finish_blocking()
// completes them (a blocking call), or test() is called until it says they are complete (a
// nonblocking or persistent operation's progress). Types and size headers built for the step are
// freed at its end.
//
// A packed message whose block sizes only the sender knows carries them in a header. A blocking
// run sends header and data as one message, which the receiver probes for to learn its size; a
// nonblocking run (`headers_apart`) sends the header as a message of its own just before the data
// (the same tag: MPI keeps their order), so that every receive is a request a wait can block on.
class StepRunner {
 public:
  StepRunner(CallLayout& call, EngineStorage& engine, MPI_Comm comm, bool headers_apart)
      : call_(call), engine_(engine), comm_(comm), headers_apart_(headers_apart) {}
  ~StepRunner() { end(); }
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  // After a step: frees what it built. (One runner serves every step of a run: nothing it keeps
  // is allocated again per step.)
  void end() {
    if (!engine_.message_types.empty()) {
      for (MPI_Datatype& type : engine_.message_types) PMPI_Type_free(&type);
      engine_.message_types.clear();
    }
    if (!engine_.headers.empty()) engine_.headers.clear();
  }

  // Receives are posted before sends, so that messages find them; except when some receive must
  // first probe for its size, which the peer's send has to be posted for: then the sends go first,
  // and the probing receives wait (probes_) until their envelopes arrive.
  int start(const Step& step, int tag) {
    tag_ = tag;
    int first_error = MPI_SUCCESS;
    if (!step.copies.empty() || !step.reductions.empty()) first_error = run_local(step);
    engine_.requests.clear();
    const bool probing =
        std::ranges::any_of(step.recvs, [&](const Transfer& t) { return needs_header(t, call_.rank); });
    if (headers_apart_) {
      header_requests_.clear();
      header_receives_.clear();
      for (const Transfer& recv : step.recvs) {
        keep_first_error(first_error,
                         needs_header(recv, call_.rank) ? post_header_recv(recv) : post_recv(recv, nullptr));
      }
      for (const Transfer& send : step.sends) keep_first_error(first_error, post_send(send));
    } else if (!probing) {
      for (const Transfer& recv : step.recvs) keep_first_error(first_error, post_recv(recv, nullptr));
      for (const Transfer& send : step.sends) keep_first_error(first_error, post_send(send));
    } else {
      for (const Transfer& send : step.sends) keep_first_error(first_error, post_send(send));
      for (const Transfer& recv : step.recvs) {
        if (needs_header(recv, call_.rank)) {
          probes_.push_back(&recv);
        } else {
          keep_first_error(first_error, post_recv(recv, nullptr));
        }
      }
    }
    return first_error;
  }

  // Completes the step, waiting. Returns the first error.
  int finish_blocking() {
    int first_error = MPI_SUCCESS;
    for (const Transfer* recv : probes_) {
      MPI_Status status;
      const int rc = PMPI_Probe(recv->peer, tag_, comm_, &status);
      keep_first_error(first_error, rc == MPI_SUCCESS ? post_recv(*recv, &status) : rc);
    }
    probes_.clear();
    keep_first_error(first_error, complete_requests(engine_.requests, engine_.statuses));
    if (!headed_.empty()) keep_first_error(first_error, register_headed_blocks());
    return first_error;
  }

  // Advances the step without waiting: true once it is complete (its first error in `first_error`).
  // (Only with headers_apart: no receive probes.)
  bool test(int& first_error) {
    if (!header_requests_.empty() && !receive_after_headers(first_error)) return false;
    if (!test_requests(engine_.requests, engine_.statuses, engine_.indices, first_error)) return false;
    if (!headed_.empty()) keep_first_error(first_error, register_headed_blocks());
    headed_.clear();
    return true;
  }

  // From here on (until called with null), start() records the step into `step` instead of running
  // it: what can be planned (typed buffers: no packed scratch, no size headers) is; unplannable()
  // says whether something could not be.
  void record_into(PlannedStep* step) {
    record_ = step;
    unplannable_ = false;
  }
  bool unplannable() const { return unplannable_; }

  // A planned step: its local work, then its messages started.
  int start_planned(PlannedStep& step) {
    int first_error = MPI_SUCCESS;
    for (const PlannedLocal& local : step.local) {
      switch (local.kind) {
        case PlannedLocal::Kind::move: std::memmove(local.target, local.source, local.bytes); break;
        case PlannedLocal::Kind::copy:
          keep_first_error(first_error, copy_typed(local.source, local.count, local.type, local.target, local.to_count,
                                                   local.to_type, comm_, call_.rank));
          break;
        case PlannedLocal::Kind::reduce:
          keep_first_error(first_error,
                           PMPI_Reduce_local(local.source, local.target, local.count, local.type, call_.op));
          break;
      }
    }
    if (!step.requests.empty())
      keep_first_error(first_error, PMPI_Startall(static_cast<int>(step.requests.size()), step.requests.data()));
    return first_error;
  }
  // True once a planned step's messages are complete (its requests inactive again).
  bool test_planned(PlannedStep& step, int& first_error) {
    if (step.requests.empty()) return true;
    const int n = static_cast<int>(step.requests.size());
    if (engine_.statuses.size() < step.requests.size()) engine_.statuses.resize(step.requests.size());
    int flag = 0;
    const int rc = PMPI_Testall(n, step.requests.data(), &flag, engine_.statuses.data());
    if (rc == MPI_SUCCESS) return flag != 0;
    // A message failed: every request completes (inactive, kept for the next start), first error kept.
    int error = rc;
    if (rc == MPI_ERR_IN_STATUS) {
      for (int i = 0; i < n; ++i) {
        const int status_error = engine_.statuses[static_cast<std::size_t>(i)].MPI_ERROR;
        if (status_error != MPI_SUCCESS && status_error != MPI_ERR_PENDING) {
          error = status_error;
          break;
        }
      }
    }
    keep_first_error(first_error, error);
    PMPI_Waitall(n, step.requests.data(), MPI_STATUSES_IGNORE);
    return true;
  }

  // What test() waits for.
  void blocked_on(std::vector<PendingRequest>& pending, int& first_error) {
    for (std::vector<MPI_Request>* requests : {&header_requests_, &engine_.requests}) {
      for (MPI_Request& request : *requests) {
        if (request != MPI_REQUEST_NULL) pending.push_back({&request, &first_error});
      }
    }
  }

 private:
  [[gnu::noinline]] int run_local(const Step& step) {
    int first_error = MPI_SUCCESS;
    for (const LocalCopy& copy : step.copies) keep_first_error(first_error, run_copy(copy));
    for (const LocalReduce& reduce : step.reductions) keep_first_error(first_error, run_reduce(reduce));
    return first_error;
  }

  // A packed message carries its blocks' sizes in front when the receiver cannot know them.
  bool needs_header(const Transfer& transfer, int receiver) const {
    if (transfer.region.buffer != Buffer::scratch) return false;
    return !std::ranges::all_of(transfer.region.blocks,
                                [&](std::int64_t block) { return call_.knows_scratch_bytes(receiver, block); });
  }

  const TypedBuffer& typed(Buffer buffer) const {
    return buffer == Buffer::send ? call_.send : buffer == Buffer::temp ? call_.temp : call_.recv;
  }

  PackedLocation packed_location(Buffer buffer, std::int64_t block) const {
    if (buffer == Buffer::shared) return {call_.shared.base + call_.shared.offsets[block], call_.shared.bytes[block]};
    const auto found = engine_.scratch_blocks.find(block);
    return found == engine_.scratch_blocks.end() ? PackedLocation{} : found->second;
  }

  // The blocks of a typed region: one run of the buffer's type where they lie back to back,
  // otherwise an hindexed type over it with one entry per back-to-back run. The one-block case,
  // most messages, stays small; the rest is out of line.
  int describe_typed(const Region& region, MessageView& view) {
    const TypedBuffer& buffer = typed(region.buffer);
    view = {};
    if (region.blocks.size() != 1) return describe_blocks(buffer, region, view);
    const std::int64_t block = region.blocks.front();
    const int count = buffer.count(block);
    if (count > 0 && buffer.element_bytes() > 0) view = {buffer.address(block), count, buffer.type};
    return MPI_SUCCESS;
  }

  [[gnu::noinline]] int describe_blocks(const TypedBuffer& buffer, const Region& region, MessageView& view) {
    long long total = 0;
    bool back_to_back = true;
    MPI_Aint expected_next = 0;
    bool first = true;
    for (const std::int64_t block : region.blocks) {
      if (!first && buffer.displacement(block) != expected_next) back_to_back = false;
      first = false;
      expected_next = buffer.displacement(block) + buffer.count(block);
      total += buffer.count(block);
    }
    if (total == 0 || buffer.element_bytes() == 0) return MPI_SUCCESS;
    if (back_to_back && total <= INT_MAX) {
      view = {buffer.address(region.blocks.front()), static_cast<int>(total), buffer.type};
      return MPI_SUCCESS;
    }
    // With equal counts (an Allgather) the same transfer always needs the same type: kept between calls.
    MessageTypeCache::Key key;
    const bool cacheable = buffer.counts == nullptr && engine_.message_type_cache.key(region, buffer, key);
    if (cacheable) {
      if (const MPI_Datatype cached = engine_.message_type_cache.find(key); cached != MPI_DATATYPE_NULL) {
        view = {buffer.base, 1, cached};
        return MPI_SUCCESS;
      }
    }
    MPI_Datatype type = MPI_DATATYPE_NULL;
    const int rc = create_blocks_type(buffer, region.blocks, engine_.type_lengths, engine_.type_offsets, type);
    if (rc == MPI_SUCCESS && cacheable) {
      engine_.message_type_cache.store(key, type);
    } else if (type != MPI_DATATYPE_NULL) {
      (record_ != nullptr ? record_->types : engine_.message_types).push_back(type);
    }
    if (rc == MPI_SUCCESS) view = {buffer.base, 1, type};
    return rc;
  }

  // Bytes at absolute addresses as one message from MPI_BOTTOM (or one plain run when it is one
  // piece that fits an int count). Pieces are appended to the type scratch by the caller.
  void add_bytes(const std::byte* address, long long bytes) {
    for (long long done = 0; done < bytes; done += max_piece_bytes) {
      MPI_Aint absolute = 0;
      PMPI_Get_address(address + done, &absolute);
      engine_.type_lengths.push_back(static_cast<int>(std::min(max_piece_bytes, bytes - done)));
      engine_.type_offsets.push_back(absolute);
    }
  }

  int finish_bytes(MessageView& view) {
    view = {};
    const auto& lengths = engine_.type_lengths;
    if (lengths.empty()) return MPI_SUCCESS;
    if (lengths.size() == 1) {
      view = {reinterpret_cast<void*>(engine_.type_offsets.front()), lengths.front(), MPI_BYTE};
      return MPI_SUCCESS;
    }
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int rc = PMPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), engine_.type_offsets.data(),
                                       MPI_BYTE, &type);
    if (rc != MPI_SUCCESS) return rc;
    engine_.message_types.push_back(type);
    if ((rc = PMPI_Type_commit(&engine_.message_types.back())) != MPI_SUCCESS) return rc;
    view = {MPI_BOTTOM, 1, engine_.message_types.back()};
    return MPI_SUCCESS;
  }

  int post(bool send, const MessageView& view, int peer) {
    if (view.count == 0) return MPI_SUCCESS;  // both sides know the message is empty and skip it
    if (record_ != nullptr) {
      record_->requests.push_back(MPI_REQUEST_NULL);
      MPI_Request* request = &record_->requests.back();
      const int rc = send ? PMPI_Send_init(view.address, view.count, view.type, peer, tag_, comm_, request)
                          : PMPI_Recv_init(view.address, view.count, view.type, peer, tag_, comm_, request);
      if (rc != MPI_SUCCESS) unplanned();
      return MPI_SUCCESS;
    }
    engine_.requests.push_back(MPI_REQUEST_NULL);
    return send ? PMPI_Isend(view.address, view.count, view.type, peer, tag_, comm_, &engine_.requests.back())
                : PMPI_Irecv(view.address, view.count, view.type, peer, tag_, comm_, &engine_.requests.back());
  }

  int post_send(const Transfer& send) {
    MessageView view;
    if (!is_packed(send.region.buffer)) {
      const int rc = describe_typed(send.region, view);
      return rc != MPI_SUCCESS ? rc : post(true, view, send.peer);
    }
    if (record_ != nullptr) return unplanned();
    engine_.type_lengths.clear();
    engine_.type_offsets.clear();
    if (needs_header(send, send.peer)) {
      std::vector<std::int64_t>& header = engine_.headers.emplace_back();
      for (const std::int64_t block : send.region.blocks)
        header.push_back(packed_location(send.region.buffer, block).bytes);
      if (headers_apart_) {
        const int rc = post(true, {header.data(), static_cast<int>(header.size()), MPI_INT64_T}, send.peer);
        if (rc != MPI_SUCCESS) return rc;
      } else {
        add_bytes(reinterpret_cast<const std::byte*>(header.data()),
                  static_cast<long long>(header.size() * sizeof(std::int64_t)));
      }
    }
    for (const std::int64_t block : send.region.blocks) {
      const PackedLocation at = packed_location(send.region.buffer, block);
      add_bytes(at.address, at.bytes);
    }
    const int rc = finish_bytes(view);
    return rc != MPI_SUCCESS ? rc : post(true, view, send.peer);
  }

  // `probed`: the envelope of a receive whose size only the message tells (needs_header).
  int post_recv(const Transfer& recv, const MPI_Status* probed) {
    MessageView view;
    if (!is_packed(recv.region.buffer)) {
      const int rc = describe_typed(recv.region, view);
      return rc != MPI_SUCCESS ? rc : post(false, view, recv.peer);
    }
    if (record_ != nullptr) return unplanned();
    if (recv.region.buffer == Buffer::shared) {  // sizes known: every rank holds the counts
      engine_.type_lengths.clear();
      engine_.type_offsets.clear();
      for (const std::int64_t block : recv.region.blocks) {
        const PackedLocation at = packed_location(Buffer::shared, block);
        add_bytes(at.address, at.bytes);
      }
      const int rc = finish_bytes(view);
      return rc != MPI_SUCCESS ? rc : post(false, view, recv.peer);
    }
    long long bytes = 0;
    if (probed != nullptr) {
      MPI_Count received = 0;
#ifdef COLLSHIM_SMPI  // SimGrid 3.32 aborts in MPI_Get_elements_x; a simulated message stays below INT_MAX
      int count = 0;
      const int rc = PMPI_Get_count(probed, MPI_BYTE, &count);
      received = count;
#else
      const int rc = PMPI_Get_elements_x(probed, MPI_BYTE, &received);
#endif
      if (rc != MPI_SUCCESS) return rc;
      bytes = received;
      headed_.push_back({&recv, nullptr, bytes});
    } else {
      for (const std::int64_t block : recv.region.blocks) bytes += call_.scratch_block_bytes(block).value_or(0);
    }
    std::byte* const target = engine_.allocate(static_cast<std::size_t>(bytes));
    if (!headed_.empty() && headed_.back().transfer == &recv) {
      headed_.back().data = target;
    } else {
      std::byte* at = target;  // blocks in message order, back to back
      for (const std::int64_t block : recv.region.blocks) {
        const long long block_bytes = call_.scratch_block_bytes(block).value_or(0);
        engine_.scratch_blocks[block] = {at, block_bytes};
        at += block_bytes;
      }
    }
    engine_.type_lengths.clear();
    engine_.type_offsets.clear();
    add_bytes(target, bytes);
    const int rc = finish_bytes(view);
    return rc != MPI_SUCCESS ? rc : post(false, view, recv.peer);
  }

  // headers_apart_: a receive whose block sizes come in a header message first.
  int post_header_recv(const Transfer& recv) {
    if (record_ != nullptr) return unplanned();
    std::vector<std::int64_t>& header = engine_.headers.emplace_back(recv.region.blocks.size());
    header_receives_.push_back({&recv, &header});
    header_requests_.push_back(MPI_REQUEST_NULL);
    return PMPI_Irecv(header.data(), static_cast<int>(header.size()), MPI_INT64_T, recv.peer, tag_, comm_,
                      &header_requests_.back());
  }

  // Posts the data receive of every header that arrived; true once all have.
  bool receive_after_headers(int& first_error) {
    for (std::size_t i = 0; i < header_requests_.size(); ++i) {
      if (header_receives_[i].transfer == nullptr) continue;  // posted already
      int rc = MPI_SUCCESS;
      if (header_requests_[i] != MPI_REQUEST_NULL) {
        int arrived = 0;
        rc = PMPI_Test(&header_requests_[i], &arrived, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && !arrived) continue;
      }
      const Transfer& recv = *std::exchange(header_receives_[i].transfer, nullptr);
      keep_first_error(first_error, rc == MPI_SUCCESS ? post_sized_recv(recv, *header_receives_[i].header) : rc);
    }
    if (std::ranges::any_of(header_receives_, [](const HeaderReceive& h) { return h.transfer != nullptr; }))
      return false;
    header_requests_.clear();
    return true;
  }

  // The data of a receive whose header gave its blocks' sizes.
  int post_sized_recv(const Transfer& recv, const std::vector<std::int64_t>& sizes) {
    long long bytes = 0;
    for (const std::int64_t block_bytes : sizes) {
      if (block_bytes < 0) return MPI_ERR_TRUNCATE;
      bytes += block_bytes;
    }
    std::byte* at = engine_.allocate(static_cast<std::size_t>(bytes));
    engine_.type_lengths.clear();
    engine_.type_offsets.clear();
    add_bytes(at, bytes);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      engine_.scratch_blocks[recv.region.blocks[k]] = {at, sizes[k]};
      at += sizes[k];
    }
    MessageView view;
    const int rc = finish_bytes(view);
    return rc != MPI_SUCCESS ? rc : post(false, view, recv.peer);
  }

  // After a step: the blocks of messages that carried their sizes. A size that disagrees with what
  // this rank knows (a truncation: counts that differ between ranks) is reported, as MPI would.
  int register_headed_blocks() {
    int rc = MPI_SUCCESS;
    for (const HeadedReceive& headed : headed_) {
      const auto& blocks = headed.transfer->region.blocks;
      const long long header_bytes = static_cast<long long>(blocks.size() * sizeof(std::int64_t));
      if (headed.bytes < header_bytes) {
        keep_first_error(rc, MPI_ERR_TRUNCATE);
        continue;
      }
      const std::byte* payload = headed.data + header_bytes;
      const std::byte* header = headed.data;
      long long left = headed.bytes - header_bytes;
      for (const std::int64_t block : blocks) {
        std::int64_t block_bytes = 0;
        std::memcpy(&block_bytes, header, sizeof block_bytes);
        header += sizeof block_bytes;
        if (block_bytes < 0 || block_bytes > left) {
          keep_first_error(rc, MPI_ERR_TRUNCATE);
          break;
        }
        engine_.scratch_blocks[block] = {const_cast<std::byte*>(payload), block_bytes};
        payload += block_bytes;
        left -= block_bytes;
      }
    }
    return rc;
  }

  // run(a block, b block, elements) for each run of blocks of two typed regions that lie back to
  // back in both buffers (paired in order); elements counted in b.
  template <typename Run>
  static void for_each_typed_run(const TypedBuffer& a, const Region& ra, const TypedBuffer& b, const Region& rb,
                                 Run&& run) {
    auto x = ra.blocks.begin(), y = rb.blocks.begin();
    const auto x_end = ra.blocks.end(), y_end = rb.blocks.end();
    while (x != x_end && y != y_end) {
      const std::int64_t a_first = *x, b_first = *y;
      long long elements = b.count(b_first);
      MPI_Aint a_next = a.displacement(a_first) + a.count(a_first), b_next = b.displacement(b_first) + elements;
      for (++x, ++y; x != x_end && y != y_end && a.displacement(*x) == a_next && b.displacement(*y) == b_next;
           ++x, ++y) {
        a_next += a.count(*x);
        b_next += b.count(*y);
        elements += b.count(*y);
      }
      run(a_first, b_first, elements);
    }
  }

  // copy_typed, or its record.
  int copy_elements(const char* source, int count, MPI_Datatype type, char* target, int to_count,
                    MPI_Datatype to_type) {
    if (record_ == nullptr) return copy_typed(source, count, type, target, to_count, to_type, comm_, call_.rank);
    if (count == 0 && to_count == 0) return MPI_SUCCESS;
    if (type == to_type && count == to_count && is_contiguous(type)) {  // copy_typed's memmove, made once
      MPI_Aint true_lb = 0, true_extent = 0;
      PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
      record_->local.push_back({PlannedLocal::Kind::move, source + true_lb, target + true_lb,
                                static_cast<std::size_t>(type_size(type)) * static_cast<std::size_t>(count), 0,
                                MPI_DATATYPE_NULL, 0, MPI_DATATYPE_NULL});
    } else {
      record_->local.push_back({PlannedLocal::Kind::copy, source, target, 0, count, type, to_count, to_type});
    }
    return MPI_SUCCESS;
  }
  // What a plan cannot hold (packed bytes, whose places and sizes are made per run).
  int unplanned() {
    unplannable_ = true;
    return MPI_SUCCESS;
  }

  int run_copy(const LocalCopy& copy) {
    int first_error = MPI_SUCCESS;
    if (call_.naming == BlockNaming::reduction && !is_packed(copy.from.buffer) && !is_packed(copy.to.buffer) &&
        std::min(copy.from.blocks.size(), copy.to.blocks.size()) > 1) {
      // A reduction's whole vector is p blocks of one type and counts in every buffer: copied as
      // runs, not block by block. (Other collectives' send and receive types and counts may differ.)
      const TypedBuffer &in = typed(copy.from.buffer), &out = typed(copy.to.buffer);
      for_each_typed_run(in, copy.from, out, copy.to, [&](std::int64_t from, std::int64_t to, long long elements) {
        const char* source = in.address(from);
        char* target = out.address(to);
        if (elements > 0 && source != target)  // elements <= the call's int count
          keep_first_error(first_error, copy_elements(source, static_cast<int>(elements), in.type, target,
                                                      static_cast<int>(elements), out.type));
      });
      return first_error;
    }
    for_each_pair(copy.from.blocks, copy.to.blocks, [&](std::int64_t source, std::int64_t target) {
      keep_first_error(first_error, copy_block(copy.from.buffer, source, copy.to.buffer, target));
    });
    return first_error;
  }

  int copy_block(Buffer from, std::int64_t source, Buffer to, std::int64_t target) {
    const MPI_Comm comm = comm_;
    if (!is_packed(from) && !is_packed(to)) {
      const TypedBuffer &in = typed(from), &out = typed(to);
      const char* source_address = in.address(source);
      char* target_address = out.address(target);
      if (source_address == target_address && in.type == out.type && in.count(source) == out.count(target))
        return MPI_SUCCESS;  // MPI_IN_PLACE: the block is where it belongs
      return copy_elements(source_address, in.count(source), in.type, target_address, out.count(target), out.type);
    }
    if (record_ != nullptr) return unplanned();
    if (!is_packed(from)) {  // pack
      const TypedBuffer& in = typed(from);
      const long long bytes = in.bytes(source);
      std::byte* at = to == Buffer::shared ? packed_location(Buffer::shared, target).address
                                           : engine_.allocate(static_cast<std::size_t>(bytes));
      if (to == Buffer::scratch) engine_.scratch_blocks[target] = {at, bytes};
      return pack_elements(in.address(source), in.count(source), in.type, at, comm, call_.rank);
    }
    const PackedLocation at = packed_location(from, source);
    if (!is_packed(to)) {  // unpack: the packed size must be what this rank expects
      const TypedBuffer& out = typed(to);
      if (at.bytes != out.bytes(target)) return MPI_ERR_TRUNCATE;
      return unpack_elements(at.address, out.count(target), out.type, out.address(target), comm, call_.rank);
    }
    std::byte* destination = to == Buffer::shared ? packed_location(Buffer::shared, target).address
                                                  : engine_.allocate(static_cast<std::size_t>(at.bytes));
    if (to == Buffer::scratch) engine_.scratch_blocks[target] = {destination, at.bytes};
    if (at.bytes > 0) std::memmove(destination, at.address, static_cast<std::size_t>(at.bytes));
    return MPI_SUCCESS;
  }

  // Reductions work on the user's typed buffers, with the call's operation.
  int run_reduce(const LocalReduce& reduce) {
    if (is_packed(reduce.from.buffer) || is_packed(reduce.into.buffer) || call_.op == MPI_OP_NULL)
      return MPI_ERR_INTERN;
    int first_error = MPI_SUCCESS;
    const TypedBuffer &in = typed(reduce.from.buffer), &inout = typed(reduce.into.buffer);
    // One MPI_Reduce_local per run of adjacent blocks.
    for_each_typed_run(
        in, reduce.from, inout, reduce.into, [&](std::int64_t from, std::int64_t into, long long elements) {
          if (elements == 0) return;
          if (record_ != nullptr) {
            record_->local.push_back({PlannedLocal::Kind::reduce, in.address(from), inout.address(into), 0,
                                      static_cast<int>(elements), inout.type, 0, MPI_DATATYPE_NULL});
            return;
          }
          keep_first_error(first_error, PMPI_Reduce_local(in.address(from), inout.address(into),
                                                          static_cast<int>(elements), inout.type, call_.op));
        });
    return first_error;
  }

  struct HeadedReceive {
    const Transfer* transfer;
    std::byte* data;
    long long bytes;
  };
  struct HeaderReceive {
    const Transfer* transfer;  // null once its data receive is posted
    const std::vector<std::int64_t>* header;
  };

  CallLayout& call_;
  EngineStorage& engine_;
  MPI_Comm comm_;
  int tag_ = 0;
  bool headers_apart_;
  PlannedStep* record_ = nullptr;
  bool unplannable_ = false;
  std::vector<HeadedReceive> headed_;
  std::vector<const Transfer*> probes_;       // receives still waiting for their envelope
  std::vector<MPI_Request> header_requests_;  // headers_apart_: the header receives
  std::vector<HeaderReceive> header_receives_;
};

}  // namespace step_engine

namespace {

// The schedule's typed temporaries: temp_copies copies of recv's layout, each covering the
// elements' true extent, in storage kept between calls. Copies start a whole number of extents
// apart, so a temp block's address is displacement * extent like any typed block's.
int set_up_temp(const Schedule& schedule, CallLayout& call, EngineStorage& engine) {
  call.temp = call.recv;
  call.temp.blocks_per_copy = call.p;
  call.temp.copy_displacement = 0;
  if (schedule.temp_copies == 0 || call.recv.extent <= 0) {
    call.temp.base = nullptr;
    return MPI_SUCCESS;
  }
  long long elements = 0;
  for (int b = 0; b < call.p; ++b)
    elements = std::max<long long>(elements, call.recv.displacement(b) + call.recv.count(b));
  MPI_Aint true_lb = 0, true_extent = 0;
  const int rc = PMPI_Type_get_true_extent(call.recv.type, &true_lb, &true_extent);
  if (rc != MPI_SUCCESS) return rc;
  const long long span = elements == 0 ? 0 : (elements - 1) * call.recv.extent + true_extent;
  const long long extents_per_copy = (span + call.recv.extent - 1) / call.recv.extent;
  call.temp.copy_displacement = static_cast<MPI_Aint>(extents_per_copy);
  const auto bytes = static_cast<std::size_t>(extents_per_copy * call.recv.extent * schedule.temp_copies);
  if (engine.temp.size() < bytes) engine.temp.resize(bytes);
  call.temp.base = reinterpret_cast<char*>(engine.temp.data()) - true_lb;
  return MPI_SUCCESS;
}

}  // namespace

int run_schedule(const Schedule& schedule, CallLayout& call, CommContext& context, AlgorithmState& state) {
  EngineStorage& engine = context.engine;
  engine.start_call();
  if (schedule.temp_copies > 0) {
    if (const int rc = set_up_temp(schedule, call, engine); rc != MPI_SUCCESS) return rc;
  }
  int first_error = MPI_SUCCESS;
  for (std::size_t index = 0; index < schedule.steps.size(); ++index) {
    const Step& step = schedule.steps[index];
    if (step.opaque) {
      const int rc = state.run_phase(step.opaque->id, call, context);
      if (rc != AlgorithmState::runs_as_modelled) {
        keep_first_error(first_error, rc);
        continue;
      }
    }
    step_engine::StepRunner runner(call, engine, context.comm(), false);
    keep_first_error(first_error, runner.start(step, step_tag(0, index)));
    keep_first_error(first_error, runner.finish_blocking());
  }
  engine.finish_call();
  return first_error;
}

struct ScheduleRun::Current {
  Current(CallLayout& call, EngineStorage& engine, MPI_Comm comm) : runner(call, engine, comm, true) {}
  step_engine::StepRunner runner;
};

struct ScheduleRun::Plan {
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    for (step_engine::PlannedStep& step : steps) {
      for (MPI_Request& request : step.requests) {
        if (request != MPI_REQUEST_NULL) PMPI_Request_free(&request);
      }
      for (MPI_Datatype& type : step.types) PMPI_Type_free(&type);
    }
  }
  // Whether it was made for these buffers (a layout made again at a start may have moved one).
  bool holds(const CallLayout& call) const {
    return call.send.base == send_base && call.recv.base == recv_base && call.temp.base == temp_base;
  }
  std::vector<step_engine::PlannedStep> steps;
  const char* send_base = nullptr;
  const char* recv_base = nullptr;
  const char* temp_base = nullptr;
};

ScheduleRun::ScheduleRun(const Schedule& schedule, CallLayout& call, EngineStorage& engine, MPI_Comm comm, int tag_base)
    : schedule_(schedule),
      call_(call),
      engine_(engine),
      comm_(comm),
      tag_base_(tag_base),
      current_(std::make_unique<Current>(call, engine, comm)) {}

ScheduleRun::~ScheduleRun() = default;

void ScheduleRun::start() {
  engine_.start_call();
  index_ = 0;
  error_ = MPI_SUCCESS;
  in_step_ = false;
  done_ = false;
  if (schedule_.temp_copies > 0) {
    if (const int rc = set_up_temp(schedule_, call_, engine_); rc != MPI_SUCCESS) {
      error_ = rc;
      done_ = true;
      engine_.finish_call();
      return;
    }
  }
  if (plan_ && !plan_->holds(call_)) plan_.reset();
  if (plans_ && !plan_) build_plan();
}

void ScheduleRun::keep_plan() {
#ifdef COLLSHIM_SMPI
  // SimGrid 3.32 returns wrong data from a plan's persistent requests (Bruck Allgather, 8 B, on 1
  // of 4 ranks; Open MPI and MPICH give the right data at 2-64 ranks): under SMPI persistent runs
  // go step by step, sending the same messages.
  return;
#endif
  plans_ = !unplannable_;
}

void ScheduleRun::build_plan() {
  auto plan = std::make_unique<Plan>();
  plan->steps.resize(schedule_.steps.size());
  plan->send_base = call_.send.base;
  plan->recv_base = call_.recv.base;
  plan->temp_base = call_.temp.base;
  step_engine::StepRunner& runner = current_->runner;
  bool planned = true;
  for (std::size_t index = 0; index < schedule_.steps.size() && planned; ++index) {
    runner.record_into(&plan->steps[index]);
    runner.start(schedule_.steps[index], step_tag(tag_base_, index));
    planned = !runner.unplannable();
    runner.end();
  }
  runner.record_into(nullptr);
  if (planned) {
    plan_ = std::move(plan);
  } else {  // this rank runs it step by step (the messages are the same)
    plans_ = false;
    unplannable_ = true;
  }
}

bool ScheduleRun::progress() {
  step_engine::StepRunner& runner = current_->runner;
  while (!done_) {
    if (in_step_ && plan_) {
      if (!runner.test_planned(plan_->steps[index_], error_)) return false;
      in_step_ = false;
      ++index_;
    } else if (in_step_) {
      if (!runner.test(error_)) return false;
      runner.end();
      in_step_ = false;
      ++index_;
    }
    if (index_ == schedule_.steps.size()) {
      engine_.finish_call();
      done_ = true;
      break;
    }
    // Opaque phases are the state's blocking work; an algorithm that has them declares itself
    // blocking-only for the parameters that run them (Algorithm::blocking_only), so here every step
    // runs as modelled.
    in_step_ = true;
    keep_first_error(error_, plan_ ? runner.start_planned(plan_->steps[index_])
                                   : runner.start(schedule_.steps[index_], step_tag(tag_base_, index_)));
  }
  return true;
}

void ScheduleRun::blocked_on(std::vector<PendingRequest>& pending) {
  if (!in_step_) return;
  if (!plan_) return current_->runner.blocked_on(pending, error_);
  for (MPI_Request& request : plan_->steps[index_].requests) pending.push_back({&request, &error_, true});
}

}  // namespace collshim
