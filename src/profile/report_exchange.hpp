#pragma once
#include <mpi.h>

#include <vector>

#include "profile/profile.hpp"

namespace collshim {

// Collective over `comm`: every rank's rows arrive at rank 0 (index = rank); other ranks get nothing.
std::vector<std::vector<ProfileRow>> gather_profile_rows(const std::vector<ProfileRow>& mine, MPI_Comm comm);

}  // namespace collshim
