#include "executor/pipeline_runner.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace tessel {

int pipeline_tag(int microbatch, int stage, int num_stages, bool backward) {
    return (microbatch * num_stages + stage) * 2 + (backward ? 1 : 0);
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

    auto receive = [&](int from_stage, int tag) {
        DeviceArray<float> buf = ctx.floats(width);
        step.pp->wait(step.pp->irecv(buf.data(), width, from_stage % step.pp_size, tag));
        return buf;
    };
    auto send = [&](DeviceArray<float> buf, int to_stage, int tag) {
        P2PRequest r = step.pp->isend(buf.data(), width, to_stage % step.pp_size, tag);
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
        const int s = where.stage;
        if (a.op == PipelineOp::forward) {
            DeviceArray<float> input;
            MicrobatchTokens tokens;
            if (where.first() || where.last()) tokens = step.tokens(a.microbatch);
            if (!where.first()) input = receive(s - 1, pipeline_tag(a.microbatch, s, step.num_stages, false));
            double mb_loss = 0;
            DeviceArray<float> out = chunk.forward(ctx, a.microbatch, std::move(input), tokens, step.dloss, &mb_loss);
            loss += mb_loss;
            if (!where.last()) send(std::move(out), s + 1, pipeline_tag(a.microbatch, s + 1, step.num_stages, false));
        } else {
            DeviceArray<float> dout;
            if (!where.last()) dout = receive(s + 1, pipeline_tag(a.microbatch, s, step.num_stages, true));
            DeviceArray<float> din = chunk.backward(ctx, a.microbatch, std::move(dout));
            if (!where.first()) send(std::move(din), s - 1, pipeline_tag(a.microbatch, s - 1, step.num_stages, true));
        }
        if (!sends.empty()) free_completed_sends();
    }
    for (Pending& p : sends) step.pp->wait(p.request);
    return loss;
}

}  // namespace tessel
