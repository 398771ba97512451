#include "executor/layers/context_parallel_attention.h"

namespace tessel {

namespace {

// Where the rows of one (rank, chunk, batch) block sit: in the gathered [rank][chunk][batch][t]
// buffer, and in the full (B, T) sequence.
struct Block {
    std::size_t gathered_row, full_row;
};

template <typename F>
void for_each_block(const LayerDims& d, F&& f) {
    const int c = d.chunk_len();
    for (int r = 0; r < d.cp; ++r)
        for (int j = 0; j < 2; ++j) {
            const int g = j == 0 ? r : 2 * d.cp - 1 - r;  // that rank's chunk j in the sequence
            for (int b = 0; b < d.batch; ++b)
                f(Block{((std::size_t(r) * 2 + j) * d.batch + b) * c, std::size_t(b) * d.seq + std::size_t(g) * c});
        }
}

}  // namespace

DeviceArray<float> gather_sequence_chunks(const LayerContext& ctx, const float* k_local, int width) {
    const auto& d = ctx.dims;
    const std::size_t w = std::size_t(width), rows = std::size_t(d.chunk_len());
    DeviceArray<float> gathered = ctx.floats(std::size_t(d.tokens) * d.cp * w);
    ctx.cp->all_gather(k_local, gathered.data(), std::size_t(d.tokens) * w);
    DeviceArray<float> full = ctx.floats(std::size_t(d.batch) * d.seq * w);
    for_each_block(d, [&](const Block& blk) {
        ctx.backend->copy(full.data() + blk.full_row * w, gathered.data() + blk.gathered_row * w,
                          rows * w * sizeof(float));
    });
    return full;
}

void reduce_scatter_sequence_chunks(const LayerContext& ctx, const float* d_full, float* d_local, int width) {
    const auto& d = ctx.dims;
    const std::size_t w = std::size_t(width), rows = std::size_t(d.chunk_len());
    DeviceArray<float> ordered = ctx.floats(std::size_t(d.tokens) * d.cp * w);
    for_each_block(d, [&](const Block& blk) {
        ctx.backend->copy(ordered.data() + blk.gathered_row * w, d_full + blk.full_row * w, rows * w * sizeof(float));
    });
    DeviceArray<float> mine = ctx.floats(std::size_t(d.tokens) * w);
    ctx.cp->reduce_scatter(ordered.data(), mine.data(), std::size_t(d.tokens) * w);
    ctx.backend->add_inplace(d_local, mine.data(), mine.size());
}

namespace {

// One query block: chunk j of batch element b, padded in front to its end position L.
struct QueryBlock {
    std::size_t local_row;  // first row of the chunk in the local layout
    int L;                  // rows of the padded block = chunk position + chunk length
    std::size_t kv_row;     // first row of batch element b in the full sequence
};

template <typename F>
void for_each_query_block(const LayerDims& d, F&& f) {
    const int c = d.chunk_len();
    for (int j = 0; j < d.num_chunks(); ++j)
        for (int b = 0; b < d.batch; ++b)
            f(j, b, QueryBlock{(std::size_t(j) * d.batch + b) * c, d.chunk_position(j) + c, std::size_t(b) * d.seq});
}

// Offset of block (j, b)'s log-sum-exps in the local layout [chunk][batch][head][position].
std::size_t lse_offset(const LayerDims& d, int j, int b) {
    return (std::size_t(j) * d.batch + b) * d.heads * d.chunk_len();
}

}  // namespace

void context_parallel_attention_forward(const LayerContext& ctx, float* out, float* lse, const float* q,
                                        const float* k_full, const float* v_full) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const int c = d.chunk_len(), H = d.heads;
    const std::size_t qw = std::size_t(H) * d.head_dim, kw = std::size_t(d.kv_heads) * d.head_dim;
    if (be.has_prefix_attention()) {  // each chunk's c queries against the L keys up to its end
        for_each_query_block(d, [&](int j, int b, const QueryBlock& blk) {
            be.prefix_attention_forward(out + blk.local_row * qw, lse + lse_offset(d, j, b), q + blk.local_row * qw,
                                        k_full + blk.kv_row * kw, v_full + blk.kv_row * kw, 1, c, blk.L, H,
                                        d.kv_heads, d.head_dim);
        });
        return;
    }
    for_each_query_block(d, [&](int j, int b, const QueryBlock& blk) {
        const std::size_t pad = std::size_t(blk.L - c);
        DeviceArray<float> q_pad = ctx.floats(std::size_t(blk.L) * qw);
        be.fill_zero(q_pad.data(), pad * qw * sizeof(float));
        be.copy(q_pad.data() + pad * qw, q + blk.local_row * qw, std::size_t(c) * qw * sizeof(float));
        DeviceArray<float> out_pad = ctx.floats(std::size_t(blk.L) * qw);
        DeviceArray<float> lse_pad = ctx.floats(std::size_t(H) * blk.L);
        be.attention_forward(out_pad.data(), lse_pad.data(), q_pad.data(), k_full + blk.kv_row * kw,
                             v_full + blk.kv_row * kw, 1, blk.L, H, d.kv_heads, d.head_dim);
        be.copy(out + blk.local_row * qw, out_pad.data() + pad * qw, std::size_t(c) * qw * sizeof(float));
        for (int h = 0; h < H; ++h)
            be.copy(lse + lse_offset(d, j, b) + std::size_t(h) * c, lse_pad.data() + std::size_t(h) * blk.L + pad,
                    std::size_t(c) * sizeof(float));
    });
}

