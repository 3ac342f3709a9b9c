#include "algorithms/engine/local_copy.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

namespace collshim {
namespace {

constexpr int self_tag = 0;

// `bytes` bytes of MPI_PACKED as one datatype, for a count past INT_MAX: 1 GiB pieces plus the rest.
// Any message can be received as MPI_PACKED, and a message of MPI_PACKED received as any type with
// the signature it was packed from.
class PackedBytesType {
 public:
  explicit PackedBytesType(long long bytes) {
    constexpr long long piece_bytes = 1LL << 30;
    const long long pieces = bytes / piece_bytes;
    const long long rest = bytes % piece_bytes;
    status_ = PMPI_Type_contiguous(static_cast<int>(piece_bytes), MPI_PACKED, &piece_);
    if (status_ == MPI_SUCCESS) status_ = PMPI_Type_contiguous(static_cast<int>(rest), MPI_PACKED, &rest_);
    const int lengths[2] = {static_cast<int>(pieces), 1};
    const MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>(pieces * piece_bytes)};
    const MPI_Datatype types[2] = {piece_, rest_};
    if (status_ == MPI_SUCCESS) status_ = PMPI_Type_create_struct(2, lengths, displacements, types, &whole_);
    if (status_ == MPI_SUCCESS) status_ = PMPI_Type_commit(&whole_);
  }
  ~PackedBytesType() {
    for (MPI_Datatype* type : {&whole_, &rest_, &piece_}) {
      if (*type != MPI_DATATYPE_NULL) PMPI_Type_free(type);
    }
  }
  PackedBytesType(const PackedBytesType&) = delete;
  PackedBytesType& operator=(const PackedBytesType&) = delete;
  int status() const { return status_; }
  MPI_Datatype get() const { return whole_; }

 private:
  MPI_Datatype piece_ = MPI_DATATYPE_NULL, rest_ = MPI_DATATYPE_NULL, whole_ = MPI_DATATYPE_NULL;
  int status_ = MPI_SUCCESS;
};

// Elements of at most INT_MAX bytes go through MPI_Pack/MPI_Unpack in pieces of whole elements that
// fit its int sizes; larger ones through one message to self each.
template <typename PackPiece, typename MoveElement>
int for_each_piece(int count, long long element_bytes, PackPiece pack_piece, MoveElement move_element) {
  if (element_bytes > INT_MAX) {
    for (int done = 0; done < count; ++done) {
      const int rc = move_element(done);
      if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
  }
  const int per_piece = static_cast<int>(INT_MAX / std::max(element_bytes, 1LL));
  for (int done = 0; done < count;) {
    const int n = std::min(per_piece, count - done);
    const int rc = pack_piece(done, n);
    if (rc != MPI_SUCCESS) return rc;
    done += n;
  }
  return MPI_SUCCESS;
}

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lower_bound = 0, extent = 0;
  PMPI_Type_get_extent(type, &lower_bound, &extent);
  return extent;
}

}  // namespace

bool is_contiguous(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  const long long size = type_size(type);
  return size == true_extent && size == extent;
}

int copy_typed(const void* source, int send_count, MPI_Datatype send_type, void* destination, int recv_count,
               MPI_Datatype recv_type, MPI_Comm comm, int self_rank) {
  if (send_count == 0 && recv_count == 0) return MPI_SUCCESS;
  if (send_type == recv_type && send_count == recv_count && is_contiguous(send_type)) {
    MPI_Aint true_lb = 0, true_extent = 0;
    PMPI_Type_get_true_extent(send_type, &true_lb, &true_extent);
    std::memmove(static_cast<char*>(destination) + true_lb, static_cast<const char*>(source) + true_lb,
                 static_cast<std::size_t>(type_size(send_type)) * static_cast<std::size_t>(send_count));
    return MPI_SUCCESS;
  }
  // Different layouts: let the MPI library do the type conversion through a message to self. A
  // message longer than its receive is a truncation, reported as a message from another rank would be
  // (Open MPI's self Sendrecv cuts it silently); what fits is still copied.
  const int rc = PMPI_Sendrecv(source, send_count, send_type, self_rank, self_tag, destination, recv_count, recv_type,
                               self_rank, self_tag, comm, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS && send_count * type_size(send_type) > recv_count * type_size(recv_type))
    return MPI_ERR_TRUNCATE;
  return rc;
}

int pack_elements(const void* buffer, int count, MPI_Datatype type, std::byte* out, MPI_Comm comm, int self_rank) {
  const auto* elements = static_cast<const char*>(buffer);
  const MPI_Aint extent = extent_of(type);
  const long long element_bytes = type_size(type);
  return for_each_piece(
      count, element_bytes,
      [&](int first, int n) {
        const int bytes = static_cast<int>(n * element_bytes);
        int position = 0;
        const int rc = PMPI_Pack(elements + first * extent, n, type, out, bytes, &position, comm);
        if (rc == MPI_SUCCESS && position != bytes) return static_cast<int>(MPI_ERR_INTERN);  // not native
        out += position;
        return rc;
      },
      [&](int element) {
        const PackedBytesType packed(element_bytes);
        if (packed.status() != MPI_SUCCESS) return packed.status();
        const int rc = PMPI_Sendrecv(elements + element * extent, 1, type, self_rank, self_tag, out, 1, packed.get(),
                                     self_rank, self_tag, comm, MPI_STATUS_IGNORE);
        out += element_bytes;
        return rc;
      });
}

int unpack_elements(const std::byte* in, int count, MPI_Datatype type, void* buffer, MPI_Comm comm, int self_rank) {
  auto* elements = static_cast<char*>(buffer);
  const MPI_Aint extent = extent_of(type);
  const long long element_bytes = type_size(type);
  return for_each_piece(
      count, element_bytes,
      [&](int first, int n) {
        const int bytes = static_cast<int>(n * element_bytes);
        int position = 0;
        const int rc = PMPI_Unpack(in, bytes, &position, elements + first * extent, n, type, comm);
        in += position;
        return rc;
      },
      [&](int element) {
        const PackedBytesType packed(element_bytes);
        if (packed.status() != MPI_SUCCESS) return packed.status();
        const int rc = PMPI_Sendrecv(in, 1, packed.get(), self_rank, self_tag, elements + element * extent, 1, type,
                                     self_rank, self_tag, comm, MPI_STATUS_IGNORE);
        in += element_bytes;
        return rc;
      });
}

}  // namespace collshim
