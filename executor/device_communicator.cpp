#include "executor/device_communicator.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/errors.h"
#include "executor/host_staged_communicator.h"

#if defined(TESSEL_HAVE_CUDA)
#include "executor/nccl_communicator.h"
#endif

namespace tessel {

namespace {

int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    return (end && *end == '\0' && x >= 0 && x < (1 << 20)) ? int(x) : fallback;
}

}  // namespace

const char* comm_path_name(CommPath path) {
    switch (path) {
        case CommPath::direct: return "MPI";
        case CommPath::host_staged: return "MPI through host copies";
        case CommPath::nccl: return "NCCL";
    }
    return "?";
}

LocalRank local_rank_from_environment() {
    for (auto [size, rank] : {std::pair{"OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
                              std::pair{"MPI_LOCALNRANKS", "MPI_LOCALRANKID"},
                              std::pair{"SLURM_NTASKS_PER_NODE", "SLURM_LOCALID"}}) {
        const int s = env_int(size, 0), r = env_int(rank, -1);
        if (s > 0 && r >= 0 && r < s) return {s, r};
    }
    return {};
}

namespace {
std::optional<LocalRank> g_node_local_rank;  // set once by the MPI job, before any backend exists
}  // namespace

LocalRank node_local_rank() { return g_node_local_rank ? *g_node_local_rank : local_rank_from_environment(); }

void set_node_local_rank(LocalRank local) { g_node_local_rank = local; }

double gpu_identity_key(const std::string& identity) {
    if (identity.empty()) return 0.0;
    const std::uint64_t h = std::hash<std::string>{}(identity) & ((std::uint64_t(1) << 52) - 1);
    return double(h) + 1.0;
}

int ranks_sharing_a_gpu(const std::vector<double>& keys) {
    std::map<double, int> users;
    for (double k : keys)
        if (k != 0.0) ++users[k];
    int sharing = 0;
    for (const auto& [key, n] : users)
        if (n > 1) sharing += n;
    return sharing;
}

CommPath choose_comm_path(const std::string& backend, const std::string& request, int ranks_sharing) {
    if (request != "auto" && request != "mpi" && request != "nccl")
        throw InputError(fmt::format("--comm: expected auto, mpi or nccl, got \"{}\"", request));
    if (backend == "cpu") {
        if (request == "nccl") throw InputError("--comm nccl needs --backend cuda");
        return CommPath::direct;
    }
    if (request == "mpi") return CommPath::host_staged;
    if (request == "nccl" && ranks_sharing > 0)
        throw RuntimeError(fmt::format("--comm nccl: {} of the job's ranks share their GPU with another rank; NCCL "
                                       "needs one GPU per rank (use --comm mpi, or fewer ranks per node)",
                                       ranks_sharing));
    return ranks_sharing == 0 ? CommPath::nccl : CommPath::host_staged;
}

std::unique_ptr<Communicator> make_device_communicator(std::unique_ptr<Communicator> world, Backend& backend,
                                                       CommPath path) {
    switch (path) {
        case CommPath::direct: return world;
        case CommPath::host_staged: return make_host_staged_communicator(std::move(world), backend);
        case CommPath::nccl: {
#if defined(TESSEL_HAVE_CUDA)
            // Rank 0 makes the clique's id; the world (MPI, host memory) carries its 128 bytes.
            NcclUniqueId id;
            static_assert(sizeof(id.bytes) % sizeof(float) == 0);
            float carrier[sizeof(id.bytes) / sizeof(float)] = {};
            if (world->rank() == 0) {
                id = nccl_unique_id();
                std::memcpy(carrier, id.bytes.data(), sizeof(carrier));
            }
            world->broadcast(carrier, sizeof(carrier) / sizeof(float), 0);
            std::memcpy(id.bytes.data(), carrier, sizeof(carrier));
            return make_nccl_communicator(id, world->size(), world->rank(), backend);
#else
            throw RuntimeError("NCCL: this build has no CUDA backend");
#endif
        }
    }
    return world;
}

}  // namespace tessel
