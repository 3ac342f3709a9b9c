// Grid Alltoallv (paper 004, section 1.6): every block travels through k dimension phases. Phase j
// exchanges only inside this rank's dimension-j group (its own communicator), forwarding each block
// one step toward its destination (grid_routing.hpp: shape, holes, next hop). Start-ups per rank
// drop from p-1 to about sum(d_j - 1) (2(sqrt(p)-1) in 2D, log2 p for a hypercube); the price is that
// a byte is forwarded up to k times. Worth it for small, irregular or hot-spot traffic.
//
// Items. A block travels as an item: a 16-byte header (final destination, origin, payload bytes) and
// the payload. The origin packs the payload from its send layout with MPI_Pack(sendtype); the
// destination unpacks it with MPI_Unpack(recvtype) at rdispls[origin] (pack_elements: an element of
// more than INT_MAX bytes goes through a message to self instead). Send and receive types have
// equal signatures, so the packed bytes are the same sequence of basic values whatever the two
// layouts. Intermediate ranks copy items as bytes and never interpret them. The payload is therefore
// count x type_size bytes in the native representation: collshim assumes a homogeneous job (Open
// MPI's heterogeneous support is off unless configured, MPICH has none). MPI_Pack_external
// ("external32") would lift that at the cost of a conversion per element on little-endian machines.
//
// Counts. A rank does not know what it will receive in phases 0..k-2: that depends on other ranks'
// sendcounts. Before those phases the group exchanges byte counts with one PMPI_Alltoall of one
// int64 per member on the dimension communicator: d_j - 1 eight-byte messages per rank for a
// linear alltoall (the MPI library may use Bruck for small messages: ceil(log2 d_j) rounds), i.e.
// one extra latency-bound round per phase and at most as many start-ups as the data itself. The last
// phase needs none: its receivers are the destinations, which know their recvcounts, and the routing
// tells them which peer hands over which origin's block (GridPlan::last_phase_sender). A 2D grid
// therefore exchanges counts once. Zero-byte blocks are never sent, and a peer pair with nothing to
// exchange in a phase posts no message.
//
// Decisions. Counts are rank-local, so nothing here (shape included) depends on them: every rank of
// a call runs the same phases. A size-keyed choice of grid needs an agreement step first.
#include <algorithm>
#include <cstring>

#include "algorithms/alltoallv_algorithms.hpp"
#include "algorithms/local_copy.hpp"

