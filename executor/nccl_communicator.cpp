// nccl_communicator: Communicator over NCCL on one CUDA stream. Collectives map one to one
// (in-place all-gather / reduce-scatter use NCCL's in-place convention: shard == full + rank *
// shard_n). Point-to-point operations run on the channels of prepare_neighbour_transfers, one
// two-rank communicator and stream per direction (nccl_communicator.h says why), each marked by
// an event that wait/test use. split uses ncclCommSplit,
// except that a one-rank group gets no NCCL communicator: each one holds device memory for its
// buffers, and a group of one has nothing to exchange (its gather and scatter are copies).
#include "executor/nccl_communicator.h"

#include <nccl.h>

#include <climits>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "executor/neighbour_channels.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/cuda_backend.h"

namespace tessel {
namespace {

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::sum ? ncclSum : ncclMax; }

class NcclCommunicator final : public Communicator {
 public:
  // comm == nullptr: a group of this rank alone, without NCCL.
  NcclCommunicator(ncclComm_t comm, cudaStream_t stream) : comm_(comm), stream_(stream) {
    if (comm_ == nullptr) return;
    TESSEL_NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
    TESSEL_NCCL_CHECK(ncclCommCount(comm_, &size_));
  }
  // While an exception unwinds (a failing rank on its way to MPI_Abort), the communicators are
  // aborted instead of destroyed: destroying waits for queued transfers whose peers may never come.
  ~NcclCommunicator() override {
    const bool unwinding = std::uncaught_exceptions() > 0;
    for (auto& [id, ev] : events_) (void)cudaEventDestroy(ev);
    for (auto* channels : {&send_to_, &recv_from_})
      for (auto& [peer, ch] : *channels) {
        if (unwinding) {
          (void)ncclCommAbort(ch.comm);
        } else {
          (void)cudaStreamSynchronize(ch.stream);
          (void)ncclCommDestroy(ch.comm);
        }
        (void)cudaStreamDestroy(ch.stream);
      }
    if (comm_ == nullptr) return;
    if (unwinding) {
      (void)ncclCommAbort(comm_);
      return;
    }
    (void)cudaStreamSynchronize(stream_);
    (void)ncclCommDestroy(comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int max_tag() const override { return INT_MAX; }

  void all_reduce(float* data, std::size_t n, ReduceOp op) override {
    if (size_ == 1 || n == 0) return;
    TESSEL_NCCL_CHECK(ncclAllReduce(data, data, n, ncclFloat, nccl_op(op), comm_, stream_));
  }
  void all_gather(const float* shard, float* full, std::size_t shard_n) override {
    if (shard_n == 0) return;
    if (size_ == 1) return copy_alone(full, shard, shard_n);
    TESSEL_NCCL_CHECK(ncclAllGather(shard, full, shard_n, ncclFloat, comm_, stream_));
  }
  void reduce_scatter(const float* full, float* shard, std::size_t shard_n) override {
    if (shard_n == 0) return;
    if (size_ == 1) return copy_alone(shard, full, shard_n);
    TESSEL_NCCL_CHECK(ncclReduceScatter(full, shard, shard_n, ncclFloat, ncclSum, comm_, stream_));
  }
  void broadcast(float* data, std::size_t n, int root) override {
    if (size_ == 1 || n == 0) return;
    TESSEL_NCCL_CHECK(ncclBroadcast(data, data, n, ncclFloat, root, comm_, stream_));
  }
  void barrier() override {
    double one = 1.0;
    all_reduce_host(&one, 1, ReduceOp::sum);
  }
  void all_reduce_host(double* values, std::size_t n, ReduceOp op) override {
    if (size_ == 1 || n == 0) return;
    double* d = nullptr;
    TESSEL_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&d), n * sizeof(double), stream_));
    TESSEL_CUDA_CHECK(
        cudaMemcpyAsync(d, values, n * sizeof(double), cudaMemcpyHostToDevice, stream_));
    TESSEL_NCCL_CHECK(ncclAllReduce(d, d, n, ncclDouble, nccl_op(op), comm_, stream_));
    TESSEL_CUDA_CHECK(
        cudaMemcpyAsync(values, d, n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    TESSEL_CUDA_CHECK(cudaFreeAsync(d, stream_));
    TESSEL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  P2PRequest isend(const float* data, std::size_t n, int peer, int tag) override {
    return post(true, const_cast<float*>(data), n, peer, tag);
  }
  P2PRequest irecv(float* data, std::size_t n, int peer, int tag) override {
    return post(false, data, n, peer, tag);
  }
  // Orders the compute stream after the transfer: kernels queued after wait see the received
  // data, and a sent buffer may be freed. The host does not block (use the backend's download or
  // synchronize to read results on the host).
  void wait(P2PRequest request) override {
    cudaEvent_t ev = take(request, "wait on");
    TESSEL_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev, 0));
    TESSEL_CUDA_CHECK(cudaEventDestroy(ev));
  }
  bool test(P2PRequest request) override {
    auto it = events_.find(request.id);
    if (it == events_.end())
      throw RuntimeError("nccl test of unknown transfer " + std::to_string(request.id));
    const cudaError_t st = cudaEventQuery(it->second);
    if (st == cudaErrorNotReady) return false;
    TESSEL_CUDA_CHECK(st);
    TESSEL_CUDA_CHECK(cudaEventDestroy(it->second));
    events_.erase(it);
    return true;
  }