void context_parallel_attention_backward(const LayerContext& ctx, float* dq, float* dk_full, float* dv_full,
                                         const float* dout, const float* q, const float* k_full,
                                         const float* v_full, const float* out, const float* lse) {
    const auto& d = ctx.dims;
    Backend& be = *ctx.backend;
    const int c = d.chunk_len(), H = d.heads;
    const std::size_t qw = std::size_t(H) * d.head_dim, kw = std::size_t(d.kv_heads) * d.head_dim;
    if (be.has_prefix_attention()) {
        for_each_query_block(d, [&](int j, int b, const QueryBlock& blk) {
            const std::size_t qr = blk.local_row * qw, kr = blk.kv_row * kw;
            be.prefix_attention_backward(dq + qr, dk_full + kr, dv_full + kr, dout + qr, q + qr, k_full + kr,
                                         v_full + kr, out + qr, lse + lse_offset(d, j, b), 1, c, blk.L, H, d.kv_heads,
                                         d.head_dim);
        });
        return;
    }
    for_each_query_block(d, [&](int j, int b, const QueryBlock& blk) {
        const std::size_t pad = std::size_t(blk.L - c), n = std::size_t(blk.L) * qw;
        // Padded copies: zero rows in front of q, out, dout and lse (exp(0·k - 0) stays finite).
        auto padded = [&](const float* src) {
            DeviceArray<float> a = ctx.floats(n);
            be.fill_zero(a.data(), pad * qw * sizeof(float));
            be.copy(a.data() + pad * qw, src + blk.local_row * qw, std::size_t(c) * qw * sizeof(float));
            return a;
        };
        DeviceArray<float> q_pad = padded(q), out_pad = padded(out), dout_pad = padded(dout);
        DeviceArray<float> lse_pad = ctx.floats(std::size_t(H) * blk.L, true);
        for (int h = 0; h < H; ++h)
            be.copy(lse_pad.data() + std::size_t(h) * blk.L + pad, lse + lse_offset(d, j, b) + std::size_t(h) * c,
                    std::size_t(c) * sizeof(float));
        DeviceArray<float> dq_pad = ctx.floats(n, true);
        be.attention_backward(dq_pad.data(), dk_full + blk.kv_row * kw, dv_full + blk.kv_row * kw, dout_pad.data(),
                              q_pad.data(), k_full + blk.kv_row * kw, v_full + blk.kv_row * kw, out_pad.data(),
                              lse_pad.data(), 1, blk.L, H, d.kv_heads, d.head_dim);
        be.add_inplace(dq + blk.local_row * qw, dq_pad.data() + pad * qw, std::size_t(c) * qw);
    });
}

}  // namespace tessel
