#pragma once
// Alltoall schedules that MPI libraries run and collshim does not, for costing the libraries' own
// choice (native_decision.hpp); not collshim algorithms. Each is a library's code as a schedule, in
// the Alltoall block naming (send block d goes to rank d), with the rank symmetry it has.
#include "algorithms/engine/schedule.hpp"

namespace collshim::model {

// Open MPI's basic linear (alltoall__basic_linear): one step; receives from rank + 1, rank + 2, ...
// and sends in reverse order, to rank − 1, rank − 2, ... (collshim's `linear` sends to rank + 1 first).
Schedule ompi_linear_alltoall_schedule(int p, int rank);
RankSymmetry ompi_linear_alltoall_symmetry(int p);

// Open MPI's basic linear Alltoallv (ompi_coll_base_alltoallv_intra_basic_linear): the own block
// copied first, then every receive and every send posted at once, both in rank order 0, 1, ..., p − 1
// (its Alltoall starts from the next rank instead); empty blocks post nothing. No rank symmetry: every
// rank's first message goes to rank 0.
Schedule ompi_linear_alltoallv_schedule(int p, int rank);

// The XOR pairwise exchange (alltoall__pair; p a power of two, it throws elsewhere): in step k − 1
// a rank exchanges its block with rank XOR k, k = 1..p−1 (collshim's `pairwise` shifts instead).
Schedule xor_pairwise_alltoall_schedule(int p, int rank);
RankSymmetry xor_pairwise_alltoall_symmetry(int p);

// The scattered exchange in rounds of at most `throttle` pairs waited for together: in round t a rank
// receives from rank + throttle·t + i and sends to rank − throttle·t − i, i = 0..throttle − 1
// (itself: the own block's copy). SMPI's alltoall__mvapich2_scatter_dest (its MPICH selector's choice
// for medium blocks) throttles at 4; MPICH 4's MPIR_Alltoall_intra_scattered at
// MPIR_CVAR_ALLTOALL_THROTTLE, 32 by default (0 there: all at once).
// SMPI's alltoallv__bruck (its MPICH selector's Alltoallv) is the same exchange at 4, posting empty
// messages too; MPICH 4's MPIR_Alltoallv_intra_scattered at MPIR_CVAR_ALLTOALL_THROTTLE, skipping them.
inline constexpr int scatter_dest_throttle = 4;
inline constexpr int mpich_alltoall_throttle = 32;
Schedule scattered_alltoall_schedule(int p, int rank, int throttle);
Schedule scatter_dest_alltoall_schedule(int p, int rank);     // scatter_dest_throttle
Schedule mpich_scattered_alltoall_schedule(int p, int rank);  // mpich_alltoall_throttle
RankSymmetry scattered_alltoall_symmetry(int p);

}  // namespace collshim::model
