#pragma once
// The model's decision made once per communicator and key: one rank costs the candidates and one
// broadcast on the shadow communicator gives every rank the same verdict, so that all run the same
// algorithm (the ranks' own predictions could differ only if their inputs did, but p ranks costing
// the same call would also take p times the CPU). A failure of the model on the costing rank becomes
// a verdict of native with the reason, never an exception on one rank and a hang on the others.
#include <mpi.h>

#include <deque>
#include <functional>

#include "model/model_decision.hpp"

namespace collshim::model {

// Collective over `comm`: rank 0 calls `compute`; every rank returns its verdict, with the choices
// mapped to the entries of `choices` (the same table on every rank, as the selector interns it) and
// the ranked list cut to its first few.
ModelVerdict agree_on_verdict(MPI_Comm comm, const std::function<ModelVerdict()>& compute,
                              const std::deque<AlgorithmChoice>& choices, const AlgorithmChoice* native);

}  // namespace collshim::model