  void prepare_neighbour_transfers() override {
    if (comm_ == nullptr || prepared_) return;
    prepared_ = true;
    // One ncclCommSplit per round, called by every rank of the group (a rank in none of the
    // round's channels without a colour); in a channel the sender is rank 0, the receiver rank 1.
    for (const auto& round : neighbour_channel_rounds(size_)) {
      int color = NCCL_SPLIT_NOCOLOR, key = 0;
      for (std::size_t c = 0; c < round.size(); ++c)
        if (round[c].from == rank_ || round[c].to == rank_) {
          color = static_cast<int>(c);
          key = round[c].from == rank_ ? 0 : 1;
        }
      ncclComm_t sub = nullptr;
      TESSEL_NCCL_CHECK(ncclCommSplit(comm_, color, key, &sub, nullptr));
      if (color == NCCL_SPLIT_NOCOLOR) continue;
      if (sub == nullptr) throw RuntimeError("ncclCommSplit gave no communicator for a neighbour channel");
      Channel ch{sub, nullptr};
      TESSEL_CUDA_CHECK(cudaStreamCreateWithFlags(&ch.stream, cudaStreamNonBlocking));
      const NeighbourChannel& mine = round[static_cast<std::size_t>(color)];
      if (key == 0) send_to_[mine.to] = ch;
      else recv_from_[mine.from] = ch;
    }
  }

  std::unique_ptr<Communicator> split(const std::vector<std::vector<int>>& groups) override {
    int color = NCCL_SPLIT_NOCOLOR, key = 0;
    std::size_t members = 0;
    for (std::size_t g = 0; g < groups.size(); ++g)
      for (std::size_t i = 0; i < groups[g].size(); ++i)
        if (groups[g][i] == rank_) {
          color = static_cast<int>(g);
          key = static_cast<int>(i);
          members = groups[g].size();
        }
    const bool alone = members == 1;
    if (comm_ == nullptr)  // nothing to split: this rank is the whole group
      return alone ? std::make_unique<NcclCommunicator>(nullptr, stream_) : nullptr;
    // ncclCommSplit is collective over comm_: every rank calls it, a lone one without a colour.
    ncclComm_t sub = nullptr;
    TESSEL_NCCL_CHECK(ncclCommSplit(comm_, alone ? NCCL_SPLIT_NOCOLOR : color, key, &sub, nullptr));
    if (alone) return std::make_unique<NcclCommunicator>(nullptr, stream_);
    if (sub == nullptr) return nullptr;
    return std::make_unique<NcclCommunicator>(sub, stream_);
  }

