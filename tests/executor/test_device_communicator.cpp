// Which path a run's collectives take, by backend, request, ranks per node and GPUs per node.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"
#include "executor/device_communicator.h"

namespace tessel {
namespace {

TEST(DeviceCommunicator, CpuBuffersGoStraightToMpi) {
    EXPECT_EQ(choose_comm_path("cpu", "auto", 0), CommPath::direct);
    EXPECT_EQ(choose_comm_path("cpu", "mpi", 0), CommPath::direct);
    EXPECT_THROW(choose_comm_path("cpu", "nccl", 0), InputError);
}

TEST(DeviceCommunicator, NcclWhenEveryRankHasItsOwnGpu) {
    EXPECT_EQ(choose_comm_path("cuda", "auto", 0), CommPath::nccl);
    EXPECT_EQ(choose_comm_path("cuda", "nccl", 0), CommPath::nccl);
}

TEST(DeviceCommunicator, RanksSharingAGpuStageThroughTheHost) {
    EXPECT_EQ(choose_comm_path("cuda", "auto", 4), CommPath::host_staged);
    EXPECT_EQ(choose_comm_path("cuda", "mpi", 0), CommPath::host_staged);
    EXPECT_THROW(choose_comm_path("cuda", "nccl", 2), RuntimeError);
}

TEST(DeviceCommunicator, UnknownRequestIsBadInput) {
    EXPECT_THROW(choose_comm_path("cuda", "gloo", 0), InputError);
}

std::vector<double> keys(const std::vector<std::string>& identities) {
    std::vector<double> out;
    for (const auto& id : identities) out.push_back(gpu_identity_key(id));
    return out;
}

TEST(DeviceCommunicator, SharingIsTheSameGpuOnTheSameHost) {
    // Eight ranks on eight GPUs of one host.
    std::vector<std::string> eight;
    for (int i = 0; i < 8; ++i) eight.push_back(fmt::format("node-a/0000:{:02x}:00.0", 0x1b + i));
    EXPECT_EQ(ranks_sharing_a_gpu(keys(eight)), 0);
    // Two hosts whose GPUs have the same bus ids: still one GPU each.
    EXPECT_EQ(ranks_sharing_a_gpu(keys({"node-a/0000:1b:00.0", "node-b/0000:1b:00.0"})), 0);
    // Each rank sees one GPU, device 0, through its own CUDA_VISIBLE_DEVICES: the bus ids differ,
    // so no rank shares (counting visible devices against ranks would have said they all do).
    EXPECT_EQ(ranks_sharing_a_gpu(keys({"node-a/0000:1b:00.0", "node-a/0000:43:00.0"})), 0);
    // Four ranks on one GPU, beside a rank with its own.
    EXPECT_EQ(ranks_sharing_a_gpu(keys({"h/0000:1b:00.0", "h/0000:1b:00.0", "h/0000:1b:00.0", "h/0000:1b:00.0",
                                        "h/0000:43:00.0"})),
              4);
    // Ranks without a GPU share nothing.
    EXPECT_EQ(ranks_sharing_a_gpu(keys({"", "", ""})), 0);
    EXPECT_EQ(gpu_identity_key(""), 0.0);
    EXPECT_NE(gpu_identity_key("h/0000:1b:00.0"), 0.0);
}

TEST(DeviceCommunicator, LocalRankFromOpenMpiEnvironment) {
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
    const LocalRank l = local_rank_from_environment();
    EXPECT_EQ(l.size, 4);
    EXPECT_EQ(l.rank, 3);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "7", 1);  // outside the size: not believed
    const LocalRank bad = local_rank_from_environment();
    EXPECT_TRUE(bad.size != 4 || bad.rank != 7);
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

}  // namespace
}  // namespace tessel
