// Which path a run's collectives take, by backend, request, ranks per node and GPUs per node.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/errors.h"
#include "executor/device_communicator.h"

namespace tessel {
namespace {

TEST(DeviceCommunicator, CpuBuffersGoStraightToMpi) {
    EXPECT_EQ(choose_comm_path("cpu", "auto", 8, 0), CommPath::direct);
    EXPECT_EQ(choose_comm_path("cpu", "mpi", 8, 0), CommPath::direct);
    EXPECT_THROW(choose_comm_path("cpu", "nccl", 1, 0), InputError);
}

TEST(DeviceCommunicator, NcclWhenEveryRankHasItsOwnGpu) {
    EXPECT_EQ(choose_comm_path("cuda", "auto", 8, 8), CommPath::nccl);
    EXPECT_EQ(choose_comm_path("cuda", "auto", 1, 1), CommPath::nccl);
    EXPECT_EQ(choose_comm_path("cuda", "nccl", 4, 8), CommPath::nccl);
}

TEST(DeviceCommunicator, RanksSharingAGpuStageThroughTheHost) {
    EXPECT_EQ(choose_comm_path("cuda", "auto", 4, 1), CommPath::host_staged);
    EXPECT_EQ(choose_comm_path("cuda", "mpi", 8, 8), CommPath::host_staged);
    EXPECT_THROW(choose_comm_path("cuda", "nccl", 4, 1), RuntimeError);
}

TEST(DeviceCommunicator, UnknownRequestIsBadInput) {
    EXPECT_THROW(choose_comm_path("cuda", "gloo", 1, 1), InputError);
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
