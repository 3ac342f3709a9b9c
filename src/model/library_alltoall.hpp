#pragma once
// Alltoall schedules that MPI libraries run and collshim does not, for costing the libraries' own
// choice (native_decision.hpp); not collshim algorithms. Each is SMPI 3.32's code as a schedule, in
// the Alltoall block naming (send block d goes to rank d), with the rank symmetry it has.
#include "algorithms/schedule.hpp"

namespace collshim::model {

// Open MPI's basic linear (alltoall__basic_linear): one step; receives from rank + 1, rank + 2, ...
// and sends in reverse order, to rank − 1, rank − 2, ... (collshim's `linear` sends to rank + 1 first).
Schedule ompi_linear_alltoall_schedule(int p, int rank);
RankSymmetry ompi_linear_alltoall_symmetry(int p);

// The XOR pairwise exchange (alltoall__pair; p a power of two, it throws elsewhere): in step k − 1
// a rank exchanges its block with rank XOR k, k = 1..p−1 (collshim's `pairwise` shifts instead).
Schedule xor_pairwise_alltoall_schedule(int p, int rank);
RankSymmetry xor_pairwise_alltoall_symmetry(int p);

// MVAPICH2's scatter-destination exchange (alltoall__mvapich2_scatter_dest, MPICH's choice for
// medium blocks): rounds of at most 4 (its throttle factor) waited for together; in round t a rank
// receives from rank + 4t + i and sends to rank − 4t − i, i = 0..3 (itself: the own block's copy).
Schedule scatter_dest_alltoall_schedule(int p, int rank);
RankSymmetry scatter_dest_alltoall_symmetry(int p);

}  // namespace collshim::model