namespace collshim {
namespace {

constexpr int grid_tag = 3;
// Larger forwarding messages are split: MPI counts are int. Pieces to one peer stay in order
// (same source, tag and communicator), so the receiver posts the same pieces.
constexpr std::int64_t max_message_bytes = std::int64_t{1} << 30;

struct ItemHeader {
  std::int32_t destination;
  std::int32_t origin;
  std::int64_t bytes;
};
constexpr std::int64_t header_bytes = sizeof(ItemHeader);
static_assert(header_bytes == 16);

ItemHeader read_header(const std::byte* at) {
  ItemHeader header;
  std::memcpy(&header, at, sizeof header);  // items are not aligned
  return header;
}

template <typename Vector>
void ensure_size(Vector& vector, std::size_t size) {
  if (vector.size() < size) vector.resize(size);  // never shrinks: capacity is reused by the next call
}

int post_pieces(bool send, std::byte* data, std::int64_t bytes, int peer, MPI_Comm comm,
                std::vector<MPI_Request>& requests) {
  while (bytes > 0) {
    const int n = static_cast<int>(std::min(bytes, max_message_bytes));
    requests.push_back(MPI_REQUEST_NULL);
    const int rc = send ? PMPI_Isend(data, n, MPI_BYTE, peer, grid_tag, comm, &requests.back())
                        : PMPI_Irecv(data, n, MPI_BYTE, peer, grid_tag, comm, &requests.back());
    if (rc != MPI_SUCCESS) return rc;
    data += n;
    bytes -= n;
  }
  return MPI_SUCCESS;
}

struct RecvSide {
  const AlltoallvCall& call;
  MPI_Aint extent;
  long long type_size;
  std::int64_t bytes(int origin) const { return static_cast<std::int64_t>(call.recvcounts[origin]) * type_size; }
};

// Unpacks the items for this rank among those in [begin, end). A payload whose size disagrees with
// recvcounts (mismatched signatures: an erroneous program) is reported once all traffic is done.
int deliver(const std::byte* begin, const std::byte* end, int rank, const RecvSide& recv, MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  for (const std::byte* at = begin; at < end;) {
    const ItemHeader header = read_header(at);
    const std::byte* payload = at + header_bytes;
    at = payload + header.bytes;
    if (header.destination != rank) continue;
    if (header.bytes != recv.bytes(header.origin)) {
      rc = MPI_ERR_TRUNCATE;
      continue;
    }
    char* target = static_cast<char*>(alltoallv_recv_address(recv.call, recv.extent, header.origin));
    const int unpack_rc =
        unpack_elements(payload, recv.call.recvcounts[header.origin], recv.call.recvtype, target, comm, rank);
    if (rc == MPI_SUCCESS) rc = unpack_rc;
  }
  return rc;
}

struct ReleaseLargeBuffers {
  GridBuffers& buffers;
  ~ReleaseLargeBuffers() { buffers.release_large(); }
};

int plan_for(const AlgorithmChoice& choice, CommContext& context, GridPlan*& plan) {
  if (choice.id < 0) return MPI_ERR_INTERN;  // only the selector's interned choices run
  const auto index = static_cast<std::size_t>(choice.id);
  if (context.grid_plans.size() <= index) context.grid_plans.resize(index + 1);
  std::unique_ptr<GridPlan>& slot = context.grid_plans[index];
  if (!slot) {
    const std::optional<GridDims> dims = parse_grid_dims(choice.params.at("dims"));
    if (!dims) return MPI_ERR_ARG;  // validated when the choice was made
    const int rc = GridPlan::create(context.comm(), grid_shape(context.size(), *dims), slot);
    if (rc != MPI_SUCCESS) {
      slot.reset();  // frees what was split; a later call starts over
      return rc;
    }
  }
  plan = slot.get();
  return MPI_SUCCESS;
}

}  // namespace

int GridPlan::create(MPI_Comm shadow, const std::vector<int>& dims, std::unique_ptr<GridPlan>& plan) {
  int p = 0, rank = 0;
  PMPI_Comm_size(shadow, &p);
  PMPI_Comm_rank(shadow, &rank);
  auto made = std::make_unique<GridPlan>();
  made->dims = dims;
  const GridRouting routing(p, dims);
  const int k = routing.phases();
  int rc = MPI_SUCCESS;
  for (int j = 0; j < k; ++j) {
    made->phases.push_back(routing.phase(j, rank));
    const GridPhase& phase = made->phases.back();
    // Groups partition the ranks and their smallest member is unique: a valid color. Key = rank keeps
    // the communicator's order equal to `members`. Single-rank groups get no communicator.
    const int color = phase.members.size() > 1 ? phase.members.front() : MPI_UNDEFINED;
    made->comms.push_back(MPI_COMM_NULL);
    const int split_rc = PMPI_Comm_split(shadow, color, rank, &made->comms.back());
    if (rc == MPI_SUCCESS) rc = split_rc;
    if (made->comms.back() != MPI_COMM_NULL) {
      int size = 0, local = 0;
      PMPI_Comm_size(made->comms.back(), &size);
      PMPI_Comm_rank(made->comms.back(), &local);
      if (rc == MPI_SUCCESS && (size != static_cast<int>(phase.members.size()) || local != phase.my_index)) {
        rc = MPI_ERR_INTERN;
      }
    }
  }
  made->last_phase_sender.assign(static_cast<std::size_t>(p), -1);
  if (k > 0) {
    const std::vector<int>& last_group = made->phases.back().members;
    for (int source = 0; source < p; ++source) {
      int at = source;
      for (int j = 0; j + 1 < k; ++j) at = routing.next_hop(j, at, rank);
      if (at == rank) continue;
      made->last_phase_sender[source] = static_cast<int>(
          std::lower_bound(last_group.begin(), last_group.end(), at) - last_group.begin());
    }
  }
  plan = std::move(made);  // handed over even on error: its owner frees the communicators split so far
  return rc;
}

void GridBuffers::release_large() {
  for (std::vector<std::byte>* items : {&held, &outgoing, &incoming}) {
    if (items->capacity() > kept_bytes) std::vector<std::byte>().swap(*items);
  }
}

GridPlan::~GridPlan() {
  for (MPI_Comm& comm : comms) {
    if (comm != MPI_COMM_NULL) PMPI_Comm_free(&comm);
  }
}

int run_grid_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context) {
  const int p = context.size();
  const int rank = context.rank();
  GridPlan* plan = nullptr;
  int rc = plan_for(choice, context, plan);
  if (rc != MPI_SUCCESS) return rc;
  GridBuffers& buffers = context.grid_buffers;
  const ReleaseLargeBuffers release_after_call{buffers};

  MPI_Aint lower_bound = 0, recv_extent = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &recv_extent);
  const RecvSide recv{call, recv_extent, type_size(call.recvtype)};

  // With MPI_IN_PLACE the outgoing blocks are read from recvbuf. Every block is packed before
  // anything is received, so no staging copy is needed, and the own block is already in place.
  const bool in_place = call.sendbuf == MPI_IN_PLACE;
  const char* send_base = static_cast<const char*>(in_place ? call.recvbuf : call.sendbuf);
  const int* send_counts = in_place ? call.recvcounts : call.sendcounts;
  const int* send_displs = in_place ? call.rdispls : call.sdispls;
  const MPI_Datatype send_type = in_place ? call.recvtype : call.sendtype;
  MPI_Aint send_extent = 0;
  PMPI_Type_get_extent(send_type, &lower_bound, &send_extent);
  const long long send_type_size = type_size(send_type);
  const auto send_bytes_to = [&](int peer) { return static_cast<std::int64_t>(send_counts[peer]) * send_type_size; };

  if (!in_place) {
    rc = copy_typed(send_base + send_displs[rank] * send_extent, send_counts[rank], send_type,
                    alltoallv_recv_address(call, recv_extent, rank), call.recvcounts[rank], call.recvtype,
                    context.comm(), rank);
    if (rc != MPI_SUCCESS) return rc;
  }

  // Pack every outgoing block as an item.
  std::int64_t held_bytes = 0;
  for (int peer = 0; peer < p; ++peer) {
    if (peer != rank && send_bytes_to(peer) > 0) held_bytes += header_bytes + send_bytes_to(peer);
  }
  ensure_size(buffers.held, static_cast<std::size_t>(held_bytes));
  std::byte* at = buffers.held.data();
  for (int peer = 0; peer < p; ++peer) {
    if (peer == rank || send_bytes_to(peer) == 0) continue;
    const ItemHeader header{peer, rank, send_bytes_to(peer)};
    std::memcpy(at, &header, sizeof header);
    rc = pack_elements(send_base + send_displs[peer] * send_extent, send_counts[peer], send_type, at + header_bytes,
                       context.comm(), rank);
    if (rc != MPI_SUCCESS) return rc;
    at += header_bytes + header.bytes;
  }

  int delivery_rc = MPI_SUCCESS;  // reported after the last phase, so no rank is left waiting
  const int phases = static_cast<int>(plan->phases.size());
  for (int j = 0; j < phases; ++j) {
    const GridPhase& phase = plan->phases[j];
    const int d = static_cast<int>(phase.members.size());
    if (d == 1) continue;  // one sub-block: every held item's destination is already in it
    const MPI_Comm comm = plan->comms[j];

    // Next hop of every held item; items delivered here earlier are skipped.
    buffers.send_bytes.assign(static_cast<std::size_t>(d), 0);
    buffers.item_peer.clear();
    std::int64_t stay_bytes = 0;
    const std::byte* const held_end = buffers.held.data() + held_bytes;
    for (const std::byte* item = buffers.held.data(); item < held_end;) {
      const ItemHeader header = read_header(item);
      item += header_bytes + header.bytes;
      if (header.destination == rank) {
        buffers.item_peer.push_back(-1);
        continue;
      }
      const int peer = phase.next_index(header.destination);
      buffers.item_peer.push_back(peer);
      (peer == phase.my_index ? stay_bytes : buffers.send_bytes[peer]) += header_bytes + header.bytes;
    }

    buffers.recv_bytes.assign(static_cast<std::size_t>(d), 0);
    if (j + 1 < phases) {
      rc = PMPI_Alltoall(buffers.send_bytes.data(), 1, MPI_INT64_T, buffers.recv_bytes.data(), 1, MPI_INT64_T,
                         comm);
      if (rc != MPI_SUCCESS) return rc;
    } else {
      for (int origin = 0; origin < p; ++origin) {
        const int sender = plan->last_phase_sender[origin];
        if (sender >= 0 && recv.bytes(origin) > 0) buffers.recv_bytes[sender] += header_bytes + recv.bytes(origin);
      }
    }

    // Layout: outgoing grouped by peer; incoming = staying items, then what each peer sends.
    buffers.send_offsets.assign(static_cast<std::size_t>(d), 0);
    buffers.recv_offsets.assign(static_cast<std::size_t>(d), 0);
    std::int64_t outgoing_bytes = 0, incoming_bytes = stay_bytes;
    for (int peer = 0; peer < d; ++peer) {
      buffers.send_offsets[peer] = outgoing_bytes;
      outgoing_bytes += buffers.send_bytes[peer];
      buffers.recv_offsets[peer] = incoming_bytes;
      incoming_bytes += buffers.recv_bytes[peer];
    }
    ensure_size(buffers.outgoing, static_cast<std::size_t>(outgoing_bytes));
    ensure_size(buffers.incoming, static_cast<std::size_t>(incoming_bytes));

    buffers.cursors = buffers.send_offsets;
    std::int64_t stay_cursor = 0;
    std::size_t item_index = 0;
    for (const std::byte* item = buffers.held.data(); item < held_end; ++item_index) {
      const std::int64_t size = header_bytes + read_header(item).bytes;
      const int peer = buffers.item_peer[item_index];
      if (peer == phase.my_index) {
        std::memcpy(buffers.incoming.data() + stay_cursor, item, static_cast<std::size_t>(size));
        stay_cursor += size;
      } else if (peer >= 0) {
        std::memcpy(buffers.outgoing.data() + buffers.cursors[peer], item, static_cast<std::size_t>(size));
        buffers.cursors[peer] += size;
      }
      item += size;
    }

    context.requests.clear();
    for (int peer = 0; peer < d && rc == MPI_SUCCESS; ++peer) {
      if (peer == phase.my_index) continue;
      rc = post_pieces(false, buffers.incoming.data() + buffers.recv_offsets[peer], buffers.recv_bytes[peer], peer,
                       comm, context.requests);
    }
    for (int peer = 0; peer < d && rc == MPI_SUCCESS; ++peer) {
      if (peer == phase.my_index) continue;
      rc = post_pieces(true, buffers.outgoing.data() + buffers.send_offsets[peer], buffers.send_bytes[peer], peer,
                       comm, context.requests);
    }
    const int wait_rc = context.complete_requests(context.requests);
    if (rc != MPI_SUCCESS || (rc = wait_rc) != MPI_SUCCESS) return rc;

    const int deliver_rc = deliver(buffers.incoming.data() + stay_bytes, buffers.incoming.data() + incoming_bytes,
                                   rank, recv, context.comm());
    if (delivery_rc == MPI_SUCCESS) delivery_rc = deliver_rc;
    std::swap(buffers.held, buffers.incoming);
    held_bytes = incoming_bytes;
  }
  return delivery_rc;
}

}  // namespace collshim
