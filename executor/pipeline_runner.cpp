#include "executor/pipeline_runner.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

int pipeline_tag(int microbatch, int stage, int num_stages, bool backward) {
    return (microbatch * num_stages + stage) * 2 + (backward ? 1 : 0);
}

ActionTransfers action_transfers(const PipelineAction& a, int s, int num_stages, int pp_size) {
    ActionTransfers t;
    const bool forward = a.op == PipelineOp::forward;
    const int from = forward ? s - 1 : s + 1, to = forward ? s + 1 : s - 1;
    if (from >= 0 && from < num_stages) t.receive = {from % pp_size, pipeline_tag(a.microbatch, s, num_stages, !forward)};
    if (to >= 0 && to < num_stages) t.send = {to % pp_size, pipeline_tag(a.microbatch, to, num_stages, !forward)};
    return t;
}

double run_pipeline_step(const LayerContext& ctx, const PipelineStep& step) {
    const std::size_t width = std::size_t(ctx.dims.local_tokens) * ctx.dims.hidden;
    struct Pending {
        P2PRequest request;
        DeviceArray<float> buffer;
    };
    std::vector<Pending> sends;
    double loss = 0;
    const int me = step.pp ? step.pp->rank() : 0;

    auto receive = [&](const StageTransfer& t) {
        DeviceArray<float> buf = ctx.floats(width);
        step.pp->wait(step.pp->irecv(buf.data(), width, t.peer, t.tag));
        return buf;
    };
    auto send = [&](DeviceArray<float> buf, const StageTransfer& t) {
        P2PRequest r = step.pp->isend(buf.data(), width, t.peer, t.tag);
        sends.push_back({r, std::move(buf)});
    };
    auto free_completed_sends = [&] {
        std::erase_if(sends, [&](Pending& p) { return step.pp->test(p.request); });
    };

    for (const PipelineAction& a : *step.actions) {
        if (step.before_action) step.before_action(a);
        if (a.chunk < 0 || std::size_t(a.chunk) >= step.chunks.size())
            throw RuntimeError(fmt::format("pipeline rank {}: schedule names chunk {} of {}", me, a.chunk,
                                           step.chunks.size()));
        ModelChunk& chunk = *step.chunks[a.chunk];
        const ChunkPlacement& where = chunk.placement();
        const ActionTransfers t = action_transfers(a, where.stage, step.num_stages, step.pp_size);
        DeviceArray<float> received;
        if (t.receive.peer >= 0) received = receive(t.receive);
        DeviceArray<float> out;
        if (a.op == PipelineOp::forward) {
            MicrobatchTokens tokens;
            if (where.first() || where.last()) tokens = step.tokens(a.microbatch);
            double mb_loss = 0;
            out = chunk.forward(ctx, a.microbatch, std::move(received), tokens, step.dloss, &mb_loss);
            loss += mb_loss;
        } else {
            out = chunk.backward(ctx, a.microbatch, std::move(received));
        }
        if (t.send.peer >= 0) send(std::move(out), t.send);
        if (!sends.empty()) free_completed_sends();
    }
    for (Pending& p : sends) step.pp->wait(p.request);
    return loss;
}

}  // namespace tessel
