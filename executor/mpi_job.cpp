#include "executor/mpi_job.h"

#include <malloc.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/errors.h"
#include "core/json_io.h"
#include "executor/device_communicator.h"
#include "executor/job_error.h"
#include "executor/mpi_check.h"
#include "executor/mpi_communicator.h"

namespace tessel {

namespace {

int exit_code_of(const std::exception& e) {
    if (dynamic_cast<const InputError*>(&e)) return 2;
    return 1;
}

}  // namespace

namespace {
// Open MPI 4.1 picks its basic linear MPI_Reduce_scatter_block (a reduce to one rank, then a
// scatter) for the ZeRO gradient shards of a CPU run: 2.5 ms for an 800 KB buffer on two ranks of
// one machine, against 0.1 ms for its butterfly (measured with calibrate's collectives). Select
// the butterfly unless the user chose an algorithm; MCA parameters are read from the environment
// when MPI initialises, and other MPI implementations ignore them.
void prefer_fast_reduce_scatter() {
    if (std::getenv("OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm") != nullptr) return;
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
    setenv("OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm", "4", 0);
}

// MPI's reductions malloc a temporary buffer of the message's size on every call and free it;
// glibc serves blocks that large with mmap and returns them with munmap, so every call page-faults
// its whole buffer in again (perf: a ZeRO-1 step's 800 KB reduce-scatters took 3 ms each, most
// of it in page faults, against 0.1 ms in a loop where glibc's adaptive threshold kicks in).
// Keep such blocks in the heap and the heap untrimmed: the process's peak memory is what it was.
void keep_freed_memory() {
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
}
}  // namespace

int run_mpi_job(const char* program, const std::function<void(std::unique_ptr<Communicator> world)>& body) {
    int initialized = 0;
    TESSEL_MPI_CHECK(MPI_Initialized(&initialized));
    const bool owns_mpi = !initialized;
    if (owns_mpi) {
        prefer_fast_reduce_scatter();
        keep_freed_memory();
        TESSEL_MPI_CHECK(MPI_Init(nullptr, nullptr));
    }
    int rank = 0, size = 1;
    TESSEL_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    TESSEL_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    // The ranks of this node, which pick the node's GPUs among them. Launchers export them only
    // sometimes (srun without --ntasks-per-node sets none of the variables), MPI always knows.
    MPI_Comm node = MPI_COMM_NULL;
    TESSEL_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    LocalRank local;
    TESSEL_MPI_CHECK(MPI_Comm_rank(node, &local.rank));
    TESSEL_MPI_CHECK(MPI_Comm_size(node, &local.size));
    TESSEL_MPI_CHECK(MPI_Comm_free(&node));
    set_node_local_rank(local);
    // Every rank reads the same inputs: rank 0 speaks for all of them (two ranks' warnings about
    // one file interleaved on the terminal).
    if (rank > 0) set_warning_sink([](const std::string&) {});
    auto finish = [&](int code) {
        if (owns_mpi) MPI_Finalize();  // unchecked: nothing is left to report an error to
        return code;
    };
    try {
        body(make_mpi_communicator(MPI_COMM_WORLD));
    } catch (const JobWideError& e) {
        if (e.print_on_this_rank) std::fprintf(stderr, "%s: %s\n", program, e.what());
        return finish(e.exit_code);
    } catch (const std::exception& e) {
        if (size == 1) {
            finish(0);
            throw;
        }
        std::fprintf(stderr, "%s: rank %d of %d: %s\n", program, rank, size, e.what());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, exit_code_of(e));
        return exit_code_of(e);  // not reached: MPI_Abort ends the process
    }
    return finish(0);
}

}  // namespace tessel
