// MpiCommunicator: each operation is one MPI call on the group's own communicator, checked by
// TESSEL_MPI_CHECK. Errors return (MPI_ERRORS_RETURN) so that they become exceptions that name
// the call; the run command then aborts the job (mpi_job.cpp).
#include "executor/mpi_communicator.h"

#include <fmt/format.h>

#include <climits>
#include <unordered_map>

#include "core/errors.h"
#include "executor/mpi_check.h"

namespace tessel {

namespace detail {
void throw_mpi_error(int code, const char* call, const char* file, int line) {
    char text[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    MPI_Error_string(code, text, &len);
    int rank = -1, initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    throw RuntimeError(fmt::format("MPI failure: {} returned {} ({}) at {}:{} on world rank {}", call, code,
                                   std::string(text, len), file, line, rank));
}
}  // namespace detail

namespace {

int checked_count(std::size_t n) {
    if (n > std::size_t(INT_MAX))
        throw RuntimeError(fmt::format("MPI transfer of {} elements exceeds MPI's int count", n));
    return int(n);
}

MPI_Op mpi_op(ReduceOp op) { return op == ReduceOp::sum ? MPI_SUM : MPI_MAX; }

class MpiCommunicator final : public Communicator {
public:
    explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
        TESSEL_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
        TESSEL_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
        TESSEL_MPI_CHECK(MPI_Comm_size(comm_, &size_));
        int* ub = nullptr;
        int flag = 0;
        TESSEL_MPI_CHECK(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &ub, &flag));
        max_tag_ = flag && ub ? *ub : 32767;  // the MPI standard's guaranteed minimum
    }
    // Destructors cannot throw, so these calls are left unchecked: a transfer still pending here
    // belongs to a failing run.
    ~MpiCommunicator() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized) return;
        for (auto& [id, req] : pending_) {
            MPI_Cancel(&req);
            MPI_Request_free(&req);
        }
        MPI_Comm_free(&comm_);
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int max_tag() const override { return max_tag_; }

    void all_reduce(float* data, std::size_t n, ReduceOp op) override {
        if (size_ == 1 || n == 0) return;
        TESSEL_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, checked_count(n), MPI_FLOAT, mpi_op(op), comm_));
    }
    void all_gather(const float* shard, float* full, std::size_t shard_n) override {
        if (shard_n == 0) return;
        const int count = checked_count(shard_n);
        if (shard == full + std::size_t(rank_) * shard_n) {
            TESSEL_MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_FLOAT, full, count, MPI_FLOAT, comm_));
        } else {
            TESSEL_MPI_CHECK(MPI_Allgather(shard, count, MPI_FLOAT, full, count, MPI_FLOAT, comm_));
        }
    }
    void reduce_scatter(const float* full, float* shard, std::size_t shard_n) override {
        if (shard_n == 0) return;
        TESSEL_MPI_CHECK(
            MPI_Reduce_scatter_block(full, shard, checked_count(shard_n), MPI_FLOAT, MPI_SUM, comm_));
    }
    void broadcast(float* data, std::size_t n, int root) override {
        if (size_ == 1 || n == 0) return;
        TESSEL_MPI_CHECK(MPI_Bcast(data, checked_count(n), MPI_FLOAT, root, comm_));
    }
    void barrier() override { TESSEL_MPI_CHECK(MPI_Barrier(comm_)); }
    void all_reduce_host(double* values, std::size_t n, ReduceOp op) override {
        if (size_ == 1 || n == 0) return;
        TESSEL_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, checked_count(n), MPI_DOUBLE, mpi_op(op), comm_));
    }

    P2PRequest isend(const float* data, std::size_t n, int peer, int tag) override {
        check_tag(tag);
        MPI_Request req;
        TESSEL_MPI_CHECK(MPI_Isend(data, checked_count(n), MPI_FLOAT, peer, tag, comm_, &req));
        return remember(req);
    }
    P2PRequest irecv(float* data, std::size_t n, int peer, int tag) override {
        check_tag(tag);
        MPI_Request req;
        TESSEL_MPI_CHECK(MPI_Irecv(data, checked_count(n), MPI_FLOAT, peer, tag, comm_, &req));
        return remember(req);
    }
    void wait(P2PRequest request) override {
        auto it = pending_.find(request.id);
        if (it == pending_.end()) throw RuntimeError(fmt::format("wait on unknown transfer {}", request.id));
        MPI_Request req = it->second;
        pending_.erase(it);
        TESSEL_MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }

    bool test(P2PRequest request) override {
        auto it = pending_.find(request.id);
        if (it == pending_.end()) throw RuntimeError(fmt::format("test of unknown transfer {}", request.id));
        int done = 0;
        TESSEL_MPI_CHECK(MPI_Test(&it->second, &done, MPI_STATUS_IGNORE));
        if (done) pending_.erase(it);
        return done != 0;
    }

    std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups) override {
        int color = MPI_UNDEFINED, key = 0;
        for (std::size_t g = 0; g < groups.size(); ++g)
            for (std::size_t i = 0; i < groups[g].size(); ++i)
                if (groups[g][i] == rank_) {
                    color = int(g);
                    key = int(i);
                }
        MPI_Comm sub = MPI_COMM_NULL;
        TESSEL_MPI_CHECK(MPI_Comm_split(comm_, color, key, &sub));
        if (sub == MPI_COMM_NULL) return nullptr;
        return std::make_unique<MpiCommunicator>(sub);
    }

private:
    MPI_Comm comm_;
    int rank_ = 0, size_ = 1, max_tag_ = 32767;
    std::uint64_t next_id_ = 1;
    std::unordered_map<std::uint64_t, MPI_Request> pending_;

    void check_tag(int tag) const {
        if (tag < 0 || tag > max_tag_)
            throw RuntimeError(fmt::format("message tag {} outside MPI's range 0..{} (too many microbatches "
                                           "times stages for this MPI)", tag, max_tag_));
    }
    P2PRequest remember(MPI_Request req) {
        const std::uint64_t id = next_id_++;
        pending_.emplace(id, req);
        return P2PRequest{id};
    }
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm comm) {
    MPI_Comm dup = MPI_COMM_NULL;
    TESSEL_MPI_CHECK(MPI_Comm_dup(comm, &dup));
    return std::make_unique<MpiCommunicator>(dup);
}

}  // namespace tessel
