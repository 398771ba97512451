// Under mpirun on one host, with the launcher's local-rank variables removed: the MPI job must
// still know the node's ranks (node_local_rank), since make_backend picks each rank's GPU by them.
// Every rank is on this host, so the node's ranks are the world's, in world order.
#include <cstdio>
#include <cstdlib>

#include "executor/device_communicator.h"
#include "executor/mpi_job.h"

int main() {
    for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALNRANKS",
                          "MPI_LOCALRANKID", "SLURM_NTASKS_PER_NODE", "SLURM_LOCALID"})
        unsetenv(v);
    int bad = 0;
    const int code = tessel::run_mpi_job("node_rank_check", [&](std::unique_ptr<tessel::Communicator> world) {
        const tessel::LocalRank l = tessel::node_local_rank();
        if (l.size != world->size() || l.rank != world->rank()) {
            std::fprintf(stderr, "rank %d of %d: node_local_rank says %d of %d\n", world->rank(), world->size(),
                         l.rank, l.size);
            bad = 1;
        }
        double any = bad;
        world->all_reduce_host(&any, 1, tessel::ReduceOp::max);
        bad = any > 0;
    });
    return code != 0 ? code : bad;
}
