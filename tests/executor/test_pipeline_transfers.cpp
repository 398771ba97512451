// The pipeline's transfers as NCCL carries them (executor/nccl_communicator.h): one channel per
// direction between ring neighbours, matched by order, not tag. Two properties make that safe,
// checked here on the real schedules (core/schedule.h) and the runner's own transfer list:
//  1. on every channel the receiver posts its receives in the order the sender sends (tags equal);
//  2. with sends that hold their channel until the receive is posted (NCCL's rendezvous), no
//     schedule deadlocks. A transfer model plays the channels out; as a control, the same model
//     with all transfers on one queue per rank (the old NCCL layout) deadlocks 1F1B.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "core/schedule.h"
#include "executor/neighbour_channels.h"
#include "executor/pipeline_runner.h"

namespace tessel {
namespace {

struct Case {
    Schedule schedule;
    int pp, microbatches, virtual_stages;
};

std::vector<Case> every_case() {
    std::vector<Case> out;
    for (int pp = 2; pp <= 6; ++pp)
        for (int m = 1; m <= 3 * pp; ++m) {
            out.push_back({Schedule::gpipe, pp, m, 1});
            out.push_back({Schedule::one_f_one_b, pp, m, 1});
            if (m % pp == 0)
                for (int v = 2; v <= 3; ++v) out.push_back({Schedule::interleaved, pp, m, v});
        }
    return out;
}

// One rank's actions as the GPU queues them: receive (if any), compute, send (if any).
struct Op {
    enum Kind { receive, compute, send } kind;
    int peer = -1, tag = 0;
};

std::vector<std::vector<Op>> rank_ops(const Case& c) {
    const auto schedules = pipeline_schedule(c.schedule, c.pp, c.microbatches, c.virtual_stages);
    const int stages = c.pp * c.virtual_stages;
    std::vector<std::vector<Op>> ops(schedules.size());
    for (int r = 0; r < int(schedules.size()); ++r)
        for (const PipelineAction& a : schedules[r]) {
            const ActionTransfers t = action_transfers(a, a.chunk * c.pp + r, stages, c.pp);
            if (t.receive.peer >= 0) ops[r].push_back({Op::receive, t.receive.peer, t.receive.tag});
            ops[r].push_back({Op::compute});
            if (t.send.peer >= 0) ops[r].push_back({Op::send, t.send.peer, t.send.tag});
        }
    return ops;
}

std::string name(const Case& c) {
    return std::string(to_string(c.schedule)) + " pp" + std::to_string(c.pp) + " m" + std::to_string(c.microbatches) + " v" +
           std::to_string(c.virtual_stages);
}

// Plays the ranks' queues out. Each rank runs a compute queue in order and one queue per
// transfer channel (per_direction) or one for all its transfers. A receive waits for the compute
// queued before it (its buffer) and the compute after it waits for the receive; a send waits for
// the compute before it. A transfer completes once both ends have reached it at the heads of
// their queues. Returns whether everything completed.
bool completes(const Case& c, bool per_direction) {
    const auto ops = rank_ops(c);
    const int n = int(ops.size());
    struct Node {
        std::vector<int> after;
        int partner = -1;
        bool transfer = false, started = false, done = false;
    };
    std::vector<Node> nodes;
    std::map<std::pair<int, int>, std::vector<int>> sent, received;  // (from, to) -> nodes in order
    for (int r = 0; r < n; ++r) {
        int last_compute = -1, receive_before = -1;
        std::map<int, int> last_on_queue;  // queue -> its last node
        for (const Op& op : ops[r]) {
            const int id = int(nodes.size());
            Node node;
            if (last_compute >= 0) node.after.push_back(last_compute);
            if (op.kind == Op::compute) {
                if (receive_before >= 0) node.after.push_back(receive_before);
                receive_before = -1;
                last_compute = id;
            } else {
                node.transfer = true;
                // Per direction: a queue per (peer, direction); else one queue for everything.
                const int queue = !per_direction ? 0 : op.kind == Op::send ? 1 + op.peer : -1 - op.peer;
                if (last_on_queue.count(queue)) node.after.push_back(last_on_queue[queue]);
                last_on_queue[queue] = id;
                if (op.kind == Op::receive) receive_before = id;
                (op.kind == Op::send ? sent[{r, op.peer}] : received[{op.peer, r}]).push_back(id);
            }
            nodes.push_back(node);
        }
    }
    for (const auto& [channel, sends] : sent) {
        const auto& receives = received[channel];
        if (receives.size() != sends.size()) return false;
        for (std::size_t k = 0; k < sends.size(); ++k) {
            nodes[sends[k]].partner = receives[k];
            nodes[receives[k]].partner = sends[k];
        }
    }
    for (bool progress = true; progress;) {
        progress = false;
        for (Node& node : nodes) {
            if (!node.started) {
                bool ready = true;
                for (int a : node.after) ready = ready && nodes[a].done;
                if (ready) node.started = progress = true;
            }
            if (node.started && !node.done && (!node.transfer || nodes[node.partner].started))
                node.done = progress = true;
        }
    }
    for (const Node& node : nodes)
        if (!node.done) return false;
    return true;
}

TEST(PipelineTransfers, EachChannelReceivesInItsSendOrder) {
    for (const Case& c : every_case()) {
        const auto ops = rank_ops(c);
        std::map<std::pair<int, int>, std::vector<int>> sent, received;
        for (int r = 0; r < int(ops.size()); ++r)
            for (const Op& op : ops[r]) {
                if (op.kind == Op::send) sent[{r, op.peer}].push_back(op.tag);
                if (op.kind == Op::receive) received[{op.peer, r}].push_back(op.tag);
            }
        EXPECT_EQ(sent, received) << name(c);
        for (const auto& [channel, tags] : sent) {
            const int from = channel.first, to = channel.second;
            EXPECT_TRUE(to == (from + 1) % c.pp || to == (from + c.pp - 1) % c.pp)
                << name(c) << ": " << from << " -> " << to << " is not between ring neighbours";
        }
    }
}

TEST(PipelineTransfers, OneChannelPerDirectionNeverDeadlocks) {
    for (const Case& c : every_case()) EXPECT_TRUE(completes(c, true)) << name(c);
}

TEST(PipelineTransfers, OneQueueForAllTransfersDeadlocks1F1B) {
    // Stage 0 queues send(a1) before recv(g0); stage 1 queues send(g0) before recv(a1).
    EXPECT_FALSE(completes({Schedule::one_f_one_b, 2, 4, 1}, false));
    EXPECT_TRUE(completes({Schedule::gpipe, 2, 4, 1}, false));  // all sends of a direction first
}

TEST(NeighbourChannels, EveryDirectionOnceInRoundsOfDisjointPairs) {
    EXPECT_TRUE(neighbour_channel_rounds(1).empty());
    for (int size = 2; size <= 9; ++size) {
        std::set<std::pair<int, int>> expected, got;
        for (int r = 0; r < size; ++r) {
            expected.insert({r, (r + 1) % size});
            expected.insert({r, (r + size - 1) % size});
        }
        std::size_t count = 0;
        for (const auto& round : neighbour_channel_rounds(size)) {
            std::set<int> ends;
            for (const NeighbourChannel& ch : round) {
                EXPECT_TRUE(ends.insert(ch.from).second) << "size " << size << ": rank " << ch.from << " twice";
                EXPECT_TRUE(ends.insert(ch.to).second) << "size " << size << ": rank " << ch.to << " twice";
                got.insert({ch.from, ch.to});
                ++count;
            }
        }
        EXPECT_EQ(got, expected) << "size " << size;
        EXPECT_EQ(count, size == 2 ? 2u : 2u * size) << "size " << size;  // each channel once
        EXPECT_LE(neighbour_channel_rounds(size).size(), 6u) << "size " << size;
    }
}

}  // namespace
}  // namespace tessel
