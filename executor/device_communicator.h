// device_communicator: the world communicator a run's collectives take on its backend's buffers.
// The CPU backend's buffers are host memory, so MPI moves them directly. The CUDA backend's are
// device memory: NCCL where every rank has a GPU of its own (one rank per GPU, the Megatron
// layout), otherwise MPI through host copies (ranks sharing a GPU: NCCL refuses two ranks on one
// device).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "executor/communicator.h"
#include "kernels/backend.h"

namespace tessel {

enum class CommPath { direct, host_staged, nccl };

// "auto" picks as above; "mpi" forces MPI (host-staged on a GPU); "nccl" forces NCCL (RuntimeError
// where it cannot run). `ranks_sharing` is how many of the job's ranks use a GPU that another rank
// uses too (ranks_sharing_a_gpu), the same number on every rank, so every rank picks alike.
CommPath choose_comm_path(const std::string& backend, const std::string& request, int ranks_sharing);

// The GPU a rank uses as a number (gpu_identity() hashed to 52 bits, exact in a double, so that
// all_reduce_host can gather it); 0 for a rank without one.
double gpu_identity_key(const std::string& identity);
// Of these keys (one per rank), how many ranks use a GPU that another rank also uses.
int ranks_sharing_a_gpu(const std::vector<double>& keys);

// Collective over `world` (an MPI communicator on host memory): the communicator for `path`.
std::unique_ptr<Communicator> make_device_communicator(std::unique_ptr<Communicator> world, Backend& backend,
                                                       CommPath path);

const char* comm_path_name(CommPath path);

// The ranks sharing this node and this rank's place among them, from the launcher's environment
// (Open MPI's OMPI_COMM_WORLD_LOCAL_*, MPICH's MPI_LOCAL*, Slurm's SLURM_*); {1, 0} when unknown.
struct LocalRank {
    int size = 1, rank = 0;
};
LocalRank local_rank_from_environment();
// The node's ranks as the MPI job found them (set_node_local_rank, from MPI_Comm_split_type:
// right under any launcher), else from the environment.
LocalRank node_local_rank();
void set_node_local_rank(LocalRank local);

}  // namespace tessel