 private:
  // A one-rank group's gather or scatter: the shard is the whole buffer.
  void copy_alone(float* dst, const float* src, std::size_t n) {
    if (dst == src) return;
    TESSEL_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToDevice, stream_));
  }

  struct Channel {
    ncclComm_t comm;
    cudaStream_t stream;
  };

  P2PRequest post(bool send, float* data, std::size_t n, int peer, int tag) {
    if (tag < 0) throw RuntimeError("nccl point-to-point: negative tag " + std::to_string(tag));
    if (peer < 0 || peer >= size_ || peer == rank_)
      throw RuntimeError("nccl point-to-point: peer " + std::to_string(peer) + " in a group of " +
                         std::to_string(size_) + " (rank " + std::to_string(rank_) + ")");
    auto& channels = send ? send_to_ : recv_from_;
    auto it = channels.find(peer);
    if (it == channels.end())
      throw RuntimeError("nccl point-to-point: no channel between rank " + std::to_string(rank_) +
                         " and " + std::to_string(peer) +
                         " (only ring neighbours, after prepare_neighbour_transfers)");
    const Channel& ch = it->second;
    // The transfer starts after what the compute stream holds so far: the kernel that wrote a
    // sent buffer, the allocation of a receive buffer.
    cudaEvent_t ready = nullptr, done = nullptr;
    TESSEL_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    TESSEL_CUDA_CHECK(cudaEventRecord(ready, stream_));
    TESSEL_CUDA_CHECK(cudaStreamWaitEvent(ch.stream, ready, 0));
    TESSEL_CUDA_CHECK(cudaEventDestroy(ready));
    if (n > 0) {
      if (send) TESSEL_NCCL_CHECK(ncclSend(data, n, ncclFloat, 1, ch.comm, ch.stream));
      else TESSEL_NCCL_CHECK(ncclRecv(data, n, ncclFloat, 0, ch.comm, ch.stream));
    }
    TESSEL_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    TESSEL_CUDA_CHECK(cudaEventRecord(done, ch.stream));
    const std::uint64_t id = next_id_++;
    events_.emplace(id, done);
    return P2PRequest{id};
  }

  cudaEvent_t take(P2PRequest request, const char* what) {
    auto it = events_.find(request.id);
    if (it == events_.end())
      throw RuntimeError(std::string("nccl ") + what + " unknown transfer " +
                         std::to_string(request.id));
    cudaEvent_t ev = it->second;
    events_.erase(it);
    return ev;
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  int rank_ = 0, size_ = 1;
  std::uint64_t next_id_ = 1;
  bool prepared_ = false;
  std::map<int, Channel> send_to_, recv_from_;  // by peer
  std::unordered_map<std::uint64_t, cudaEvent_t> events_;
};

}  // namespace

NcclUniqueId nccl_unique_id() {
  ncclUniqueId id;
  TESSEL_NCCL_CHECK(ncclGetUniqueId(&id));
  NcclUniqueId out;
  static_assert(sizeof(id.internal) == sizeof(out.bytes), "NCCL_UNIQUE_ID_BYTES changed");
  std::memcpy(out.bytes.data(), id.internal, sizeof id.internal);
  return out;
}

std::unique_ptr<Communicator> make_nccl_communicator(const NcclUniqueId& id, int nranks, int rank,
                                                     Backend& backend) {
  cudaStream_t stream = cuda_backend_stream(backend);
  if (stream == nullptr)
    throw RuntimeError(std::string("NCCL communicator needs the cuda backend, got ") +
                       backend.name());
  ncclUniqueId nid;
  std::memcpy(nid.internal, id.bytes.data(), sizeof nid.internal);
  ncclComm_t comm = nullptr;
  TESSEL_NCCL_CHECK(ncclCommInitRank(&comm, nranks, nid, rank));
  return std::make_unique<NcclCommunicator>(comm, stream);
}

}  // namespace tessel
